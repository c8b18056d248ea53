// `dltune serve`: the host as a Prometheus target.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "options/options.hpp"
#include "serve/exporter.hpp"
#include "serve/http_module.hpp"
#include "serve/session.hpp"

namespace dltune::cli {

namespace {

class ServeCommand : public Command {
 public:
  ServeCommand(CLI::App& app, GlobalOptions&) : Command(app, "serve") {
    options::add_value(*sub_, "--listen", listen_);
    options::add_value(*sub_, "--web-config", web_config_);
    options::add_duration(*sub_, "--interval", choice_.interval_ns, 100'000'000, 3'600'000'000'000);
    options::add_list(*sub_, "--cgroup", choice_.cgroups, "PATH");
    options::add_flag(*sub_, "--no-gpus", no_gpus_);
    options::add_flag(*sub_, "--no-host-metrics", no_host_metrics_);
    options::add_duration(*sub_, "--check-interval", choice_.check_interval_ns, 1'000'000'000,
                          86'400'000'000'000);
    options::add_flag(*sub_, "--no-check", choice_.no_check);
    options::add_value(*sub_, "-p,--profile", choice_.profile);
    options::add_flag(*sub_, "--once", once_);
    options::add_flag(*sub_, "--json", json_);
    options::add_integer(*sub_, "--max-connections", max_connections_, 1, 256);
    options::add_integer(*sub_, "--max-connections-per-address", per_address_, 1, 256);
    options::add_value(*sub_, "--user", user_);
    options::add_flag(*sub_, "--as-root", as_root_);
    options::add_value(*sub_, "--root", root_dir_);
  }

  int execute() override {
    auto root = open_root("serve", root_dir_);
    if (!root) return kExitBadInput;
    root_ = std::move(*root);
    auto options = exporter_options();
    if (!options) return refuse(options.error().message());
    // Every option is checked, --once or not: a bad value is refused even where it would not
    // be used, so that a command line tried with --once works without it.
    auto address = serve::parse_listen(listen_);
    if (!address) return refuse(address.error().message());
    std::optional<serve::WebConfig> web;
    if (!web_config_.empty()) {
      auto module = serve::http_module();
      if (!module) return failure(module.error().message());
      auto loaded = (*module)->load_web_config(web_config_);
      if (!loaded) return refuse(loaded.error().message());
      web = std::move(*loaded);
    }
    if (once_) return once(std::move(*options));
    if (json_) return refuse("--json goes with --once (a scrape is always the text format)");
    return serve(std::move(*options), *address, std::move(web));
  }

 private:
  Result<serve::ExporterOptions> exporter_options() {
    choice_.gpus = !no_gpus_;
    if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY"); lib != nullptr)
      choice_.nvml_library = lib;
    if (const char* node = std::getenv("NODE_NAME"); node != nullptr) choice_.node_name = node;
    auto options = serve::exporter_options(root_, choice_);
    if (options && no_host_metrics_) options->host = serve::HostFamilies::kBeyondNodeExporter;
    return options;
  }

  void tell(const std::vector<std::string>& messages) const {
    for (const auto& m : messages) say(m);
  }

  int once(serve::ExporterOptions options) {
    auto exporter =
        serve::sample_once(root_, std::move(options), [this](const auto& m) { tell(m); });
    if (!exporter) return failure(exporter.error().message());
    if (json_) {
      fmt::print("{}\n", (*exporter)->json().dump(2));
    } else {
      std::string tail;
      serve::TextSink sink(tail);
      serve::render_scrapes(0, sink);
      fmt::print("{}{}", (*exporter)->exposition()->text, tail);
    }
    return kExitOk;
  }

  int serve(serve::ExporterOptions options, const serve::ListenAddress& address,
            std::optional<serve::WebConfig> web) {
    serve::ServeRequest request;
    request.address = address;
    request.web = std::move(web);
    request.limits.workers = static_cast<std::size_t>(max_connections_);
    if (per_address_ > 0)
      request.limits.connections_per_address = static_cast<std::size_t>(per_address_);
    const char* sudo = std::getenv("SUDO_USER");
    auto who = serve::choose_identity(::geteuid(), user_, as_root_, sudo != nullptr ? sudo : "");
    if (!who) return refuse(who.error().message());
    request.become = who->become;
    request.say = [this](const std::string& what) {
      say(what);
      std::fflush(stderr);
    };
    if (who->warning) request.say(*who->warning);
    request.tell = [this](const std::vector<std::string>& m) { tell(m); };
    auto served = serve::serve_until_stopped(root_, std::move(options), request);
    if (!served)
      return served.error().bind ? refuse(served.error().error.message())
                                 : failure(served.error().error.message());
    return kExitOk;
  }

  std::optional<std::string> root_dir_;
  host::Root root_;
  std::string listen_ = "127.0.0.1:9464";
  serve::ExporterChoice choice_;
  bool no_gpus_ = false, no_host_metrics_ = false, once_ = false, json_ = false, as_root_ = false;
  std::string web_config_;
  std::string user_;
  int max_connections_ = 8;
  int per_address_ = 0;  // 0: half of max_connections_ (HttpLimits)
};

}  // namespace

std::unique_ptr<Command> make_serve_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<ServeCommand>(app, global);
}

}  // namespace dltune::cli

// `dltune serve`: the host as a Prometheus target.
#include <unistd.h>

#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "options/options.hpp"
#include "serve/exporter.hpp"
#include "serve/serve_choices.hpp"

namespace dltune::cli {

namespace {

class ServeCommand : public Command {
 public:
  ServeCommand(CLI::App& app, GlobalOptions&) : Command(app, "serve") {
    auto& c = choices_;
    options::add_value(*sub_, "--listen", c.listen);
    options::add_value(*sub_, "--web-config", c.web_config);
    options::add_duration(*sub_, "--interval", c.exporter.interval_ns, 100'000'000,
                          3'600'000'000'000);
    options::add_list(*sub_, "--cgroup", c.exporter.cgroups, "PATH");
    options::add_flag(*sub_, "--no-gpus", c.no_gpus);
    options::add_flag(*sub_, "--no-host-metrics", c.no_host_metrics);
    options::add_duration(*sub_, "--check-interval", c.exporter.check_interval_ns, 1'000'000'000,
                          86'400'000'000'000);
    options::add_flag(*sub_, "--no-check", c.exporter.no_check);
    options::add_value(*sub_, "-p,--profile", c.exporter.profile);
    options::add_flag(*sub_, "--once", c.once);
    options::add_flag(*sub_, "--json", c.json);
    options::add_integer(*sub_, "--max-connections", c.max_connections, 1, 256);
    options::add_integer(*sub_, "--max-connections-per-address", c.per_address, 1, 256);
    options::add_value(*sub_, "--user", c.user);
    options::add_flag(*sub_, "--as-root", c.as_root);
    options::add_value(*sub_, "--root", root_dir_);
  }

  int execute() override {
    auto root = open_root("serve", root_dir_);
    if (!root) return kExitBadInput;
    root_ = std::move(*root);
    auto setup = serve::setup_serve(root_, choices_, ::geteuid(), process_environment());
    if (!setup) return failed(setup.error());
    if (choices_.once) return once(std::move(setup->options));
    if (setup->warning) say(*setup->warning);
    return serve(std::move(*setup));
  }

 private:
  void tell(const std::vector<std::string>& messages) const {
    for (const auto& m : messages) say(m);
  }

  int once(serve::ExporterOptions options) {
    auto exporter =
        serve::sample_once(root_, std::move(options), [this](const auto& m) { tell(m); });
    if (!exporter) return failure(exporter.error().message());
    if (choices_.json) {
      fmt::print("{}\n", (*exporter)->json().dump(2));
    } else {
      std::string tail;
      serve::TextSink sink(tail);
      serve::render_scrapes(0, sink);
      fmt::print("{}{}", (*exporter)->exposition()->text, tail);
    }
    return kExitOk;
  }

  int serve(serve::ServeSetup setup) {
    setup.request.say = [this](const std::string& what) {
      say(what);
      std::fflush(stderr);
    };
    setup.request.tell = [this](const std::vector<std::string>& m) { tell(m); };
    auto served = serve::serve_until_stopped(root_, std::move(setup.options), setup.request);
    if (!served)
      return served.error().bind ? refuse(served.error().error.message())
                                 : failure(served.error().error.message());
    return kExitOk;
  }

  std::optional<std::string> root_dir_;
  host::Root root_;
  serve::ServeChoices choices_;
};

}  // namespace

std::unique_ptr<Command> make_serve_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<ServeCommand>(app, global);
}

}  // namespace dltune::cli

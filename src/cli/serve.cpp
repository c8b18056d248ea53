// `dltune serve`: the host as a Prometheus target.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/text.hpp"
#include "options/options.hpp"
#include "serve/exporter.hpp"
#include "serve/http.hpp"
#include "serve/session.hpp"

namespace dltune::cli {

namespace {

class ServeCommand : public Command {
 public:
  ServeCommand(CLI::App& app, GlobalOptions&) {
    sub_ = options::add_command(app, "serve");
    sub_->add_option("--listen", listen_,
                     "HOST:PORT to listen on (default 127.0.0.1:9464; :9464 is every address)")
        ->type_name("HOST:PORT");
    options::add_duration(*sub_, "--interval", choice_.interval_ns, 100'000'000, 3'600'000'000'000,
                          "Sampling interval (default 5s)");
    options::add_list(*sub_, "--cgroup", choice_.cgroups,
                      "Also export these cgroups (paths as in /proc/PID/cgroup)", "PATH");
    sub_->add_flag("--no-gpus", no_gpus_, "Do not load NVML");
    options::add_duration(*sub_, "--check-interval", choice_.check_interval_ns, 1'000'000'000,
                          86'400'000'000'000, "How often the check runs (default 5m)");
    sub_->add_flag("--no-check", choice_.no_check,
                   "Do not run the check (no dltune_check_* metrics)");
    sub_->add_option("-p,--profile", choice_.profile,
                     "The check's profile, a name or a TOML file (default: training)")
        ->type_name("PROFILE");
    sub_->add_flag("--once", once_, "Print the metrics once on stdout and exit");
    sub_->add_flag("--json", json_, "With --once: print JSON (docs/json.md, \"dltune.serve/1\")");
    options::add_integer(*sub_, "--max-connections", max_connections_, 1, 256,
                         "Connections served at once (default 8)");
    sub_->add_option("--user", user_,
                     "Started as root: the user serve becomes once it has bound its address "
                     "(default: the sudo user, else nobody)")
        ->type_name("NAME");
    sub_->add_flag("--as-root", as_root_,
                   "Started as root: keep root (serve needs none; not recommended)");
    sub_->add_option("--root", root_dir_,
                     "Read the host mounted at DIR (its proc/, sys/, etc/): a container's view "
                     "of the host (deploy/kubernetes)")
        ->type_name("DIR");
  }

  bool selected() const override { return sub_->parsed(); }

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
    if (once_) return once(std::move(*options));
    if (json_) return refuse("--json goes with --once (a scrape is always the text format)");
    return serve(std::move(*options), *address);
  }

 private:
  Result<serve::ExporterOptions> exporter_options() {
    choice_.gpus = !no_gpus_;
    if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY"); lib != nullptr)
      choice_.nvml_library = lib;
    return serve::exporter_options(root_, choice_);
  }

  static void tell(const std::vector<std::string>& messages) {
    for (const auto& m : messages) fmt::print(stderr, "dltune serve: {}\n", m);
  }

  int once(serve::ExporterOptions options) {
    auto exporter = serve::sample_once(root_, std::move(options), tell);
    if (!exporter) return fail_with(exporter.error().message());
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

  int serve(serve::ExporterOptions options, const serve::ListenAddress& address) {
    serve::ServeRequest request;
    request.address = address;
    request.limits.workers = static_cast<std::size_t>(max_connections_);
    request.limits.queued = request.limits.workers;
    const char* sudo = std::getenv("SUDO_USER");
    auto who = serve::choose_identity(::geteuid(), user_, as_root_, sudo != nullptr ? sudo : "");
    if (!who) return refuse(who.error().message());
    request.become = who->become;
    request.say = [](const std::string& what) {
      fmt::print(stderr, "dltune serve: {}\n", what);
      std::fflush(stderr);
    };
    if (who->warning) request.say(*who->warning);
    request.tell = tell;
    auto served = serve::serve_until_stopped(root_, std::move(options), request);
    if (!served)
      return served.error().bind ? refuse(served.error().error.message())
                                 : fail_with(served.error().error.message());
    return kExitOk;
  }

  static int refuse(const std::string& why) {
    fmt::print(stderr, "dltune serve: {}\n", why);
    return kExitBadInput;
  }
  static int fail_with(const std::string& why) {
    fmt::print(stderr, "dltune serve: {}\n", why);
    return kExitFailure;
  }

  CLI::App* sub_ = nullptr;
  std::optional<std::string> root_dir_;
  host::Root root_;
  std::string listen_ = "127.0.0.1:9464";
  serve::ExporterChoice choice_;
  bool no_gpus_ = false, once_ = false, json_ = false, as_root_ = false;
  std::string user_;
  int max_connections_ = 8;
};

}  // namespace

std::unique_ptr<Command> make_serve_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<ServeCommand>(app, global);
}

}  // namespace dltune::cli

// `dltune serve`: the host as a Prometheus target.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "core/text.hpp"
#include "options/options.hpp"
#include "serve/exporter.hpp"
#include "serve/http.hpp"
#include "serve/session.hpp"
#include "settings/catalog.hpp"

namespace dltune::cli {

namespace {

class ServeCommand : public Command {
 public:
  ServeCommand(CLI::App& app, GlobalOptions&) {
    sub_ = options::add_command(app, "serve");
    sub_->add_option("--listen", listen_,
                     "HOST:PORT to listen on (default 127.0.0.1:9464; :9464 is every address)")
        ->type_name("HOST:PORT");
    options::add_duration(*sub_, "--interval", interval_ns_, 100'000'000, 3'600'000'000'000,
                          "Sampling interval (default 5s)");
    options::add_list(*sub_, "--cgroup", cgroups_,
                      "Also export these cgroups (paths as in /proc/PID/cgroup)", "PATH");
    sub_->add_flag("--no-gpus", no_gpus_, "Do not load NVML");
    options::add_duration(*sub_, "--check-interval", check_interval_ns_, 1'000'000'000,
                          86'400'000'000'000, "How often the check runs (default 5m)");
    sub_->add_flag("--no-check", no_check_, "Do not run the check (no dltune_check_* metrics)");
    sub_->add_option("-p,--profile", profile_,
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
    serve::ExporterOptions o;
    o.interval_ns = interval_ns_;
    o.check_interval_ns = check_interval_ns_;
    for (const auto& c : cgroups_)
      if (c.empty() || c[0] != '/' || c.find("..") != std::string::npos)
        return fail("expected an absolute cgroup path as /proc/PID/cgroup shows it (/dltune/run-1)",
                    "--cgroup " + c);
    o.cgroups = cgroups_;
    o.gpus = !no_gpus_;
    if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY"); lib != nullptr) o.nvml_library = lib;
    if (no_check_ && !profile_.empty()) return fail("--profile and --no-check do not go together");
    if (!no_check_) {
      auto profile = settings::load_profile(profile_.empty() ? "training" : profile_, root_,
                                            settings::validate_key);
      if (!profile) return fail("--profile: " + profile.error().message());
      o.profile = std::move(*profile);
    }
    return o;
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
    if (::geteuid() == 0 && !as_root_) {
      const char* sudo = std::getenv("SUDO_USER");
      auto who = serve::unprivileged_user(user_, sudo != nullptr ? sudo : "");
      if (!who) return refuse(who.error().message());
      request.become = *who;
    } else if (::geteuid() == 0) {
      fmt::print(stderr,
                 "dltune serve: running as root (--as-root), which serve does not need (it "
                 "reads /proc, /sys, the cgroup files and NVML, as any user may)\n");
    } else if (!user_.empty()) {
      return refuse("--user " + user_ + ": only root can become another user");
    }
    if (!serve::is_loopback(address))
      fmt::print(stderr,
                 "dltune serve: {} is not a loopback address: anyone who can reach it can read "
                 "these metrics\n",
                 address.text());
    request.say = [](const std::string& what) {
      fmt::print(stderr, "dltune serve: {}\n", what);
      std::fflush(stderr);
    };
    request.tell = tell;
    // SIGINT and SIGTERM are taken synchronously; every thread started inherits them blocked.
    // A client that goes away is no reason to die (SIGPIPE).
    sigset_t stop_set, old;
    ::sigemptyset(&stop_set);
    ::sigaddset(&stop_set, SIGINT);
    ::sigaddset(&stop_set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &stop_set, &old);
    ::signal(SIGPIPE, SIG_IGN);
    auto served = serve::serve_until_signal(root_, std::move(options), request, stop_set);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
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
  std::int64_t interval_ns_ = 5'000'000'000;
  std::int64_t check_interval_ns_ = 300'000'000'000;
  std::vector<std::string> cgroups_;
  std::string profile_;
  bool no_gpus_ = false, no_check_ = false, once_ = false, json_ = false, as_root_ = false;
  std::string user_;
  int max_connections_ = 8;
};

}  // namespace

std::unique_ptr<Command> make_serve_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<ServeCommand>(app, global);
}

}  // namespace dltune::cli

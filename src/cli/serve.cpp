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

constexpr const char* kDescription =
    "Serves this host's metrics for Prometheus: CPUs, memory, swap, pressure (PSI), disks,\n"
    "network, each GPU (utilisation, memory, power, temperature, clocks, throttle reasons, Xid\n"
    "errors, PCIe replays), each job cgroup (those `dltune run` made, found again at every\n"
    "sample, and those named with --cgroup) and the findings of `dltune check` as\n"
    "dltune_check_finding{id,severity,area} gauges. Every metric, its unit and its source is\n"
    "listed in docs/metrics.md; names start with dltune_, values are in base units (seconds,\n"
    "bytes, joules, hertz, ratios 0..1) and counters end in _total.\n\n"
    "The host is sampled every --interval on a thread of its own and the exposition is built\n"
    "once per sample: a scrape only writes it out, it never waits for NVML or for a sample. The\n"
    "check runs at start and every --check-interval, also on its own thread.\n\n"
    "Endpoints: GET /metrics (text format 0.0.4), GET /healthz (200 \"ok\" while the last\n"
    "sample is younger than three intervals, else 503 and why), GET / (links to both). Other\n"
    "paths are 404, other methods 405: serve is read-only and no endpoint takes a body.\n\n"
    "Limits: --max-connections connections are served at once (a fixed pool of threads) and as\n"
    "many wait; beyond that the kernel's listen backlog holds them. A request (line and headers)\n"
    "may be at most 16 KiB and must arrive and be answered within 10 s; an idle connection is\n"
    "closed after 2 s. A slow or hostile client can delay scrapes by that much, no more, and\n"
    "cannot grow serve's threads or memory.\n\n"
    "serve binds 127.0.0.1:9464 unless told otherwise: to be scraped from another machine, give\n"
    "the address explicitly (--listen 0.0.0.0:9464), and mind that anyone who can reach it can\n"
    "read the metrics. serve needs no root: /proc, /sys, the cgroup files and NVML are readable\n"
    "by any user. Started as root, it binds its address and then becomes --user (the sudo\n"
    "user, else nobody) before it samples the host or serves a request; --as-root keeps root.\n\n"
    "--once samples twice (one interval apart, at most 1 s), runs the check, prints the\n"
    "exposition on stdout and exits: for `promtool check metrics` and scripts. With --json it\n"
    "prints the same families as JSON (docs/json.md, \"dltune.serve/1\").\n\n"
    "Examples:\n"
    "  dltune serve\n"
    "  dltune serve --listen 0.0.0.0:9464 --interval 15s --cgroup /slurm/uid_1000/job_42\n"
    "  curl -s http://127.0.0.1:9464/metrics | grep dltune_gpu_utilization_ratio\n"
    "  curl -s http://127.0.0.1:9464/healthz\n"
    "  dltune serve --once | promtool check metrics\n"
    "  dltune serve --root /host --listen 0.0.0.0:9464   (in a container, the host at /host)\n\n"
    "A Prometheus scrape configuration (prometheus.yml):\n"
    "  scrape_configs:\n"
    "    - job_name: dltune\n"
    "      scrape_interval: 15s\n"
    "      static_configs:\n"
    "        - targets: ['gpu-node-1:9464', 'gpu-node-2:9464']\n\n"
    "Exit status: 0 after SIGINT or SIGTERM (or --once done), 1 when sampling cannot start,\n"
    "2 bad input (an option, or an address that cannot be bound; nothing was started).";

class ServeCommand : public Command {
 public:
  ServeCommand(CLI::App& app, GlobalOptions&) {
    sub_ = options::add_command(app, "serve", "Serve the host's metrics to Prometheus (/metrics)",
                                kDescription);
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

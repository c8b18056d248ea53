// `dltune slurm health|task-prolog|efficiency|report|prolog|watch|epilog`: the node health check,
// the TaskProlog, a job's efficiency on a node and across its nodes, and the Prolog/Epilog pair
// that reports on every job (slurm/health.hpp, slurm/task_prolog.hpp, slurm/efficiency.hpp,
// slurm/cluster_report.hpp, slurm/epilog.hpp).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "core/watchdog.hpp"
#include "options/options.hpp"
#include "slurm/cluster_report.hpp"
#include "slurm/efficiency.hpp"
#include "slurm/epilog.hpp"
#include "slurm/health.hpp"
#include "slurm/node.hpp"
#include "slurm/recorded_verdict.hpp"
#include "slurm/task_prolog.hpp"

namespace dltune::cli {

namespace {

volatile sig_atomic_t g_stop = 0;
void on_stop(int) {
  g_stop = 1;
}

std::string env_or(const char* name, const std::string& fallback = {}) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

class SlurmCommand : public Command {
 public:
  explicit SlurmCommand(CLI::App& app) : Command("slurm") {
    sub_ = options::add_command(app, "slurm");
    sub_->require_subcommand(1);
    health_ = options::add_subcommand(*sub_, "health");
    options::add_value(*health_, "--node", request_.node);
    options::add_value(*health_, "-p,--profile", request_.profile);
    options::add_choice(*health_, "--drain-on", drain_on_, {"warn", "critical"});
    options::add_list(*health_, "--only", request_.only, "ID");
    options::add_list(*health_, "--skip", request_.skip, "ID");
    options::add_value(*health_, "--baseline", request_.baseline);
    options::add_flag(*health_, "-n,--dry-run", request_.dry_run);
    options::add_duration(*health_, "--timeout", timeout_ns_, 100'000'000, 3'600'000'000'000);
    options::add_flag(*health_, "--json", json_);
    health_->fallthrough();
    task_prolog_ = options::add_subcommand(*sub_, "task-prolog");
    task_prolog_->fallthrough();
    efficiency_ = options::add_subcommand(*sub_, "efficiency");
    options::add_value(*efficiency_, "job", efficiency_request_.job_id)->required();
    options::add_duration(*efficiency_, "--duration", efficiency_request_.duration_ns,
                          1'000'000'000, 600'000'000'000);
    options::add_value(*efficiency_, "--report-dir", epilog_.report_dir);
    options::add_value(*efficiency_, "--recording", recording_);
    options::add_flag(*efficiency_, "--no-gpus", no_gpus_);
    options::add_flag(*efficiency_, "--json", json_);
    report_ = options::add_subcommand(*sub_, "report");
    options::add_value(*report_, "job", report_request_.job_id)->required();
    options::add_value(*report_, "--prometheus", report_request_.prometheus_url)->required();
    options::add_duration(*report_, "--lookback", report_request_.lookback_ns, 1'000'000'000,
                          366LL * 86'400'000'000'000);
    options::add_value(*report_, "--ca-file", report_request_.ca_file);
    options::add_flag(*report_, "--json", json_);
    prolog_ = options::add_subcommand(*sub_, "prolog");
    options::add_value(*prolog_, "--state-dir", watch_.state_dir);
    options::add_duration(*prolog_, "--interval", watch_.interval_ns, 100'000'000, 60'000'000'000);
    watch_cmd_ = options::add_subcommand(*sub_, "watch");
    options::add_value(*watch_cmd_, "job", watch_.job_id)->required();
    options::add_value(*watch_cmd_, "--state-dir", watch_.state_dir);
    options::add_duration(*watch_cmd_, "--interval", watch_.interval_ns, 100'000'000,
                          60'000'000'000);
    options::add_duration(*watch_cmd_, "--linger", watch_.linger_ns, 1'000'000'000,
                          86'400'000'000'000);
    options::add_flag(*watch_cmd_, "--no-gpus", watch_no_gpus_);
    epilog_cmd_ = options::add_subcommand(*sub_, "epilog");
    options::add_value(*epilog_cmd_, "--job", epilog_.job_id);
    options::add_value(*epilog_cmd_, "--state-dir", epilog_.state_dir);
    options::add_value(*epilog_cmd_, "--report-dir", epilog_.report_dir);
    options::add_value(*epilog_cmd_, "--textfile", epilog_.textfile);
    options::add_flag(*epilog_cmd_, "--json", json_);
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    if (task_prolog_->parsed()) return task_prolog();
    if (efficiency_->parsed()) return efficiency();
    if (report_->parsed()) return report();
    if (prolog_->parsed()) return prolog();
    if (watch_cmd_->parsed()) return watch();
    if (epilog_cmd_->parsed()) return epilog();
    request_.drain_on = *settings::severity_from(drain_on_);
    const std::function<std::string()> last_words = [limit = timeout_ns_] {
      return slurm::watchdog_message(limit);
    };
    const Watchdog watchdog(std::chrono::nanoseconds(timeout_ns_), last_words, kExitBadInput);
    const host::Root root;
    const char* slurmd_node = std::getenv("SLURMD_NODENAME");
    const slurm::HealthContext context{root, collect_options(), this_host(),
                                       slurmd_node != nullptr ? slurmd_node : ""};
    auto report = slurm::health_check(request_, context);
    if (!report) {
      fmt::print(stderr, "dltune slurm health: {}; the node is left as it is\n",
                 report.error().message());
      return kExitBadInput;
    }
    if (json_)
      fmt::print("{}\n", slurm::to_json(*report).dump(2));
    else
      fmt::print("{}", slurm::render_text(*report));
    return report->exit_code();
  }

 private:
  // Always exit 0 with what could be decided: a TaskProlog that fails would stop the user's task.
  static int task_prolog() {
    const host::Root root;
    fmt::print("{}", slurm::render(slurm::task_prolog_here(root)));
    return kExitOk;
  }

  int efficiency() const {
    // The verdict of a recording kept of the job: checked first, so that a wrong file is said
    // before the job is measured.
    std::optional<slurm::RecordedVerdict> verdict;
    if (!recording_.empty()) {
      if (auto ok = slurm::check_job_id(efficiency_request_.job_id); !ok) {
        say("efficiency: " + ok.error().message());
        return kExitBadInput;
      }
      auto v = slurm::recorded_verdict(recording_, efficiency_request_.job_id);
      if (!v) {
        say("efficiency: " + v.error().message());
        return kExitBadInput;
      }
      verdict = std::move(*v);
    }
    auto request = efficiency_request_;
    request.gpus = !no_gpus_;
    if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY")) request.nvml_library = lib;
    auto e = slurm::measure_efficiency(host::Root(), request);
    if (!e) {
      // A job that ended here has the Epilog's report instead.
      if (e.error().bad_input && slurm::check_job_id(efficiency_request_.job_id)) {
        if (auto done = slurm::finished_job_efficiency(epilog_.report_dir,
                                                       efficiency_request_.job_id, json_)) {
          if (verdict && json_) {
            auto doc = inventory::Json::parse(*done);
            doc["bottleneck"] = slurm::to_json(*verdict);
            fmt::print("{}\n", doc.dump(2));
          } else {
            fmt::print("{}{}", *done, verdict ? slurm::render_text(*verdict) : "");
          }
          return kExitOk;
        }
        say(
            fmt::format("efficiency: {}; and no report of it in {} (the Epilog writes one when "
                        "a job ends)",
                        e.error().error.message(), epilog_.report_dir));
        return kExitBadInput;
      }
      say("efficiency: " + e.error().error.message());
      return e.error().bad_input ? kExitBadInput : kExitFailure;
    }
    if (json_) {
      auto doc = slurm::to_json(*e);
      if (verdict) doc["bottleneck"] = slurm::to_json(*verdict);
      fmt::print("{}\n", doc.dump(2));
    } else {
      fmt::print("{}{}", slurm::render_text(*e), verdict ? slurm::render_text(*verdict) : "");
    }
    return kExitOk;
  }

  // One job across its nodes, from Prometheus.
  int report() const {
    auto r = slurm::cluster_report(report_request_);
    if (!r) {
      say("report: " + r.error().error.message());
      return r.error().bad_input ? kExitBadInput : kExitFailure;
    }
    fmt::print("{}", json_ ? slurm::to_json(*r).dump(2) + "\n" : slurm::render_text(*r));
    return kExitOk;
  }

  // The Prolog: the job's watcher, started and left running; exit 0 unless it could not start
  // (the deploy script exits 0 anyway: a failing Prolog drains the node).
  int prolog() {
    watch_.job_id = env_or("SLURM_JOB_ID");
    if (auto ok = slurm::check_job_id(watch_.job_id); !ok) {
      say("prolog: $SLURM_JOB_ID: " + ok.error().message() + " (slurmd sets it for its Prolog)");
      return kExitBadInput;
    }
    if (auto pid = slurm::start_watch(watch_); !pid) {
      say("prolog: " + pid.error().message());
      return kExitFailure;
    }
    return kExitOk;
  }

  int watch() {
    struct sigaction sa = {};
    sa.sa_handler = on_stop;  // no SA_RESTART: the sleep between samples ends at once
    for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &sa, nullptr);
    watch_.gpus = !watch_no_gpus_;
    if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY")) watch_.nvml_library = lib;
    if (auto ok = slurm::watch_job(host::Root(), watch_, &g_stop); !ok) {
      say("watch: " + ok.error().message());
      return slurm::check_job_id(watch_.job_id) ? kExitFailure : kExitBadInput;
    }
    return kExitOk;
  }

  // The Epilog: the job's report, written to --report-dir (the deploy script exits 0 whatever
  // this says: a failing Epilog drains the node).
  int epilog() {
    if (epilog_.job_id.empty()) epilog_.job_id = env_or("SLURM_JOB_ID");
    if (auto ok = slurm::check_job_id(epilog_.job_id); !ok) {
      say("epilog: " + ok.error().message() + " (--job, or $SLURM_JOB_ID as slurmd sets it)");
      return kExitBadInput;
    }
    // By hand, a job that still runs here is refused: its report would end its watch early.
    // Under slurmd (SLURM_SCRIPT_CONTEXT=epilog_slurmd) the job has ended, whatever is left.
    if (env_or("SLURM_SCRIPT_CONTEXT") != "epilog_slurmd")
      if (const auto group = slurm::running_job_group(host::Root(), epilog_.job_id)) {
        say(
            fmt::format("epilog: job {} still runs on this node ({}): the Epilog reports a job "
                        "that has ended; `dltune slurm efficiency {}` measures a running one",
                        epilog_.job_id, *group, epilog_.job_id));
        return kExitBadInput;
      }
    epilog_.user = env_or("SLURM_JOB_USER");
    epilog_.node = env_or("SLURMD_NODENAME", this_host());
    epilog_.exit_code = env_or("SLURM_JOB_EXIT_CODE2");
    const auto& xids = diagnose::builtin_xid_table();
    if (!xids) {
      say("epilog: " + xids.error().message());
      return kExitFailure;
    }
    auto report = slurm::run_epilog(host::Root(), epilog_, *xids);
    if (!report) {
      say("epilog: " + report.error().message());
      return kExitFailure;
    }
    fmt::print("{}", json_ ? slurm::to_json(*report).dump(2) + "\n" : slurm::render_text(*report));
    return kExitOk;
  }

  CLI::App* sub_ = nullptr;
  CLI::App* health_ = nullptr;
  CLI::App* task_prolog_ = nullptr;
  CLI::App* efficiency_ = nullptr;
  CLI::App* report_ = nullptr;
  CLI::App* prolog_ = nullptr;
  CLI::App* watch_cmd_ = nullptr;
  CLI::App* epilog_cmd_ = nullptr;
  slurm::WatchRequest watch_;
  slurm::EpilogRequest epilog_;
  slurm::EfficiencyRequest efficiency_request_;
  slurm::ClusterReportRequest report_request_;
  slurm::HealthRequest request_;
  std::string drain_on_ = "critical";
  std::string recording_;  // efficiency --recording
  bool no_gpus_ = false;   // efficiency --no-gpus
  bool watch_no_gpus_ = false;
  std::int64_t timeout_ns_ = 30'000'000'000;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_slurm_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<SlurmCommand>(app);
}

}  // namespace dltune::cli

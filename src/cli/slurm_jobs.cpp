// `dltune slurm efficiency|report|prolog|watch|epilog`: one job's efficiency on this node and
// across its nodes, and the Prolog/Epilog pair that reports on every job (slurm/
// efficiency_report.hpp, slurm/cluster_report.hpp, slurm/job_watch.hpp, slurm/epilog.hpp).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/environment.hpp"
#include "core/json.hpp"
#include "options/options.hpp"
#include "slurm/cluster_report.hpp"
#include "slurm/efficiency_report.hpp"
#include "slurm/epilog.hpp"
#include "slurm/node.hpp"

namespace dltune::cli {

namespace {

std::string slurm_job_id() {
  const char* v = std::getenv("SLURM_JOB_ID");
  return v != nullptr ? v : "";
}

class SlurmJobCommands : public Command {
 public:
  explicit SlurmJobCommands(CLI::App& slurm) : Command(&slurm, "slurm") {
    efficiency_ = options::add_subcommand(*sub_, "efficiency");
    options::add_value(*efficiency_, "job", efficiency_request_.measure.job_id)->required();
    options::add_duration(*efficiency_, "--duration", efficiency_request_.measure.duration_ns,
                          1'000'000'000, 600'000'000'000);
    options::add_value(*efficiency_, "--report-dir", efficiency_request_.report_dir);
    options::add_value(*efficiency_, "--recording", efficiency_request_.recording);
    options::add_flag(*efficiency_, "--no-gpus", no_gpus_);
    options::add_flag(*efficiency_, "--json", efficiency_request_.json);
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

  bool selected() const override {
    return efficiency_->parsed() || report_->parsed() || prolog_->parsed() ||
           watch_cmd_->parsed() || epilog_cmd_->parsed();
  }

  int execute() override {
    if (efficiency_->parsed()) return efficiency();
    if (report_->parsed()) return report();
    if (prolog_->parsed()) return prolog();
    if (watch_cmd_->parsed()) return watch();
    return epilog();
  }

 private:
  int efficiency() const {
    auto request = efficiency_request_;
    request.measure.gpus = !no_gpus_;
    request.measure.nvml_library = collect_options().nvml_library;
    auto out = slurm::efficiency_report(host::Root(), request);
    if (!out) return failed(out.error(), "efficiency: ");
    fmt::print("{}", *out);
    return kExitOk;
  }

  // One job across its nodes, from Prometheus.
  int report() const {
    auto r = slurm::cluster_report(report_request_);
    if (!r) return failed(r.error(), "report: ");
    fmt::print("{}", json_ ? slurm::to_json(*r).dump(2) + "\n" : slurm::render_text(*r));
    return kExitOk;
  }

  // The Prolog: the job's watcher, started and left running; exit 0 unless it could not start
  // (the deploy script exits 0 anyway: a failing Prolog drains the node).
  int prolog() {
    watch_.job_id = slurm_job_id();
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
    watch_.gpus = !watch_no_gpus_;
    watch_.nvml_library = collect_options().nvml_library;
    if (auto ok = slurm::watch_until_stopped(host::Root(), watch_); !ok) {
      say("watch: " + ok.error().message());
      return slurm::check_job_id(watch_.job_id) ? kExitFailure : kExitBadInput;
    }
    return kExitOk;
  }

  // The Epilog: the job's report, written to --report-dir (the deploy script exits 0 whatever
  // this says: a failing Epilog drains the node).
  int epilog() {
    auto request = slurm::epilog_request(host::Root(), epilog_, process_environment(), host_name());
    if (!request) {
      say("epilog: " + request.error().message());
      return kExitBadInput;
    }
    const auto& xids = diagnose::builtin_xid_table();
    if (!xids) {
      say("epilog: " + xids.error().message());
      return kExitFailure;
    }
    auto report = slurm::run_epilog(host::Root(), *request, *xids);
    if (!report) {
      say("epilog: " + report.error().message());
      return kExitFailure;
    }
    fmt::print("{}", json_ ? slurm::to_json(*report).dump(2) + "\n" : slurm::render_text(*report));
    return kExitOk;
  }

  CLI::App* efficiency_ = nullptr;
  CLI::App* report_ = nullptr;
  CLI::App* prolog_ = nullptr;
  CLI::App* watch_cmd_ = nullptr;
  CLI::App* epilog_cmd_ = nullptr;
  slurm::WatchRequest watch_;
  slurm::EpilogRequest epilog_;
  slurm::EfficiencyReportRequest efficiency_request_;
  slurm::ClusterReportRequest report_request_;
  bool no_gpus_ = false;  // efficiency --no-gpus
  bool watch_no_gpus_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_slurm_job_commands(CLI::App& slurm) {
  return std::make_unique<SlurmJobCommands>(slurm);
}

}  // namespace dltune::cli

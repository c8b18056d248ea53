// `dltune slurm health|task-prolog|efficiency|report|prolog|watch|epilog`: the node health check,
// the TaskProlog, a job's efficiency on a node and across its nodes, and the Prolog/Epilog pair
// that reports on every job (slurm/health.hpp, slurm/task_prolog.hpp, slurm/efficiency.hpp,
// slurm/cluster_report.hpp, slurm/epilog.hpp).
#include <cstdio>
#include <cstdlib>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "options/options.hpp"
#include "slurm/health.hpp"
#include "slurm/task_prolog.hpp"

namespace dltune::cli {

namespace {

class SlurmCommand : public Command {
 public:
  explicit SlurmCommand(CLI::App& app) : Command(app, "slurm") {
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
    jobs_ = make_slurm_job_commands(*sub_);
  }

  int execute() override {
    if (task_prolog_->parsed()) return task_prolog();
    if (jobs_->selected()) return jobs_->execute();
    request_.drain_on = *settings::severity_from(drain_on_);
    const host::Root root;
    const char* slurmd_node = std::getenv("SLURMD_NODENAME");
    const slurm::HealthContext context{root, collect_options(), host_name(),
                                       slurmd_node != nullptr ? slurmd_node : ""};
    auto report = slurm::health_check_within(request_, context, timeout_ns_, kExitBadInput);
    if (!report) {
      fmt::print(stderr, "dltune slurm health: {}; the node is left as it is\n",
                 report.error().message());
      return kExitBadInput;
    }
    fmt::print("{}", json_ ? slurm::to_json(*report).dump(2) + "\n" : slurm::render_text(*report));
    return report->exit_code();
  }

 private:
  // Always exit 0 with what could be decided: a TaskProlog that fails would stop the user's task.
  static int task_prolog() {
    const host::Root root;
    fmt::print("{}", slurm::render(slurm::task_prolog_here(root)));
    return kExitOk;
  }

  CLI::App* health_ = nullptr;
  CLI::App* task_prolog_ = nullptr;
  std::unique_ptr<Command> jobs_;  // efficiency, report, prolog, watch, epilog (slurm_jobs.cpp)
  slurm::HealthRequest request_;
  std::string drain_on_ = "critical";
  std::int64_t timeout_ns_ = 30'000'000'000;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_slurm_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<SlurmCommand>(app);
}

}  // namespace dltune::cli

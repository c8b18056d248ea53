// `dltune slurm health|task-prolog`: the node health check and the TaskProlog Slurm runs
// (slurm/health.hpp, slurm/task_prolog.hpp).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/text.hpp"
#include "core/watchdog.hpp"
#include "options/options.hpp"
#include "slurm/efficiency.hpp"
#include "slurm/health.hpp"
#include "slurm/task_prolog.hpp"

namespace dltune::cli {

namespace {

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
    options::add_flag(*efficiency_, "--json", json_);
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    if (task_prolog_->parsed()) return task_prolog();
    if (efficiency_->parsed()) return efficiency();
    request_.drain_on = *settings::severity_from(drain_on_);
    const Watchdog watchdog(
        std::chrono::nanoseconds(timeout_ns_),
        fmt::format("dltune slurm health: no verdict within {}: the node is left as it is\n",
                    text::human_duration(static_cast<double>(timeout_ns_) / 1e9)),
        kExitBadInput);
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
    auto e = slurm::measure_efficiency(host::Root(), efficiency_request_);
    if (!e) {
      say("efficiency: " + e.error().error.message());
      return e.error().bad_input ? kExitBadInput : kExitFailure;
    }
    fmt::print("{}", json_ ? slurm::to_json(*e).dump(2) + "\n" : slurm::render_text(*e));
    return kExitOk;
  }

  CLI::App* sub_ = nullptr;
  CLI::App* health_ = nullptr;
  CLI::App* task_prolog_ = nullptr;
  CLI::App* efficiency_ = nullptr;
  slurm::EfficiencyRequest efficiency_request_;
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

// `dltune slurm health|task-prolog`: the node health check and the TaskProlog Slurm runs
// (slurm/health.hpp, slurm/task_prolog.hpp).
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/text.hpp"
#include "options/options.hpp"
#include "slurm/health.hpp"
#include "slurm/task_prolog.hpp"

namespace dltune::cli {

namespace {

// Ends the process with exit 2 when the work it guards takes longer than `limit`: a health check
// that hangs (a stuck NVML call, a file system that does not answer) says so and changes nothing,
// instead of holding slurmd's health check slot.
class Watchdog {
 public:
  Watchdog(std::chrono::nanoseconds limit, std::string message)
      : thread_([this, limit, message = std::move(message)] {
          std::unique_lock lock(mutex_);
          if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
          std::fputs(message.c_str(), stderr);
          std::fflush(stderr);
          std::_Exit(kExitBadInput);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

class SlurmCommand : public Command {
 public:
  explicit SlurmCommand(CLI::App& app) {
    sub_ = options::add_command(app, "slurm");
    sub_->require_subcommand(1);
    health_ = sub_->add_subcommand(
        "health", "Judge this node; drain it when unhealthy, resume it when dltune drained it");
    options::add_value(*health_, "--node", request_.node);
    options::add_value(*health_, "-p,--profile", request_.profile);
    options::add_choice(*health_, "--drain-on", drain_on_, {"warn", "critical"});
    options::add_list(*health_, "--only", request_.only, "ID");
    options::add_list(*health_, "--skip", request_.skip, "ID");
    options::add_flag(*health_, "-n,--dry-run", request_.dry_run);
    options::add_duration(*health_, "--timeout", timeout_ns_, 100'000'000, 3'600'000'000'000);
    options::add_flag(*health_, "--json", json_);
    health_->fallthrough();
    task_prolog_ = sub_->add_subcommand(
        "task-prolog",
        "Print the export lines that give a task dltune's defaults (Slurm's TaskProlog)");
    task_prolog_->fallthrough();
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    if (task_prolog_->parsed()) return task_prolog();
    request_.drain_on = *settings::severity_from(drain_on_);
    const Watchdog watchdog(
        std::chrono::nanoseconds(timeout_ns_),
        fmt::format("dltune slurm health: no verdict within {}: the node is left as it is\n",
                    text::human_duration(static_cast<double>(timeout_ns_) / 1e9)));
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

  CLI::App* sub_ = nullptr;
  CLI::App* health_ = nullptr;
  CLI::App* task_prolog_ = nullptr;
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

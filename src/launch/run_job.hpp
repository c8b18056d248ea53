#pragma once
// `run` as a library call: a training job in a cgroup of its own, on the CPUs and memory nearest
// its GPUs, as the invoking user, with a summary at its end. The command line (cli/run.cpp) only
// turns options into a RunRequest and prints the RunSummary; a recording of the job, when asked
// for, hangs on the hooks.
#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "launch/job_plan.hpp"
#include "launch/rate_pattern.hpp"
#include "launch/summary.hpp"
#include "settings/profile.hpp"

namespace dltune::launch {

struct RunRequest {
  RunOptions options;
  std::optional<settings::Profile> profile;        // its limits.nofile and limits.memlock
  std::map<std::string, std::string> environment;  // dltune's own; the job's starts from it
  bool keep_root = false;  // under sudo, run the job as root rather than the sudo user
  bool watch_stdout = false;
  std::optional<RatePattern> rate_regex;  // the job's rate, first group, on its output lines
  std::string unique;                     // makes the cgroup's default name unique
  // The job's output (stdout and stderr, its stdin then /dev/null) into this descriptor rather
  // than dltune's own (SpawnRequest::output_fd).
  std::optional<int> output_fd;
  bool stdout_to_stderr = false;  // SpawnRequest::stdout_to_stderr
};

// --rate-regex: an ECMAScript expression with a group (the job's rate); the error names the
// option and the pattern.
[[nodiscard]] Result<RatePattern> compile_rate_regex(const std::string& pattern);

// Where in its life the job is, for whoever watches it (a recording). Each is optional.
struct JobHooks {
  // Planned, root checked, nothing created yet: an error refuses the run (nothing started).
  std::function<Result<void>(const JobPlan& plan)> planned;
  // The job runs, inside its cgroup.
  std::function<void(pid_t pid)> started;
  // The job has ended; its cgroup is still there.
  std::function<void()> ended;
};

struct RunFailure {
  enum class Stage {
    kRefused,  // bad input or not root: nothing was done (exit 2)
    kSetUp,    // the kernel refused a limit or a group: nothing was left behind (exit 1)
    kStart,    // the job could not be started or waited for (exit 2)
  };
  Stage stage = Stage::kRefused;
  Error error;
};

// Plans the job (plan_job), checks who runs it, creates its cgroup and reads the limits back,
// starts it (spawn_and_wait: the child joins the cgroup before exec) and waits for it; reads the
// cgroup's statistics and the OOM kills the kernel logged for it, and removes the cgroup.
[[nodiscard]] tl::expected<RunSummary, RunFailure> run_job(const host::Root& root,
                                                           const inventory::HostFacts& facts,
                                                           RunRequest request,
                                                           const JobHooks& hooks = {});

}  // namespace dltune::launch

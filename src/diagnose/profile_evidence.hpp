#pragma once
// What a profile's verdict carries beside the OS signals: the Python stacks of the job's main
// thread, of its DataLoader workers and of each rank (JSON "python" and a note each), and the
// job's own environment variables judged against this host (JSON "environment" and a note for
// each warning). `profile` adds them to the request it judges.
#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/profile_job.hpp"
#include "diagnose/py_sampler.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"

namespace dltune::diagnose {

// The main thread's stacks: "python" in `extra` and one note with the shares of the activities
// and the most frequent stack. Nothing without samples.
void add_python_evidence(const PySummary& py, nlohmann::json& extra,
                         std::vector<std::string>& notes);
// A sample of the DataLoader workers' stacks: "python.workers" and a note each.
void add_python_workers(const std::vector<std::pair<pid_t, PySummary>>& workers,
                        nlohmann::json& extra, std::vector<std::string>& notes);

// Each rank's own stacks, for its own verdict.
struct RankEvidence {
  std::map<pid_t, nlohmann::json> extra;
  std::map<pid_t, std::vector<std::string>> notes;
};
[[nodiscard]] RankEvidence rank_evidence(const std::vector<std::pair<pid_t, PySummary>>& ranks);

// The job's NCCL, CUDA, PyTorch and thread variables (/proc/PID/environ) against this host's
// facts (collected with `collect`, launch_only with the network): "environment" in `extra`, a
// note for each warning; a note that says why when the environment cannot be read (another
// user's process without root).
void add_environment_evidence(const host::Root& root, pid_t pid,
                              const inventory::CollectOptions& collect, nlohmann::json& extra,
                              std::vector<std::string>& notes);

// A recording judged as `profile RECORDING` judges it: its windows, the Python stacks it kept
// (the main thread's and each rank's), its job's errors and its notes after the request's; the
// start-up left out is `skip_ns`, else kLaunchedSkipNs for a job dltune started.
[[nodiscard]] ProfileResult<ProfileReport> judge_recording(const Rules& rules,
                                                           const std::string& path,
                                                           JudgeRequest request,
                                                           std::optional<std::int64_t> skip_ns);
// A live sample judged as `profile --pid` judges it: with its stacks (main thread, workers,
// ranks) and, for `pid` (0: none, a Slurm job's group), that process's variables judged
// against this host (facts collected with `collect`). The source is "WHAT, sampled for N s".
[[nodiscard]] ProfileResult<ProfileReport> judge_live(const host::Root& root, const Rules& rules,
                                                      LiveJob job, const std::string& what,
                                                      pid_t pid,
                                                      const inventory::CollectOptions& collect,
                                                      JudgeRequest request);

// `profile --pid PID` or `--slurm-job JOB`: the job found (a Slurm job's processes are those of
// its cgroup on this node), sampled for the duration (sample_live) and judged (judge_live).
struct LiveProfile {
  pid_t pid = 0;
  std::string slurm_job;
  std::int64_t interval_ns = 250'000'000;
  std::optional<std::int64_t> duration_ns;  // default: LiveRequest's
  std::int64_t skip_ns = 0;                 // start-up left out
  bool gpus = true;
  bool python_stacks = true;
  std::string nvml_library;
  // Once sampling starts: what is sampled ("pid 42", "Slurm job 7 (/slurm/uid_0/job_7)") and for
  // how long.
  std::function<void(const std::string& what, std::int64_t duration_ns)> on_start;
};
[[nodiscard]] ProfileResult<ProfileReport> profile_live(const host::Root& root, const Rules& rules,
                                                        const LiveProfile& live);

}  // namespace dltune::diagnose

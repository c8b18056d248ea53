#pragma once
// The summary `dltune run` prints when the job ends: what ran where, under which
// limits, and what happened: wall and CPU time, peak memory, OOM kills, CPU throttling, the
// job's own progress rate.
#include <optional>
#include <string>
#include <vector>

#include "audit/env_rules.hpp"
#include "core/json_fwd.hpp"
#include "host/parse/kmsg.hpp"
#include "launch/cgroup.hpp"
#include "launch/job_interrupts.hpp"
#include "launch/job_plan.hpp"
#include "launch/slurm_step.hpp"
#include "launch/spawn.hpp"

namespace dltune::launch {

// One rank of `run --nproc N` (rank_plan.hpp): where it ran and how it ended.
struct RankSummary {
  int rank = 0;
  std::vector<int> cpus, numa_nodes;
  std::optional<int> gpu;
  SpawnResult result;    // its own exit, times and progress (wall: from the start to its exit)
  bool stopped = false;  // ended after dltune stopped the ranks, when another one failed
  CgroupStats stats;     // its own group's
  std::string cgroup_dir;
};

struct RunSummary {
  JobPlan plan;
  std::optional<CgroupLimits> verified;  // the limits as the kernel reported them
  std::string cgroup_version;            // "v1", "v2"
  std::vector<std::string> cgroup_dirs;
  std::optional<std::string> user;  // the user the job ran as, when dltune dropped root
  SpawnResult result;
  CgroupStats stats;
  std::vector<host::parse::OomKill> oom_victims;  // from the kernel log, when it was readable
  std::optional<SlurmStep> slurm;  // the Slurm step the job's groups were made inside
  // The ranks dltune started (`--nproc N`), in rank order; `result` is then the job's: the exit of
  // the rank that failed first (0 when none did), the sum of their CPU times, rank 0's progress.
  std::vector<RankSummary> ranks;
  std::optional<int> failed_rank;  // the one that failed first and stopped the others
  std::string master_port;         // the MASTER_PORT the ranks met on
  // The job's NCCL, CUDA, PyTorch and thread variables against this host (audit/env_rules.hpp).
  std::vector<audit::EnvProblem> environment;
  // The device interrupts on the job's CPUs while it ran, when it was bound to CPUs.
  std::optional<JobInterrupts> interrupts;
};

[[nodiscard]] inventory::Json to_json(const RunSummary& s);
[[nodiscard]] std::string render_text(const RunSummary& s);

}  // namespace dltune::launch

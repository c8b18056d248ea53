#pragma once
// The summary `dltune run` prints when the job ends: what ran where, under which
// limits, and what happened: wall and CPU time, peak memory, OOM kills, CPU throttling, the
// job's own progress rate.
#include <optional>
#include <string>
#include <vector>

#include "host/parse/kmsg.hpp"
#include "inventory/json.hpp"
#include "launch/cgroup.hpp"
#include "launch/job_plan.hpp"
#include "launch/slurm_step.hpp"
#include "launch/spawn.hpp"

namespace dltune::launch {

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
};

[[nodiscard]] inventory::Json to_json(const RunSummary& s);
[[nodiscard]] std::string render_text(const RunSummary& s);

}  // namespace dltune::launch

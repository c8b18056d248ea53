#pragma once
// `dltune run` inside a Slurm job (docs/slurm.md "dltune run in a job"): the step this process
// runs in, read from its own groups (/proc/self/cgroup), and where the job's groups go so that
// they are inside the step's, under its limits and counted in its use, rather than beside it.
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/cgroup.hpp"
#include "host/root.hpp"
#include "launch/cgroup.hpp"

namespace dltune::launch {

struct SlurmStep {
  std::string job_id;  // "42"
  std::string step;    // "0", "batch", "interactive"
  // The step's groups by mount point: on v1 this process's own group in each hierarchy Slurm
  // put it in (…/job_42/step_0/task_0: memory, cpuset, cpuacct with jobacct_gather/cgroup);
  // on v2 the step's "user" group, beside the task's (a v2 group that holds processes cannot
  // have children with controllers). Hierarchies Slurm does not use keep dltune's own parent.
  CgroupPlace place;
};

// The Slurm step of the process whose /proc/PID/cgroup is `proc_cgroup` ("/proc/self/cgroup"):
// empty when it is in none (no Slurm, or Slurm without its cgroup plugins). Error: the file
// cannot be read or parsed, or its groups name two different jobs.
[[nodiscard]] Result<std::optional<SlurmStep>> find_slurm_step(
    const host::Root& root, const host::CgroupLayout& layout,
    const std::string& proc_cgroup = "/proc/self/cgroup");

}  // namespace dltune::launch

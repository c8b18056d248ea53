#pragma once
// Slurm's TaskProlog: slurmstepd runs it as the job's user, in each task's environment and CPU
// binding, just before the task, and applies the `export NAME=value` lines it prints (slurm.conf
// TaskProlog, "Prolog and Epilog Guide"). dltune's measured defaults for every task, the same
// as `dltune run` gives a job (launch::plan_environment): thread counts sized to the task's CPUs
// less its DataLoader workers, and the allocator, never replacing what the user set.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"

namespace dltune::slurm {

// The variables a job sets to steer it (docs/slurm.md):
//   DLTUNE_TASK_PROLOG=off   this job wants nothing from dltune (also 0, no, false)
//   DLTUNE_WORKERS=N         DataLoader workers per task: threads = the task's CPUs - N
//   DLTUNE_ALLOCATOR=NAME    glibc-tuned (default), tcmalloc, jemalloc or default
struct TaskPrologResult {
  bool opted_out = false;
  std::vector<std::pair<std::string, std::string>> exports;  // in name order
  std::vector<std::string> notes;  // what was set and kept, and any variable of ours ignored
};

// `env` is the task's environment, `task_cpus` the CPUs it is bound to, `machine_cpus` the
// host's. Never fails: a bad DLTUNE_* value is ignored with a note, so that a typo cannot stop a
// job (the defaults stand).
[[nodiscard]] TaskPrologResult task_prolog(const host::Root& root,
                                           const std::map<std::string, std::string>& env,
                                           int task_cpus, int machine_cpus);

// The same for this process as slurmstepd starts it: its environment (environ), the CPUs it
// is bound to (sched_getaffinity) and the host's online CPUs.
[[nodiscard]] TaskPrologResult task_prolog_here(const host::Root& root);

// What slurmstepd reads: "export NAME=value" lines, then the notes as "# dltune: ..." lines
// (slurmstepd ignores lines that are not export, unset or print).
[[nodiscard]] std::string render(const TaskPrologResult& r);

}  // namespace dltune::slurm

#pragma once
// What `top`, `record` and `profile` sample, chosen from their --pid/--cgroup, said in titles,
// and how: the sampler's options and the file budget the process collector needs.
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "host/root.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

// The scope of `pid` (its tree) or `cgroup` (a path as /proc/PID/cgroup shows it), else
// `otherwise`. Refuses both at once, a PID that is not running and a cgroup path that is not
// absolute or exists in no hierarchy of `root`; the error names the option.
[[nodiscard]] Result<Scope> scope_for(const host::Root& root, pid_t pid, const std::string& cgroup,
                                      Scope::Kind otherwise);

// The cgroup of Slurm job `job_id` on this node (host::discover_slurm_jobs): an error naming the
// job and the jobs this node has when it is not one of them, or a job id that is not a number.
[[nodiscard]] Result<std::string> slurm_job_cgroup(const host::Root& root,
                                                   const std::string& job_id);

// The same with `slurm_job` (--slurm-job): that job's cgroup on this node; refused beside a pid or
// a cgroup.
[[nodiscard]] Result<Scope> scope_for(const host::Root& root, pid_t pid, const std::string& cgroup,
                                      const std::string& slurm_job, Scope::Kind otherwise);

// "HOST  pid 1234 and its tree", "HOST  cgroup /dltune/run-1", "HOST  all processes" or
// "HOST  host", HOST this machine's name: a view's title and a recording's scope (report reads
// the last form back).
[[nodiscard]] std::string describe(const Scope& scope);

// How to sample `scope` every `interval_ns`: NVML (unless !gpus) from `nvml_library` (empty: the
// usual names), at most once a second, since a per-process NVML query can take milliseconds; a
// process's threads, an idle process's counters and a large group's members about once a second,
// context switches of the main process and the ranks only (what diagnose reads).
[[nodiscard]] SamplerOptions sampler_options(const Scope& scope, std::int64_t interval_ns,
                                             bool gpus, const std::string& nvml_library);

// Raises this process's soft RLIMIT_NOFILE to its hard limit, so that the process collector can
// keep the files of every process open (its budget is half the soft limit; 1024 by default holds
// ~250 processes). Only for a process that starts no job: a job would inherit it.
void raise_open_file_limit();

}  // namespace dltune::monitor

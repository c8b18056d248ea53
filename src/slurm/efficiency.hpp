#pragma once
// A Slurm job's efficiency on this node, as seff and Princeton's jobstats give it, with the
// reason and the one action to take: the CPUs it uses against the CPUs it was given (its
// cpuset), its memory peak against its limit (--mem), the OOM kills in its group, and what its
// busiest process does. Read from the job's cgroup (host::discover_slurm_jobs) and its
// processes over a short window; nothing is changed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json_fwd.hpp"
#include "host/cgroup.hpp"
#include "host/root.hpp"
#include "monitor/sample.hpp"

namespace dltune::slurm {

// Where the Epilog writes a finished job's report (slurm efficiency reads it there too).
inline constexpr const char* kJobReportDir = "/var/lib/dltune/slurm/jobs";

struct EfficiencyRequest {
  std::string job_id;
  std::int64_t duration_ns = 5'000'000'000;  // the window the CPU use is measured over
  std::int64_t interval_ns = 250'000'000;
  bool gpus = true;          // read NVML for the GPUs the job's processes use
  std::string nvml_library;  // DLTUNE_NVML_LIBRARY, or empty for the driver's own names
};

// A GPU the job's processes used over the window (NVML's compute processes), or one Slurm gave
// the job that none of them used.
struct JobGpu {
  unsigned index = 0;
  std::string name;
  std::optional<double> utilization_pct;  // the mean of NVML's readings over the window
  std::uint64_t memory_bytes = 0;         // the most the job's processes held on it
  std::optional<std::uint64_t> memory_total_bytes;
  std::size_t readings = 0;
  bool allocated = false;  // Slurm gave it to the job (slurm_gpus_of)
  bool used = true;        // a process of the job held it (false: only given)
};

// What was measured (the facts the judgement reads).
struct JobUse {
  std::string job_id, path;         // the job's group on this node
  int cpus = 0;                     // allocated on this node: its cpuset
  double cpus_used = 0;             // over the window
  double seconds = 0;               // the window
  bool cpu_from_processes = false;  // the group has no CPU accounting: its processes' sum
  std::optional<std::uint64_t> memory_bytes, memory_peak_bytes, memory_limit_bytes;
  std::optional<std::uint64_t> oom_kills;
  std::uint64_t processes = 0;
  // The process that used the most CPU over the window.
  std::string busiest_command;
  int busiest_pid = 0;
  double busiest_cpus = 0;
  int busiest_threads = 0;
  std::vector<JobGpu> gpus;  // those its processes used; empty without GPUs or NVML
};

struct Efficiency {
  JobUse use;
  std::optional<double> cpu_pct;      // cpus_used / cpus
  std::optional<double> memory_pct;   // peak / limit
  std::vector<std::string> findings;  // what is wrong, each with its reason
  std::string action;                 // the one thing to do ("" when the job uses what it has)
};

// The CPUs a job's group was given on this node: its cpuset (v1 cpuset.cpus, v2
// cpuset.cpus.effective); 0 when unknown.
[[nodiscard]] int allocated_cpus(const host::Root& root, const host::CgroupLayout& layout,
                                 const std::string& path);

// The GPUs Slurm gave the job on this node, as its processes' environment says
// (SLURM_JOB_GPUS in the batch step's, SLURM_STEP_GPUS in each srun step's: gres/gpu's global
// indexes, which are NVML's where gres.conf names /dev/nvidiaN by its minor number, as
// AutoDetect=nvml does), read from /proc/PID/environ of at most `max_processes` of `pids` not in
// `tried` (each added to it). Sorted; empty for a job without GPUs or whose environment cannot
// be read (not root).
[[nodiscard]] std::vector<unsigned> slurm_gpus_of(const host::Root& root,
                                                  const std::vector<pid_t>& pids,
                                                  std::vector<pid_t>& tried,
                                                  std::size_t max_processes = 16);

// Adds the GPUs the job's processes (those of `sample`, a sample of the job's group) use in
// `sample` to `gpus`: the memory they hold (the most seen) and the GPU's utilisation (a mean over
// the readings), by GPU index; and each GPU in `allocated` (Slurm's) whether they use it or not.
void add_gpu_use(const monitor::Sample& sample, std::vector<JobGpu>& gpus,
                 const std::vector<unsigned>& allocated = {});

// `index`, `name`, `utilization_pct`, `memory_bytes`, `memory_total_bytes`, `allocated`, `used`
// (docs/json.md).
[[nodiscard]] inventory::Json to_json(const JobGpu& g);

// The judgement of `use` (pure): OOM kills, GPUs Slurm gave the job that none of its processes
// used, GPUs its processes used that were busy under half the time, a job that uses under 70% of
// its CPUs and fewer whole CPUs than it has, a peak under a third of a limit of a GiB or more; the
// action for the worst, in that order.
[[nodiscard]] Efficiency judge_efficiency(const JobUse& use);

// Measures job `job_id` on this node over the request's window. Errors: the job id is not a
// number or this node runs no such job (naming the ones it runs), bad input; the job ended
// during the window, a failure.
[[nodiscard]] tl::expected<Efficiency, Failure> measure_efficiency(
    const host::Root& root, const EfficiencyRequest& request);

// schema dltune.slurm-efficiency/1, and the text.
[[nodiscard]] inventory::Json to_json(const Efficiency& e);
[[nodiscard]] std::string render_text(const Efficiency& e);

}  // namespace dltune::slurm

#pragma once
// What `dltune run` will do for a job, decided before anything is created: the
// cgroup's limits, the CPUs and NUMA nodes (nearest the chosen GPUs), the job's environment
// (thread counts, allocator, CUDA_VISIBLE_DEVICES) and its resource limits. Pure: host facts and
// the user's options in, a plan out; every bad option is an error naming it, before any change.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "launch/cgroup.hpp"
#include "launch/rank_plan.hpp"
#include "launch/spawn.hpp"
#include "settings/profile.hpp"

namespace dltune::launch {

// The allocator the job gets (docs/measurements.md: glibc's defaults cost a CPU DataLoader job ×3.6
// from page faults of tensors freed and allocated every step; glibc-tuned and tcmalloc recover it,
// jemalloc only with decay off).
enum class Allocator { kGlibcTuned, kTcmalloc, kJemalloc, kDefault };
inline constexpr Allocator kDefaultAllocator = Allocator::kGlibcTuned;
[[nodiscard]] const char* allocator_name(Allocator a);
[[nodiscard]] Result<Allocator> parse_allocator(std::string_view text);

// The options as typed (absent: not given).
struct RunOptions {
  std::optional<std::string> cpu_quota;    // "80%" of the machine, or "2.5" CPUs
  std::optional<std::string> cpu_weight;   // 1..10000
  std::optional<std::string> memory;       // "90%", "64G", "512M", bytes
  std::optional<std::string> memory_swap;  // swap allowed on top of memory: "0", "2G", "50%"
  std::optional<std::string> cpus;         // "0-7,16-23"
  std::optional<std::string> numa;         // "auto" or a node number
  std::optional<std::string> gpus;         // "0,1" (NVML/nvidia-smi indices)
  std::optional<std::string> io_weight;    // 1..10000
  std::optional<std::string> name;         // the cgroup's name
  std::vector<std::string> env;            // "K=V"
  std::optional<int> nproc;                // ranks sharing the CPUs (thread counts)
  std::optional<int> workers;              // DataLoader workers per rank (thread counts)
  std::optional<std::string> allocator;    // glibc-tuned|tcmalloc|jemalloc|default
  std::vector<std::string> command;        // argv
};

struct JobPlan {
  std::string name;  // the cgroup's
  CgroupLimits limits;
  std::optional<std::vector<int>> cpus;  // affinity (and cpuset.cpus), when bound
  std::vector<int> numa_nodes;           // cpuset.mems, when bound
  std::vector<int> gpus;                 // the GPUs' indices
  std::map<std::string, std::string> env;
  std::vector<std::string> notes;  // what was set and why, what was kept from the user
  std::vector<ResourceLimit> rlimits;
  // The profile's cpu.latency_us: the CPU wake-up latency dltune holds while the job runs
  // (cpu_latency.hpp); empty: none asked.
  std::optional<int> cpu_latency_us;
  Allocator allocator = kDefaultAllocator;
  std::vector<std::string> argv;
  // `--nproc N` with a command that is not a launcher: the ranks dltune starts (rank_plan.hpp);
  // empty: one process, the command.
  std::vector<RankPlan> ranks;
};

// What sizes a job's (or one Slurm task's) environment: thread counts and the allocator.
struct EnvironmentRequest {
  int cpus = 1;                // the CPUs the job may use (its binding, or its quota rounded up)
  int machine_cpus = 1;        // the host's
  std::optional<int> ranks;    // ranks sharing those CPUs (--nproc)
  std::optional<int> workers;  // DataLoader workers per rank
  Allocator allocator = kDefaultAllocator;
  bool allocator_asked = false;  // chosen by the user, not dltune's default
};
struct EnvironmentPlan {
  Allocator allocator = kDefaultAllocator;  // kDefault when the user's own settings were kept
  std::vector<std::string> notes;           // what was set and why, what was kept
};
// Adds OMP_NUM_THREADS/MKL_NUM_THREADS (the CPUs per rank less the workers, when the job is bound
// or its ranks or workers are known) and the allocator's variables to `env`, never replacing a
// variable `env` has (the user's). Error: an allocator whose library is not installed.
[[nodiscard]] Result<EnvironmentPlan> plan_environment(const host::Root& root,
                                                       const EnvironmentRequest& request,
                                                       std::map<std::string, std::string>& env);

// `environment` is the job's starting environment (dltune's own); `profile` (may be null) gives
// limits.nofile, limits.memlock and cpu.latency_us; `unique` makes the default name unique
// ("run-<unique>").
[[nodiscard]] Result<JobPlan> plan_job(const host::Root& root, const inventory::HostFacts& facts,
                                       const RunOptions& options,
                                       std::map<std::string, std::string> environment,
                                       const settings::Profile* profile, const std::string& unique);

// "80%" of `machine_cpus`, or a number of CPUs. Error: not a number, <= 0, more than the machine.
[[nodiscard]] Result<double> parse_cpu_quota(std::string_view text, int machine_cpus);
// "90%" of `total`, "64G"/"512M"/"4096K" (powers of 1024, optional trailing "B"/"iB"), or bytes.
// `allow_zero` for --memory-swap 0.
[[nodiscard]] Result<std::uint64_t> parse_memory(std::string_view text, std::uint64_t total,
                                                 bool allow_zero = false);

}  // namespace dltune::launch

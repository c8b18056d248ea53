#pragma once
// The signals that `dltune profile` reasons with, one value per signal per sample,
// computed from the Model of two consecutive Samples (so profile agrees with top, record, serve
// and report) and the job's processes in them (main, DataLoader workers, other children).
//
// Which signals separate which bottleneck, and the traps, come from docs/measurements.md:
// the main thread's state and its schedstat run-queue wait (R is not on-CPU), the job cgroup's own
// PSI rather than the host's (polluted by other tenants), the cgroup's failcnt and file refaults
// for a limit that pushes out the page cache (pgscan misses v1 limit reclaim), swap-ins for
// memory pressure (PSI memory misses swap-in stalls), kernel share of CPU and minor faults for
// allocation churn.
//
// A signal whose source is absent in a sample (no workers, no PSI for the job's group, no GPU,
// schedstat unreadable) is empty there, never 0.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "monitor/model.hpp"

namespace dltune::diagnose {

enum class Signal : std::size_t {
  kMainOnCpu,          // main.on_cpu: % of a CPU the main (Python) thread ran (schedstat)
  kMainCpu,            // main.cpu: % of a CPU, the main process's threads together
  kMainRunQueue,       // main.run_queue: % of the time the main thread waited for a CPU
  kMainSystemShare,    // main.system_share: % of the main process's CPU spent in the kernel
  kMainMinorFaults,    // main.minor_faults: per second
  kMainRunning,        // main.running: 1 when the main thread was R, else 0
  kMainSleeping,       // main.sleeping: 1 when S
  kMainBlocked,        // main.blocked: 1 when D
  kMainInvoluntary,    // main.involuntary: involuntary context switches per second
  kMainThreads,        // main.threads
  kWorkersCount,       // workers.count
  kWorkersCpu,         // workers.cpu: mean % of a CPU per worker
  kWorkersOnCpu,       // workers.on_cpu: mean % of a CPU each worker's thread ran
  kWorkersRunning,     // workers.running: share of workers in R
  kWorkersBlocked,     // workers.blocked: share of workers in D
  kWorkersRunQueue,    // workers.run_queue: mean % of the time a worker waited for a CPU
  kJobCpu,             // job.cpu: % of a CPU, every process of the job
  kJobBlocked,         // job.blocked: processes of the job in D
  kJobReadBytes,       // job.read_bytes: bytes/s read from storage (swap-ins included)
  kJobMajorFaults,     // job.major_faults: per second
  kJobPsiCpu,          // job.psi_cpu: % of the time some task of the job's cgroup waited for CPU
  kJobPsiMemory,       // job.psi_memory
  kJobPsiIo,           // job.psi_io (some)
  kJobPsiIoFull,       // job.psi_io_full
  kJobGpus,            // job.gpus: GPUs the job has processes on (0 on a CPU-only host)
  kGpuUtil,            // gpu.util: mean utilisation of the job's GPUs, %
  kGpuSmClock,         // gpu.sm_clock: mean SM clock of the job's GPUs, MHz
  kGpuSlowdown,        // gpu.slowdown: share of samples a job's GPU was slowed (power, thermal)
  kGpuSmActive,        // gpu.sm_active: mean share of the job's GPUs' SMs busy (NVML GPM), %
  kHostCpus,           // host.cpus
  kHostIdleCpus,       // host.idle_cpus: CPUs' worth of idle (and iowait) time
  kHostOtherCpu,       // host.other_cpu: % of a CPU used outside the sampled tree
  kHostIowait,         // host.iowait: % of all CPUs' time
  kHostPsiCpu,         // host.psi_cpu (some, %)
  kHostPsiMemory,      // host.psi_memory
  kHostPsiIo,          // host.psi_io
  kHostSwapIn,         // host.swap_in: bytes/s
  kHostMajorFaults,    // host.major_faults: per second
  kHostRefaultFile,    // host.refault_file: page-cache refaults per second
  kHostOomKills,       // host.oom_kills: in the sample's interval
  kDiskRead,           // disk.read: bytes/s, all disks
  kDiskUtil,           // disk.util: the busiest disk's utilisation, %
  kCgroupThrottled,    // cgroup.throttled: % of the time the job's group was CPU-throttled
  kCgroupMemoryUse,    // cgroup.memory_use: % of the group's memory limit in use
  kCgroupFailcnt,      // cgroup.failcnt: times per second the group hit its memory limit
  kCgroupRefaultFile,  // cgroup.refault_file: page-cache refaults per second in the group
  kCgroupOomKills,     // cgroup.oom_kills: in the sample's interval
  // From the main thread's Python stacks read from outside (diagnose/py_activity.hpp), where
  // they could be read: absent otherwise.
  kPySamples,       // py.samples: the main thread's stacks read in the interval
  kPyLoading,       // py.loading: share of its stacks on a CPU that load and decode data
  kPyModel,         // py.model: share of its stacks on a CPU in the model
  kPyPython,        // py.python: share of its stacks on a CPU in other Python work
  kPyWaitData,      // py.wait_data: share of its stacks waiting for the DataLoader's workers
  kPySync,          // py.sync: share of its stacks in a synchronising call
  kPyLogging,       // py.logging: share of its stacks logging or checkpointing
  kSuggestWorkers,  // suggest.workers: workers + the whole idle CPUs (at least one more)
  kCount
};
inline constexpr std::size_t kSignalCount = static_cast<std::size_t>(Signal::kCount);

// How a window of per-sample values becomes one value.
enum class Aggregate { kMean, kSum, kMax, kMin };

struct SignalInfo {
  Signal signal;
  std::string_view name;   // "main.on_cpu": what knowledge/bottlenecks.toml names
  std::string_view unit;   // "%", "/s", "B/s", "" (a count), "share" (0..1)
  std::string_view label;  // for evidence: "main thread on a CPU"
  Aggregate aggregate;
};

[[nodiscard]] const std::array<SignalInfo, kSignalCount>& signal_table();
[[nodiscard]] const SignalInfo& info(Signal s);
[[nodiscard]] std::optional<Signal> signal_by_name(std::string_view name);

using SignalValues = std::array<std::optional<double>, kSignalCount>;

// The signals of one interval: `m` is Model::from(now, previous) with rates. Processes with role
// kMain, kWorker and kChild are the job. Without rates (the first sample) every signal is empty.
[[nodiscard]] SignalValues signals_of(const monitor::Model& m);

// A value formatted for people in the signal's unit: "97%", "1.2 MiB/s", "3", "0.84".
[[nodiscard]] std::string format_value(Signal s, double v);

}  // namespace dltune::diagnose

#pragma once
// Sample: the raw counters of one moment (docs/architecture.md: collectors → Sample → Model).
//
// A Sample holds what the kernel and NVML said, as they said it: cumulative counters in their own
// units (clock ticks, sectors, bytes, microseconds), never rates. Rates and percentages come only
// from Model::from (monitor/model.hpp), so that top, record, serve, profile and report agree.
// Recordings store Samples (store/recording.hpp); a field that is optional here is optional there.
//
// A source that is absent leaves its field empty (CONTRIBUTING.md, convention 3): no PSI on an old
// kernel, no io file for another user's process, no GPU without NVML.
//
// Extend a struct by adding fields at its end and do not rename them: recordings store Samples.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/pci_gpus.hpp"
#include "gpu/reading.hpp"

namespace dltune::monitor {

// One line of /proc/stat ("cpu" or "cpuN"), in clock ticks (USER_HZ).
struct CpuTimes {
  int cpu = -1;  // -1 for the "cpu" total line
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
  // guest and guest_nice are already counted in user and nice (kernel: fs/proc/stat.c).
};

// /proc/meminfo, in bytes (the file says kB).
struct Memory {
  std::uint64_t total = 0, free = 0, available = 0, buffers = 0, cached = 0, shmem = 0,
                swap_total = 0, swap_free = 0, dirty = 0, writeback = 0, anon_huge = 0;
  std::optional<std::uint64_t> swap_cached;
};

// /proc/vmstat: the counters the Model and profile use.
struct VmStat {
  std::uint64_t pswpin = 0, pswpout = 0;  // pages
  std::uint64_t pgfault = 0, pgmajfault = 0;
  std::uint64_t pgscan = 0, pgsteal = 0;  // sums of the kswapd/direct(/khugepaged) variants
  std::uint64_t workingset_refault_file = 0, workingset_refault_anon = 0;
  std::uint64_t thp_fault_alloc = 0, thp_fault_fallback = 0, thp_collapse_alloc = 0;
  std::uint64_t compact_stall = 0;
  std::uint64_t oom_kill = 0;
};

// One resource's pressure (/proc/pressure/* or a cgroup's *.pressure). `total` is cumulative
// stall time in microseconds; the avg fields are the kernel's own percentages.
struct PressureLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;
  std::uint64_t total_us = 0;
};
struct Pressure {
  PressureLine some;
  std::optional<PressureLine> full;  // the cpu file has no "full" line before Linux 5.13
};
struct Pressures {
  std::optional<Pressure> cpu, memory, io;
};

// One line of /proc/diskstats for a whole disk (partitions and loop/ram devices left out).
struct Disk {
  std::string name;  // "vda", "nvme0n1"
  std::uint64_t reads = 0, read_sectors = 0, read_ms = 0;
  std::uint64_t writes = 0, write_sectors = 0, write_ms = 0;
  std::uint64_t in_flight = 0, io_ms = 0, weighted_io_ms = 0;
  // A sector in diskstats is always 512 bytes (Documentation/admin-guide/iostats.rst).
};

// One line of /proc/net/dev ("lo" left out).
struct NetDevice {
  std::string name;
  std::uint64_t rx_bytes = 0, rx_packets = 0, rx_errors = 0, rx_dropped = 0;
  std::uint64_t tx_bytes = 0, tx_packets = 0, tx_errors = 0, tx_dropped = 0;
};

struct System {
  CpuTimes total;
  std::vector<CpuTimes> cpus;  // by CPU number; offline CPUs are missing
  std::uint64_t context_switches = 0, processes_forked = 0;
  std::uint64_t procs_running = 0, procs_blocked = 0;  // instantaneous
  Memory memory;
  VmStat vm;
  Pressures pressure;
  std::vector<Disk> disks;
  std::vector<NetDevice> net;
  // When `vm`, `pressure`, `disks` and `net` (the host's activity counters) were read, in
  // CLOCK_MONOTONIC ns, and whether they are an earlier sample's reading carried into this one
  // (SamplerOptions::host_activity_every). 0: read with this sample, at its monotonic_ns.
  std::int64_t activity_ns = 0;
  bool activity_carried = false;
};

// A cgroup (the job's): v1 reads the group of the same path in each hierarchy it is in.
struct Cgroup {
  std::string path;     // as in /proc/PID/cgroup: "/dltune/job-1234"
  std::string version;  // "v1", "v2"
  // CPU
  std::optional<std::uint64_t> cpu_usage_us;  // v2 usage_usec, v1 cpuacct.usage / 1000
  std::optional<std::uint64_t> cpu_user_us, cpu_system_us;
  std::optional<std::uint64_t> nr_periods, nr_throttled, throttled_us;
  std::optional<double> cpu_quota_cpus;  // quota/period; empty when unlimited
  // The CPUs its cpuset allows (v2 cpuset.cpus.effective, v1 cpuset.cpus): what Slurm gave a
  // job on this node (ConstrainCores); empty where the group has no cpuset of its own.
  std::optional<std::uint32_t> cpuset_cpus;
  // Memory
  std::optional<std::uint64_t> memory_bytes;            // memory.current / usage_in_bytes
  std::optional<std::uint64_t> memory_limit_bytes;      // empty when unlimited
  std::optional<std::uint64_t> memory_peak_bytes;       // memory.peak / max_usage_in_bytes
  std::optional<std::uint64_t> swap_bytes;              // v2 memory.swap.current; v1 stat swap
  std::optional<std::uint64_t> anon_bytes, file_bytes;  // memory.stat anon/file (v1 rss/cache)
  std::optional<std::uint64_t> failcnt;                 // v1 memory.failcnt; v2 events "max"
  std::optional<std::uint64_t> events_high, events_oom, events_oom_kill;
  std::optional<std::uint64_t> workingset_refault_file, workingset_refault_anon;
  std::optional<std::uint64_t> pgmajfault;
  // Pressure of the group itself (v2, or the hybrid's unified group that `run` makes)
  Pressures pressure;
  // Processes in the group now; for a group that holds none itself (a Slurm job's), those in the
  // groups below it. Carried between readings of a large group (CgroupCollector::count_every).
  std::optional<std::uint64_t> pids;
};

// What a process is to a training job (named from the tree and the command line).
enum class Role : std::uint8_t {
  kOther = 0,   // not part of the job (or no job asked for)
  kMain = 1,    // the job's root process (the one launched, or the --pid)
  kWorker = 2,  // a DataLoader worker: a child named pt_data_worker, or a fork of the main
                // process (same command line), or a multiprocessing spawn/forkserver child
  kChild = 3,   // any other descendant (a shell, a compiler)
  kRank = 4,    // a rank of a distributed job: a launcher's child (torchrun, dltune run --nproc),
                // or in a job's group, a sibling of the main process started from outside it
};
[[nodiscard]] const char* role_name(Role r);  // "other", "main", "worker", "child", "rank"

// One process, from /proc/PID/{stat,schedstat,io,status}. CPU times in clock ticks.
struct Process {
  pid_t pid = 0, ppid = 0;
  std::string comm;     // /proc/PID/stat's name (15 chars at most)
  std::string cmdline;  // argv joined by spaces, at most 256 bytes; read once per process
  Role role = Role::kOther;
  // RANK in /proc/PID/environ (what torchrun and dltune run --nproc give each rank: its rank in
  // the whole job), else SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK (srun's, mpirun's
  // tasks): read once, for the main process and the ranks only; nothing when none is set or the
  // environment is not readable (another user's process, without root).
  std::optional<int> rank;
  char state = '?';                    // of the main (Python) thread, tid == pid: R S D Z T t I X
  std::uint64_t start_ticks = 0;       // since boot; with pid, tells a reused pid from the old one
  std::uint64_t utime = 0, stime = 0;  // whole process, in ticks
  std::uint64_t minflt = 0, majflt = 0;
  std::uint64_t threads = 0;
  std::uint64_t rss_bytes = 0;
  int processor = -1;  // the CPU it last ran on
  // CLOCK_MONOTONIC of the reading of its stat: the sample's own time, or an earlier sample's
  // where the sampler carries a process between readings (top's processes off screen:
  // ProcessDetail::others_every). 0: not known (a recording), the sample's time.
  std::int64_t stat_ns = 0;
  // /proc/PID/schedstat of the main thread: ns on CPU, ns waiting on a run queue, slices.
  std::optional<std::uint64_t> run_ns, wait_ns, timeslices;
  // /proc/PID/status
  std::optional<std::uint64_t> voluntary_switches, involuntary_switches;
  // /proc/PID/io (root or the same user only)
  std::optional<std::uint64_t> read_bytes, write_bytes, rchar, wchar;
};

// One GPU, from NVML (gpu/reading.hpp: the NVML sampler fills it).
using GpuProcess = gpu::GpuProcess;
using Gpu = gpu::GpuReading;

struct Sample {
  std::int64_t wall_ns = 0;              // CLOCK_REALTIME
  std::int64_t monotonic_ns = 0;         // CLOCK_MONOTONIC: the Model's dt comes from this
  std::uint64_t ticks_per_second = 100;  // sysconf(_SC_CLK_TCK)
  std::uint64_t page_size = 4096;
  System system;
  std::optional<Cgroup> cgroup;
  std::vector<Process> processes;  // sorted by pid
  std::vector<Gpu> gpus;
  // Every compute GPU on PCI and whether NVML (or amdgpu's sysfs) answered for it; empty when
  // GPUs are not read (--no-gpus) or PCI has none.
  std::vector<gpu::GpuSlot> gpu_slots;
  // The sampling process's own CPU time (user + system, all its threads: getrusage RUSAGE_SELF),
  // microseconds, cumulative; only on the live host (a fixture root is not where it runs). The
  // observer is not load on the job: profile leaves it out of the CPU used outside the job.
  std::optional<std::uint64_t> observer_cpu_us;
};

}  // namespace dltune::monitor

#pragma once
// Model: every rate and percentage, from two Samples (docs/architecture.md, CONTRIBUTING.md,
// convention 6).
//
// Model::from is one pure function, shared by top, record's replay, serve, profile and report so
// that all of them agree. Without a previous sample (the first one, or a process or disk that is
// new) the instantaneous values are there and the rates are not: `has_rates` says which.
//
// Units: percentages are of one CPU for processes and cgroups (200 = two CPUs busy) and of the
// whole for the host lines; bytes per second; events per second.
//
// model_system.cpp (host, cgroup) and model_process.cpp (processes, GPUs) implement it. Add
// fields, do not rename them: top, record's replay, serve, profile and report all read them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "monitor/sample.hpp"

namespace dltune::monitor {

struct CpuModel {
  int cpu = -1;  // -1: all CPUs together
  // Percent of the time of this CPU (or of all CPUs together for cpu -1); they add up to 100.
  double user_pct = 0;    // user + nice
  double system_pct = 0;  // system + irq + softirq
  double iowait_pct = 0;
  double steal_pct = 0;
  double idle_pct = 0;
  [[nodiscard]] double busy_pct() const { return user_pct + system_pct + steal_pct; }
};

struct MemoryModel {
  std::uint64_t total = 0, used = 0, available = 0, cache = 0, dirty = 0;  // used = total - avail
  std::uint64_t swap_total = 0, swap_used = 0;
  double swap_in_bytes_s = 0, swap_out_bytes_s = 0;
  double major_faults_s = 0, minor_faults_s = 0;
  double refault_file_s = 0;  // workingset_refault_file: page cache read again after eviction
  double thp_fault_alloc_s = 0, compact_stall_s = 0;
  std::uint64_t oom_kills = 0;  // since the previous sample
};

// From the `total=` deltas (docs/measurements.md: avg10 lags); empty without a previous sample.
struct PressureModel {
  double some_pct = 0;
  std::optional<double> full_pct;
  double avg10_some = 0;  // the kernel's own, for views that want it
};
struct PressuresModel {
  std::optional<PressureModel> cpu, memory, io;
};

struct DiskModel {
  std::string name;
  double read_bytes_s = 0, write_bytes_s = 0;
  double reads_s = 0, writes_s = 0;
  double util_pct = 0;  // io_ms delta over the interval
  double await_ms = 0;  // (read_ms + write_ms) delta / (reads + writes) delta
  std::uint64_t in_flight = 0;
};

struct NetModel {
  std::string name;
  double rx_bytes_s = 0, tx_bytes_s = 0, rx_packets_s = 0, tx_packets_s = 0;
  double errors_s = 0, dropped_s = 0;
};

struct CgroupModel {
  std::string path, version;
  std::optional<double> cpu_pct, user_pct, system_pct;  // of one CPU
  // cpu_pct is the sum of the group's processes' (sampled with it): the group is in no CPU
  // accounting hierarchy (a Slurm job's on cgroup v1).
  bool cpu_from_processes = false;
  std::optional<double> throttled_pct;          // throttled time / interval (docs/measurements.md)
  std::optional<double> throttled_periods_pct;  // nr_throttled / nr_periods deltas
  std::optional<double> cpu_quota_cpus;
  std::optional<std::uint64_t> memory_bytes, memory_limit_bytes, memory_peak_bytes, swap_bytes;
  std::optional<double> memory_limit_pct;  // memory / limit
  std::optional<std::uint64_t> failcnt_delta, oom_kills_delta;
  std::optional<double> refault_file_s, major_faults_s;
  PressuresModel pressure;
  std::optional<std::uint64_t> pids;
};

struct ProcessModel {
  pid_t pid = 0, ppid = 0;
  std::string comm, cmdline;
  Role role = Role::kOther;
  std::optional<int> rank;  // RANK of a main process or a rank (Process::rank)
  char state = '?';
  std::uint64_t threads = 0, rss_bytes = 0;
  int processor = -1;
  bool has_rates = false;  // false for a process first seen in this sample
  double cpu_pct = 0, user_pct = 0, system_pct = 0;  // of one CPU
  double minor_faults_s = 0, major_faults_s = 0;
  std::optional<double> read_bytes_s, write_bytes_s;
  std::optional<double> run_queue_pct;  // schedstat wait: % of the interval waiting for a CPU
  std::optional<double> on_cpu_pct;     // schedstat run: % of the interval on a CPU (main thread)
  std::optional<double> voluntary_switches_s, involuntary_switches_s;
  // The function its main thread's Python stack is in now, "Samples.__getitem__ train.py:64",
  // where a live view read it (top --pid: tui/py_functions.hpp); empty otherwise.
  std::string python_frame;
};

struct GpuProcessModel {
  pid_t pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;
};
struct GpuModel {
  unsigned index = 0;
  std::optional<std::string> uuid, name, pci_bus_id;
  std::optional<double> utilization_gpu_pct, utilization_memory_pct;
  // NVML GPM's SM activity over the reading's interval, % (Hopper and newer).
  std::optional<double> sm_active_pct;
  std::optional<std::uint64_t> memory_used_bytes, memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<std::uint32_t> temperature_celsius, sm_clock_mhz, memory_clock_mhz;
  std::optional<std::uint64_t> clock_event_reasons;
  std::optional<double> pcie_tx_bytes_s, pcie_rx_bytes_s;
  // From NVML's cumulative NVLink data counters between this reading of the GPU and the one
  // before; none without both, for a sample that repeats the previous reading, or after a
  // counter went down (the driver reloaded).
  std::optional<double> nvlink_tx_bytes_s, nvlink_rx_bytes_s;
  std::vector<GpuProcessModel> processes;
  std::optional<std::uint64_t> pcie_replay_count, xid_errors;  // counters, as in the Sample
  std::optional<std::uint32_t> last_xid;
};

struct Model {
  std::int64_t wall_ns = 0;
  double interval_s = 0;   // dt; 0 without a previous sample
  bool has_rates = false;  // a previous sample was given and dt > 0
  CpuModel cpu;            // all CPUs
  std::vector<CpuModel> cpus;
  double context_switches_s = 0, forks_s = 0;
  std::uint64_t procs_running = 0, procs_blocked = 0;
  MemoryModel memory;
  PressuresModel pressure;
  std::vector<DiskModel> disks;
  std::vector<NetModel> net;
  std::optional<CgroupModel> cgroup;
  std::vector<ProcessModel> processes;  // in the sample's order (by pid)
  std::vector<GpuModel> gpus;
  // The sampling process's own CPU, % of one CPU (Sample::observer_cpu_us); none without both.
  std::optional<double> observer_cpu_pct;

  // dt from the samples' monotonic clocks; `previous` may be null.
  [[nodiscard]] static Model from(const Sample& now, const Sample* previous);
  [[nodiscard]] static Model from(const Sample& now, const Sample* previous, double dt_s);
  // As from(now, previous), for samples whose processes may be carried between readings of
  // their stat (Process::stat_ns; top's processes off screen): a process read in neither `now`
  // nor `previous`'s last reading keeps the rates `before` gave it (the model of `previous`);
  // so do the host's activity counters when `now` carries their reading
  // (System::activity_carried).
  [[nodiscard]] static Model from(const Sample& now, const Sample* previous, const Model& before);
  // The same into `out` (not `before`), whose storage is reused: a live view at 10 Hz keeps two
  // models and swaps them, rather than allocating every process's strings again each sample.
  static void into(const Sample& now, const Sample* previous, const Model& before, Model& out);
};

// The parts, each pure (model_system.cpp, model_process.cpp); Model::from calls them all.
// `before`: the model of `previous`, whose activity rates (disks, network, PSI, swap and faults)
// a sample that carries their reading keeps (System::activity_carried; null: no rates then).
void model_system(const Sample& now, const Sample* previous, double dt_s, Model& out,
                  const Model* before = nullptr);
void model_cgroup(const Sample& now, const Sample* previous, double dt_s, Model& out);
// `before`: the model of `previous`, whose rates a carried process keeps (null: none kept).
void model_processes(const Sample& now, const Sample* previous, double dt_s, Model& out,
                     const Model* before = nullptr);
void model_gpus(const Sample& now, const Sample* previous, double dt_s, Model& out);

}  // namespace dltune::monitor

// Model::from's process and GPU parts (monitor/model.hpp).
#include <algorithm>

#include "monitor/model.hpp"

namespace dltune::monitor {

namespace {

// A counter's growth; 0 when it went backwards (a counter reset; never a negative rate).
double growth(std::uint64_t now, std::uint64_t before) {
  return now >= before ? static_cast<double>(now - before) : 0.0;
}

std::optional<double> rate(const std::optional<std::uint64_t>& now,
                           const std::optional<std::uint64_t>& before, double dt_s) {
  if (!now || !before) return std::nullopt;
  return growth(*now, *before) / dt_s;
}

// `stat_s`: the seconds between the two readings of stat and schedstat (dt unless one was
// carried); status and io are read in the same sample as stat or not at all, over dt.
void rates(const Process& now, const Process& before, double dt_s, double stat_s,
           double ticks_per_second, ProcessModel& m) {
  m.has_rates = true;
  // Ticks between the readings, as a percentage of one CPU: Δticks / ticks_per_second / s · 100.
  const double user = growth(now.utime, before.utime) / ticks_per_second / stat_s * 100;
  const double system = growth(now.stime, before.stime) / ticks_per_second / stat_s * 100;
  m.user_pct = user;
  m.system_pct = system;
  m.cpu_pct = user + system;
  m.minor_faults_s = growth(now.minflt, before.minflt) / stat_s;
  m.major_faults_s = growth(now.majflt, before.majflt) / stat_s;
  m.read_bytes_s = rate(now.read_bytes, before.read_bytes, dt_s);
  m.write_bytes_s = rate(now.write_bytes, before.write_bytes, dt_s);
  // schedstat is in ns: Δns / (s · 1e9) · 100 = % of the time (docs/measurements.md: run-queue
  // wait shows CPU contention that utilisation does not). It is read with stat, or carried with
  // it: over the same seconds.
  if (auto w = rate(now.wait_ns, before.wait_ns, stat_s)) m.run_queue_pct = *w / 1e9 * 100;
  if (auto r = rate(now.run_ns, before.run_ns, stat_s)) m.on_cpu_pct = *r / 1e9 * 100;
  m.voluntary_switches_s = rate(now.voluntary_switches, before.voluntary_switches, dt_s);
  m.involuntary_switches_s = rate(now.involuntary_switches, before.involuntary_switches, dt_s);
}

// The rates of stat and schedstat that `from` gave the same process (carried: read in neither
// sample).
void keep_rates(const ProcessModel& from, ProcessModel& m) {
  m.has_rates = from.has_rates;
  m.user_pct = from.user_pct;
  m.system_pct = from.system_pct;
  m.cpu_pct = from.cpu_pct;
  m.minor_faults_s = from.minor_faults_s;
  m.major_faults_s = from.major_faults_s;
  m.run_queue_pct = from.run_queue_pct;
  m.on_cpu_pct = from.on_cpu_pct;
}

}  // namespace

void model_processes(const Sample& now, const Sample* previous, double dt_s, Model& out,
                     const Model* before_model) {
  out.processes.resize(now.processes.size());
  const bool with_rates = previous != nullptr && dt_s > 0;
  const double hz = now.ticks_per_second > 0 ? static_cast<double>(now.ticks_per_second) : 100.0;
  // Both lists are sorted by pid: one walk matches them, no map.
  std::size_t j = 0;
  for (std::size_t i = 0; i < now.processes.size(); ++i) {
    const Process& p = now.processes[i];
    ProcessModel& m = out.processes[i];
    {
      // A new ProcessModel, with the strings' storage of the one it replaces (Model::into).
      std::string comm = std::move(m.comm), cmdline = std::move(m.cmdline);
      m = ProcessModel{};
      comm = p.comm;
      cmdline = p.cmdline;
      m.comm = std::move(comm);
      m.cmdline = std::move(cmdline);
    }
    m.pid = p.pid;
    m.ppid = p.ppid;
    m.role = p.role;
    m.rank = p.rank;
    m.state = p.state;
    m.threads = p.threads;
    m.rss_bytes = p.rss_bytes;
    m.processor = p.processor;
    if (!with_rates) continue;
    const auto& before = previous->processes;
    while (j < before.size() && before[j].pid < p.pid) ++j;
    // The same pid started at another time is a new process (the pid was reused): no rates.
    if (j >= before.size() || before[j].pid != p.pid || before[j].start_ticks != p.start_ticks)
      continue;
    const Process& b = before[j];
    if (p.stat_ns != 0 && p.stat_ns == b.stat_ns) {
      // The same reading in both samples: the rates it had then (the model of `previous` is in
      // its order).
      if (before_model != nullptr && before_model->processes.size() == before.size() &&
          before_model->processes[j].pid == p.pid)
        keep_rates(before_model->processes[j], m);
      continue;
    }
    // dt, unless the reading in `previous` was an earlier sample's (carried until now).
    const bool carried = p.stat_ns == now.monotonic_ns && b.stat_ns != 0 &&
                         b.stat_ns != previous->monotonic_ns && b.stat_ns < p.stat_ns;
    const double stat_s = carried ? static_cast<double>(p.stat_ns - b.stat_ns) / 1e9 : dt_s;
    rates(p, b, dt_s, stat_s, hz, m);
  }
}

namespace {

// The GPU of `previous` that `g` is: the same index, and the same UUID where both have one.
const Gpu* same_gpu(const Sample* previous, const Gpu& g) {
  if (previous == nullptr) return nullptr;
  for (const auto& p : previous->gpus)
    if (p.index == g.index && (!p.uuid || !g.uuid || *p.uuid == *g.uuid)) return &p;
  return nullptr;
}

// The seconds between two readings of a GPU: NVML is read at its own rate (sampled_at_ns, the
// reading's monotonic time), slower than the samples, so a sample may repeat the reading before
// (0: nothing new). Readings without their time (not from the NVML thread) take the samples' dt.
double readings_apart_s(const Gpu& now, const Gpu& before, double dt_s) {
  if (!now.sampled_at_ns || !before.sampled_at_ns) return dt_s;
  if (*now.sampled_at_ns <= *before.sampled_at_ns) return 0;
  return static_cast<double>(*now.sampled_at_ns - *before.sampled_at_ns) / 1e9;
}

// Bytes per second from a counter in KiB; none when it went down (the driver reloaded: the
// counter started again), rather than a rate of 0.
std::optional<double> kib_rate(const std::optional<std::uint64_t>& now,
                               const std::optional<std::uint64_t>& before, double dt_s) {
  if (!now || !before || dt_s <= 0 || *now < *before) return std::nullopt;
  return static_cast<double>(*now - *before) * 1024 / dt_s;
}

}  // namespace

void model_gpus(const Sample& now, const Sample* previous, double dt_s, Model& out) {
  // NVML gives instantaneous values and its own averages, except for the NVLink counters.
  out.gpus.resize(now.gpus.size());
  for (std::size_t i = 0; i < now.gpus.size(); ++i) {
    const Gpu& g = now.gpus[i];
    GpuModel& m = out.gpus[i];
    m.index = g.index;
    m.uuid = g.uuid;
    m.name = g.name;
    m.pci_bus_id = g.pci_bus_id;
    m.utilization_gpu_pct = g.utilization_gpu_pct;
    m.utilization_memory_pct = g.utilization_memory_pct;
    if (g.sm_active_ratio) m.sm_active_pct = *g.sm_active_ratio * 100.0;
    m.memory_used_bytes = g.memory_used_bytes;
    m.memory_total_bytes = g.memory_total_bytes;
    m.power_watts = g.power_watts;
    m.temperature_celsius = g.temperature_celsius;
    m.sm_clock_mhz = g.sm_clock_mhz;
    m.memory_clock_mhz = g.memory_clock_mhz;
    m.clock_event_reasons = g.clock_event_reasons;
    m.pcie_replay_count = g.pcie_replay_count;
    m.xid_errors = g.xid_errors;
    m.last_xid = g.last_xid;
    // nvmlDeviceGetPcieThroughput: "throughput in KB/s" over a 20 ms window (NVML API Reference,
    // Device Queries). The reference does not say 1000 or 1024; Sample names the field KiB/s,
    // and so KB here is taken as 1024 bytes, as NVML's memory figures are binary.
    m.pcie_tx_bytes_s.reset();
    m.pcie_rx_bytes_s.reset();
    if (g.pcie_tx_kib_s) m.pcie_tx_bytes_s = static_cast<double>(*g.pcie_tx_kib_s) * 1024;
    if (g.pcie_rx_kib_s) m.pcie_rx_bytes_s = static_cast<double>(*g.pcie_rx_kib_s) * 1024;
    // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX count KiB (nvml.h: "in KiB").
    m.nvlink_tx_bytes_s.reset();
    m.nvlink_rx_bytes_s.reset();
    if (const Gpu* before = same_gpu(previous, g)) {
      const double apart_s = readings_apart_s(g, *before, dt_s);
      m.nvlink_tx_bytes_s = kib_rate(g.nvlink_tx_kib, before->nvlink_tx_kib, apart_s);
      m.nvlink_rx_bytes_s = kib_rate(g.nvlink_rx_kib, before->nvlink_rx_kib, apart_s);
    }
    m.processes.resize(g.processes.size());
    for (std::size_t k = 0; k < g.processes.size(); ++k)
      m.processes[k] = GpuProcessModel{g.processes[k].pid, g.processes[k].used_memory_bytes};
  }
}

}  // namespace dltune::monitor

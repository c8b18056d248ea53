// Model: the host-wide and cgroup parts (model.hpp). Pure functions of two Samples.
//
// A counter that went backwards (a CPU taken offline and back, a device re-added, a counter
// reset) gives a delta of 0, never a negative or wrapped-around rate.
#include <algorithm>

#include "monitor/model.hpp"

namespace dltune::monitor {

namespace {

std::uint64_t delta(std::uint64_t now, std::uint64_t before) {
  return now >= before ? now - before : 0;
}
double per_s(std::uint64_t now, std::uint64_t before, double dt) {
  return static_cast<double>(delta(now, before)) / dt;
}
double clamp_pct(double v) {
  return std::clamp(v, 0.0, 100.0);
}

// Percentages of the ticks between two /proc/stat lines (user = user + nice, system = system +
// irq + softirq, as top and mpstat group them).
CpuModel cpu_model(const CpuTimes& now, const CpuTimes* before) {
  CpuModel m;
  m.cpu = now.cpu;
  if (before == nullptr) return m;
  const double user =
      static_cast<double>(delta(now.user, before->user) + delta(now.nice, before->nice));
  const double system =
      static_cast<double>(delta(now.system, before->system) + delta(now.irq, before->irq) +
                          delta(now.softirq, before->softirq));
  const double iowait = static_cast<double>(delta(now.iowait, before->iowait));
  const double steal = static_cast<double>(delta(now.steal, before->steal));
  const double idle = static_cast<double>(delta(now.idle, before->idle));
  const double all = user + system + iowait + steal + idle;
  if (all <= 0) return m;  // no tick between the two: nothing to say
  m.user_pct = user / all * 100;
  m.system_pct = system / all * 100;
  m.iowait_pct = iowait / all * 100;
  m.steal_pct = steal / all * 100;
  m.idle_pct = idle / all * 100;
  return m;
}

// An element of `v` with the same key as `key`, looking first at position `hint` (the lists
// are usually in the same order in both samples).
template <class T, class K, class Get>
const T* match(const std::vector<T>& v, std::size_t hint, const K& key, Get get) {
  if (hint < v.size() && get(v[hint]) == key) return &v[hint];
  for (const auto& x : v)
    if (get(x) == key) return &x;
  return nullptr;
}

// Stall time as a share of the interval, from the `total=` deltas (µs).
PressureModel pressure_model(const Pressure& now, const Pressure& before, double dt) {
  PressureModel m;
  m.avg10_some = now.some.avg10;
  m.some_pct = clamp_pct(per_s(now.some.total_us, before.some.total_us, dt) / 1e6 * 100);
  if (now.full && before.full)
    m.full_pct = clamp_pct(per_s(now.full->total_us, before.full->total_us, dt) / 1e6 * 100);
  return m;
}

PressuresModel pressures_model(const Pressures& now, const Pressures* before, double dt) {
  PressuresModel m;
  if (before == nullptr) return m;
  if (now.cpu && before->cpu) m.cpu = pressure_model(*now.cpu, *before->cpu, dt);
  if (now.memory && before->memory) m.memory = pressure_model(*now.memory, *before->memory, dt);
  if (now.io && before->io) m.io = pressure_model(*now.io, *before->io, dt);
  return m;
}

std::optional<std::uint64_t> opt_delta(const std::optional<std::uint64_t>& now,
                                       const std::optional<std::uint64_t>& before) {
  if (!now || !before) return std::nullopt;
  return delta(*now, *before);
}

// The host's activity counters (vmstat, PSI, diskstats, net/dev) of `now` against `previous`
// (null: none, no rates), `dt_s` apart.
void model_activity(const Sample& now, const Sample* previous, double dt_s, Model& out) {
  const System& s = now.system;
  const System* p = previous != nullptr && dt_s > 0 ? &previous->system : nullptr;
  out.disks.clear();
  for (std::size_t i = 0; i < s.disks.size(); ++i) {
    const Disk& d = s.disks[i];
    DiskModel dm;
    dm.name = d.name;
    dm.in_flight = d.in_flight;
    // A disk not in the previous sample (just added) has zero rates until the next one.
    const Disk* b =
        p == nullptr ? nullptr : match(p->disks, i, d.name, [](const Disk& x) { return x.name; });
    if (b != nullptr) {
      constexpr double kSector = 512;  // iostats.rst: always 512-byte sectors
      dm.read_bytes_s = per_s(d.read_sectors, b->read_sectors, dt_s) * kSector;
      dm.write_bytes_s = per_s(d.write_sectors, b->write_sectors, dt_s) * kSector;
      dm.reads_s = per_s(d.reads, b->reads, dt_s);
      dm.writes_s = per_s(d.writes, b->writes, dt_s);
      dm.util_pct = clamp_pct(per_s(d.io_ms, b->io_ms, dt_s) / 1000 * 100);
      const auto ios = delta(d.reads, b->reads) + delta(d.writes, b->writes);
      if (ios > 0)
        dm.await_ms =
            static_cast<double>(delta(d.read_ms, b->read_ms) + delta(d.write_ms, b->write_ms)) /
            static_cast<double>(ios);
    }
    out.disks.push_back(std::move(dm));
  }

  out.net.clear();
  for (std::size_t i = 0; i < s.net.size(); ++i) {
    const NetDevice& n = s.net[i];
    NetModel nm;
    nm.name = n.name;
    const NetDevice* b = p == nullptr
                             ? nullptr
                             : match(p->net, i, n.name, [](const NetDevice& x) { return x.name; });
    if (b != nullptr) {
      nm.rx_bytes_s = per_s(n.rx_bytes, b->rx_bytes, dt_s);
      nm.tx_bytes_s = per_s(n.tx_bytes, b->tx_bytes, dt_s);
      nm.rx_packets_s = per_s(n.rx_packets, b->rx_packets, dt_s);
      nm.tx_packets_s = per_s(n.tx_packets, b->tx_packets, dt_s);
      nm.errors_s =
          static_cast<double>(delta(n.rx_errors, b->rx_errors) + delta(n.tx_errors, b->tx_errors)) /
          dt_s;
      nm.dropped_s = static_cast<double>(delta(n.rx_dropped, b->rx_dropped) +
                                         delta(n.tx_dropped, b->tx_dropped)) /
                     dt_s;
    }
    out.net.push_back(std::move(nm));
  }

  out.pressure = pressures_model(s.pressure, p != nullptr ? &p->pressure : nullptr, dt_s);
  if (p == nullptr) return;
  MemoryModel& m = out.memory;
  const VmStat& v = s.vm;
  const VmStat& w = p->vm;
  const auto page = static_cast<double>(now.page_size);
  m.swap_in_bytes_s = per_s(v.pswpin, w.pswpin, dt_s) * page;
  m.swap_out_bytes_s = per_s(v.pswpout, w.pswpout, dt_s) * page;
  m.major_faults_s = per_s(v.pgmajfault, w.pgmajfault, dt_s);
  // pgfault counts every fault, the major ones too (mm/memory.c).
  m.minor_faults_s =
      static_cast<double>(delta(delta(v.pgfault, w.pgfault), delta(v.pgmajfault, w.pgmajfault))) /
      dt_s;
  m.refault_file_s = per_s(v.workingset_refault_file, w.workingset_refault_file, dt_s);
  m.thp_fault_alloc_s = per_s(v.thp_fault_alloc, w.thp_fault_alloc, dt_s);
  m.compact_stall_s = per_s(v.compact_stall, w.compact_stall, dt_s);
  m.oom_kills = delta(v.oom_kill, w.oom_kill);
}

// The activity counters' model of the sample before, for a sample that carries their reading:
// nothing new was read, so the rates stay and no OOM kill is counted again.
void carry_activity(const Model& before, Model& out) {
  out.disks = before.disks;
  out.net = before.net;
  out.pressure = before.pressure;
  MemoryModel& m = out.memory;
  const MemoryModel& b = before.memory;
  m.swap_in_bytes_s = b.swap_in_bytes_s;
  m.swap_out_bytes_s = b.swap_out_bytes_s;
  m.major_faults_s = b.major_faults_s;
  m.minor_faults_s = b.minor_faults_s;
  m.refault_file_s = b.refault_file_s;
  m.thp_fault_alloc_s = b.thp_fault_alloc_s;
  m.compact_stall_s = b.compact_stall_s;
  m.oom_kills = 0;
}

}  // namespace

void model_system(const Sample& now, const Sample* previous, double dt_s, Model& out,
                  const Model* before) {
  const System& s = now.system;
  const System* p = previous != nullptr && dt_s > 0 ? &previous->system : nullptr;

  out.cpu = cpu_model(s.total, p != nullptr ? &p->total : nullptr);
  out.cpus.clear();
  for (std::size_t i = 0; i < s.cpus.size(); ++i) {
    const CpuTimes* was =
        p == nullptr ? nullptr
                     : match(p->cpus, i, s.cpus[i].cpu, [](const CpuTimes& c) { return c.cpu; });
    out.cpus.push_back(cpu_model(s.cpus[i], was));
  }
  out.procs_running = s.procs_running;
  out.procs_blocked = s.procs_blocked;
  out.observer_cpu_pct.reset();
  if (p != nullptr && now.observer_cpu_us && previous->observer_cpu_us &&
      *now.observer_cpu_us >= *previous->observer_cpu_us)
    out.observer_cpu_pct =
        static_cast<double>(*now.observer_cpu_us - *previous->observer_cpu_us) / 1e4 / dt_s;

  MemoryModel& m = out.memory;
  m = MemoryModel{};
  m.total = s.memory.total;
  m.available = s.memory.available;
  m.used = delta(s.memory.total, s.memory.available);
  m.cache = s.memory.cached + s.memory.buffers;  // free(1)'s buff/cache without slab
  m.dirty = s.memory.dirty;
  m.swap_total = s.memory.swap_total;
  m.swap_used = delta(s.memory.swap_total, s.memory.swap_free);

  out.context_switches_s = 0;
  out.forks_s = 0;
  if (p != nullptr) {
    out.context_switches_s = per_s(s.context_switches, p->context_switches, dt_s);
    out.forks_s = per_s(s.processes_forked, p->processes_forked, dt_s);
  }

  if (s.activity_carried && before != nullptr) {
    carry_activity(*before, out);
    return;
  }
  // The activity counters' rates over the span between their readings (System::activity_ns),
  // which is the samples' when both were read with their sample. A carried reading without the
  // model before: no rates.
  const auto read_at = [](const Sample& x) {
    return x.system.activity_ns != 0 ? x.system.activity_ns : x.monotonic_ns;
  };
  double activity_dt = dt_s;
  if (p != nullptr && (s.activity_ns != 0 || p->activity_ns != 0))
    activity_dt = static_cast<double>(read_at(now) - read_at(*previous)) / 1e9;
  model_activity(now, activity_dt > 0 ? previous : nullptr, activity_dt, out);
}

void model_cgroup(const Sample& now, const Sample* previous, double dt_s, Model& out) {
  out.cgroup.reset();
  if (!now.cgroup) return;
  const Cgroup& c = *now.cgroup;
  CgroupModel& m = out.cgroup.emplace();
  m.path = c.path;
  m.version = c.version;
  m.cpu_quota_cpus = c.cpu_quota_cpus;
  m.memory_bytes = c.memory_bytes;
  m.memory_limit_bytes = c.memory_limit_bytes;
  m.memory_peak_bytes = c.memory_peak_bytes;
  m.swap_bytes = c.swap_bytes;
  m.pids = c.pids;
  if (c.memory_bytes && c.memory_limit_bytes && *c.memory_limit_bytes > 0)
    m.memory_limit_pct =
        static_cast<double>(*c.memory_bytes) / static_cast<double>(*c.memory_limit_bytes) * 100;

  // Rates only against the same group (the job's group may change between two samples).
  const Cgroup* b =
      previous != nullptr && dt_s > 0 && previous->cgroup && previous->cgroup->path == c.path
          ? &*previous->cgroup
          : nullptr;
  if (b == nullptr) return;
  // Percent of one CPU from microseconds: Δµs / (dt · 1e6) · 100.
  auto pct = [&](const std::optional<std::uint64_t>& x,
                 const std::optional<std::uint64_t>& y) -> std::optional<double> {
    const auto d = opt_delta(x, y);
    if (!d) return std::nullopt;
    return static_cast<double>(*d) / (dt_s * 1e6) * 100;
  };
  auto rate = [&](const std::optional<std::uint64_t>& x,
                  const std::optional<std::uint64_t>& y) -> std::optional<double> {
    const auto d = opt_delta(x, y);
    if (!d) return std::nullopt;
    return static_cast<double>(*d) / dt_s;
  };
  m.cpu_pct = pct(c.cpu_usage_us, b->cpu_usage_us);
  m.user_pct = pct(c.cpu_user_us, b->cpu_user_us);
  m.system_pct = pct(c.cpu_system_us, b->cpu_system_us);
  // throttled time is summed over the CPUs' run queues (kernel/sched/fair.c), so like cpu_pct
  // it is of one CPU and may pass 100 on a group spread over several CPUs.
  m.throttled_pct = pct(c.throttled_us, b->throttled_us);
  const auto periods = opt_delta(c.nr_periods, b->nr_periods);
  const auto throttled = opt_delta(c.nr_throttled, b->nr_throttled);
  if (periods && throttled)
    m.throttled_periods_pct =
        *periods > 0
            ? clamp_pct(static_cast<double>(*throttled) / static_cast<double>(*periods) * 100)
            : 0.0;
  m.failcnt_delta = opt_delta(c.failcnt, b->failcnt);
  m.oom_kills_delta = opt_delta(c.events_oom_kill, b->events_oom_kill);
  m.refault_file_s = rate(c.workingset_refault_file, b->workingset_refault_file);
  m.major_faults_s = rate(c.pgmajfault, b->pgmajfault);
  m.pressure = pressures_model(c.pressure, &b->pressure, dt_s);
}

}  // namespace dltune::monitor

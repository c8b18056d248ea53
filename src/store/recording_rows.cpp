// One bind/read pair per table, in the column order of recording_schema.cpp's tables. The
// round-trip test fills every field with a distinct value, so a column left out of either side
// (or bound out of order) fails it.
#include <cstring>

#include "store/recording_sql.hpp"

namespace dltune::store::sql {

namespace {

using namespace monitor;

void bind_pressures(Binder& b, const Pressures& p) {
  for (const auto* r : {&p.cpu, &p.memory, &p.io}) {
    const PressureLine* lines[] = {r->has_value() ? &(*r)->some : nullptr,
                                   r->has_value() && (*r)->full ? &*(*r)->full : nullptr};
    for (const PressureLine* l : lines) {
      if (l == nullptr) {
        for (int i = 0; i < 4; ++i) b.null();
        continue;
      }
      b.u(l->total_us);
      b.d(l->avg10);
      b.d(l->avg60);
      b.d(l->avg300);
    }
  }
}

// A resource is present when its "some" total is not NULL; its "full" line likewise.
std::optional<PressureLine> read_line(Columns& c) {
  if (c.null_here()) {
    c.i += 4;
    return std::nullopt;
  }
  PressureLine l;
  l.total_us = c.u();
  l.avg10 = c.d();
  l.avg60 = c.d();
  l.avg300 = c.d();
  return l;
}

Pressures read_pressures(Columns& c) {
  Pressures p;
  for (auto* r : {&p.cpu, &p.memory, &p.io}) {
    auto some = read_line(c);
    auto full = read_line(c);
    if (some) *r = Pressure{*some, full};
  }
  return p;
}

// process_info.role, as text so that sqlite3 shows it: role_name()'s names.
constexpr Role kRoles[] = {Role::kOther, Role::kMain, Role::kWorker, Role::kChild, Role::kRank};

std::string_view role_text(Role role) {
  return monitor::role_name(role);
}

Role role_from(std::string_view name) {
  for (const auto r : kRoles)
    if (name == monitor::role_name(r)) return r;
  return Role::kOther;
}

}  // namespace

bool Columns::null_here() const {
  return !st.optional_int64_at(i).has_value();
}

void bind_sample(Binder& b, std::int64_t id, const Sample& s) {
  const System& y = s.system;
  b.s(id);
  b.s(s.wall_ns);
  b.s(s.monotonic_ns);
  b.u(s.ticks_per_second);
  b.u(s.page_size);
  for (auto v : {y.total.user, y.total.nice, y.total.system, y.total.idle, y.total.iowait,
                 y.total.irq, y.total.softirq, y.total.steal, y.context_switches,
                 y.processes_forked, y.procs_running, y.procs_blocked})
    b.u(v);
  const Memory& m = y.memory;
  for (auto v : {m.total, m.free, m.available, m.buffers, m.cached, m.shmem, m.swap_total,
                 m.swap_free, m.dirty, m.writeback, m.anon_huge})
    b.u(v);
  b.ou(m.swap_cached);
  const VmStat& v = y.vm;
  for (auto x : {v.pswpin, v.pswpout, v.pgfault, v.pgmajfault, v.pgscan, v.pgsteal,
                 v.workingset_refault_file, v.workingset_refault_anon, v.thp_fault_alloc,
                 v.thp_fault_fallback, v.thp_collapse_alloc, v.compact_stall, v.oom_kill})
    b.u(x);
  bind_pressures(b, y.pressure);
  b.ou(s.observer_cpu_us);
}

void read_sample(Columns& c, Sample& s) {
  System& y = s.system;
  c.i++;  // id
  s.wall_ns = c.s();
  s.monotonic_ns = c.s();
  s.ticks_per_second = c.u();
  s.page_size = c.u();
  y.total.cpu = -1;
  for (auto* v : {&y.total.user, &y.total.nice, &y.total.system, &y.total.idle, &y.total.iowait,
                  &y.total.irq, &y.total.softirq, &y.total.steal, &y.context_switches,
                  &y.processes_forked, &y.procs_running, &y.procs_blocked})
    *v = c.u();
  Memory& m = y.memory;
  for (auto* v : {&m.total, &m.free, &m.available, &m.buffers, &m.cached, &m.shmem, &m.swap_total,
                  &m.swap_free, &m.dirty, &m.writeback, &m.anon_huge})
    *v = c.u();
  m.swap_cached = c.ou<std::uint64_t>();
  VmStat& v = y.vm;
  for (auto* x : {&v.pswpin, &v.pswpout, &v.pgfault, &v.pgmajfault, &v.pgscan, &v.pgsteal,
                  &v.workingset_refault_file, &v.workingset_refault_anon, &v.thp_fault_alloc,
                  &v.thp_fault_fallback, &v.thp_collapse_alloc, &v.compact_stall, &v.oom_kill})
    *x = c.u();
  y.pressure = read_pressures(c);
  s.observer_cpu_us = c.ou<std::uint64_t>();
}

void bind_cpu(Binder& b, std::int64_t id, const CpuTimes& t) {
  b.s(id);
  b.s(t.cpu);
  for (auto v : {t.user, t.nice, t.system, t.idle, t.iowait, t.irq, t.softirq, t.steal}) b.u(v);
}

CpuTimes read_cpu(Columns& c) {
  CpuTimes t;
  c.i++;
  t.cpu = static_cast<int>(c.s());
  for (auto* v : {&t.user, &t.nice, &t.system, &t.idle, &t.iowait, &t.irq, &t.softirq, &t.steal})
    *v = c.u();
  return t;
}

void bind_disk(Binder& b, std::int64_t id, int seq, const Disk& d) {
  b.s(id);
  b.s(seq);
  b.t(d.name);
  for (auto v : {d.reads, d.read_sectors, d.read_ms, d.writes, d.write_sectors, d.write_ms,
                 d.in_flight, d.io_ms, d.weighted_io_ms})
    b.u(v);
}

Disk read_disk(Columns& c) {
  Disk d;
  c.i += 2;
  d.name = c.t();
  for (auto* v : {&d.reads, &d.read_sectors, &d.read_ms, &d.writes, &d.write_sectors, &d.write_ms,
                  &d.in_flight, &d.io_ms, &d.weighted_io_ms})
    *v = c.u();
  return d;
}

void bind_net(Binder& b, std::int64_t id, int seq, const NetDevice& n) {
  b.s(id);
  b.s(seq);
  b.t(n.name);
  for (auto v : {n.rx_bytes, n.rx_packets, n.rx_errors, n.rx_dropped, n.tx_bytes, n.tx_packets,
                 n.tx_errors, n.tx_dropped})
    b.u(v);
}

NetDevice read_net(Columns& c) {
  NetDevice n;
  c.i += 2;
  n.name = c.t();
  for (auto* v : {&n.rx_bytes, &n.rx_packets, &n.rx_errors, &n.rx_dropped, &n.tx_bytes,
                  &n.tx_packets, &n.tx_errors, &n.tx_dropped})
    *v = c.u();
  return n;
}

void bind_cgroup(Binder& b, std::int64_t id, const Cgroup& g) {
  b.s(id);
  b.t(g.path);
  b.t(g.version);
  for (const auto* v : {&g.cpu_usage_us, &g.cpu_user_us, &g.cpu_system_us, &g.nr_periods,
                        &g.nr_throttled, &g.throttled_us})
    b.ou(*v);
  b.od(g.cpu_quota_cpus);
  for (const auto* v :
       {&g.memory_bytes, &g.memory_limit_bytes, &g.memory_peak_bytes, &g.swap_bytes, &g.anon_bytes,
        &g.file_bytes, &g.failcnt, &g.events_high, &g.events_oom, &g.events_oom_kill,
        &g.workingset_refault_file, &g.workingset_refault_anon, &g.pgmajfault, &g.pids})
    b.ou(*v);
  bind_pressures(b, g.pressure);
  b.ou(g.cpuset_cpus);
}

Cgroup read_cgroup(Columns& c) {
  Cgroup g;
  c.i++;
  g.path = c.t();
  g.version = c.t();
  for (auto* v : {&g.cpu_usage_us, &g.cpu_user_us, &g.cpu_system_us, &g.nr_periods, &g.nr_throttled,
                  &g.throttled_us})
    *v = c.ou<std::uint64_t>();
  g.cpu_quota_cpus = c.od();
  for (auto* v :
       {&g.memory_bytes, &g.memory_limit_bytes, &g.memory_peak_bytes, &g.swap_bytes, &g.anon_bytes,
        &g.file_bytes, &g.failcnt, &g.events_high, &g.events_oom, &g.events_oom_kill,
        &g.workingset_refault_file, &g.workingset_refault_anon, &g.pgmajfault, &g.pids})
    *v = c.ou<std::uint64_t>();
  g.pressure = read_pressures(c);
  g.cpuset_cpus = c.ou<std::uint32_t>();
  return g;
}

void bind_process(Binder& b, std::int64_t id, const Process& p) {
  b.s(id);
  b.s(p.pid);
  b.u(p.start_ticks);
  b.t(std::string_view(&p.state, 1));
  for (auto v : {p.utime, p.stime, p.minflt, p.majflt, p.threads, p.rss_bytes}) b.u(v);
  b.s(p.processor);
  for (const auto* v : {&p.run_ns, &p.wait_ns, &p.timeslices, &p.voluntary_switches,
                        &p.involuntary_switches, &p.read_bytes, &p.write_bytes, &p.rchar, &p.wchar})
    b.ou(*v);
}

Process read_process(Columns& c) {
  Process p;
  c.i++;
  p.pid = static_cast<pid_t>(c.s());
  p.start_ticks = c.u();
  const std::string state = c.t();
  p.state = state.empty() ? '?' : state[0];
  for (auto* v : {&p.utime, &p.stime, &p.minflt, &p.majflt, &p.threads, &p.rss_bytes}) *v = c.u();
  p.processor = static_cast<int>(c.s());
  for (auto* v : {&p.run_ns, &p.wait_ns, &p.timeslices, &p.voluntary_switches,
                  &p.involuntary_switches, &p.read_bytes, &p.write_bytes, &p.rchar, &p.wchar})
    *v = c.ou<std::uint64_t>();
  // process_info's columns, joined after the counters.
  p.ppid = static_cast<pid_t>(c.s());
  p.comm = c.t();
  p.cmdline = c.t();
  p.role = role_from(c.t());
  p.rank = c.ou<int>();
  return p;
}

void bind_process_info(Binder& b, std::int64_t id, const Process& p) {
  b.s(p.pid);
  b.u(p.start_ticks);
  b.s(id);
  b.s(p.ppid);
  b.t(p.comm);
  b.t(p.cmdline);
  b.t(role_text(p.role));
  b.ou(p.rank);
}

void bind_gpu(Binder& b, std::int64_t id, const Gpu& g) {
  b.s(id);
  b.u(g.index);
  b.ot(g.uuid);
  b.ot(g.name);
  b.ot(g.pci_bus_id);
  b.ou(g.utilization_gpu_pct);
  b.ou(g.utilization_memory_pct);
  b.ou(g.memory_used_bytes);
  b.ou(g.memory_total_bytes);
  b.od(g.power_watts);
  b.ou(g.temperature_celsius);
  b.ou(g.sm_clock_mhz);
  b.ou(g.memory_clock_mhz);
  b.ou(g.clock_event_reasons);
  b.ou(g.pcie_tx_kib_s);
  b.ou(g.pcie_rx_kib_s);
  b.ou(g.energy_mj);
  b.ou(g.sampled_at_ns);
  b.ou(g.pcie_replay_count);
  b.ou(g.xid_errors);
  b.ou(g.last_xid);
  b.ou(g.ecc_corrected);
  b.ou(g.ecc_uncorrected);
  b.ot(g.vendor);
  b.ou(g.nvlink_tx_kib);
  b.ou(g.nvlink_rx_kib);
  b.ou(g.memory_free_bytes);
  b.ou(g.minor_number);
  b.od(g.sm_active_ratio);
  b.od(g.sm_occupancy_ratio);
  b.od(g.tensor_active_ratio);
  b.od(g.dram_active_ratio);
}

Gpu read_gpu(Columns& c) {
  Gpu g;
  c.i++;
  g.index = static_cast<unsigned>(c.u());
  g.uuid = c.ot();
  g.name = c.ot();
  g.pci_bus_id = c.ot();
  g.utilization_gpu_pct = c.ou<std::uint32_t>();
  g.utilization_memory_pct = c.ou<std::uint32_t>();
  g.memory_used_bytes = c.ou<std::uint64_t>();
  g.memory_total_bytes = c.ou<std::uint64_t>();
  g.power_watts = c.od();
  g.temperature_celsius = c.ou<std::uint32_t>();
  g.sm_clock_mhz = c.ou<std::uint32_t>();
  g.memory_clock_mhz = c.ou<std::uint32_t>();
  g.clock_event_reasons = c.ou<std::uint64_t>();
  g.pcie_tx_kib_s = c.ou<std::uint32_t>();
  g.pcie_rx_kib_s = c.ou<std::uint32_t>();
  g.energy_mj = c.ou<std::uint64_t>();
  g.sampled_at_ns = c.ou<std::int64_t>();
  g.pcie_replay_count = c.ou<std::uint64_t>();
  g.xid_errors = c.ou<std::uint64_t>();
  g.last_xid = c.ou<std::uint32_t>();
  g.ecc_corrected = c.ou<std::uint64_t>();
  g.ecc_uncorrected = c.ou<std::uint64_t>();
  g.vendor = c.ot();
  g.nvlink_tx_kib = c.ou<std::uint64_t>();
  g.nvlink_rx_kib = c.ou<std::uint64_t>();
  g.memory_free_bytes = c.ou<std::uint64_t>();
  g.minor_number = c.ou<std::uint32_t>();
  g.sm_active_ratio = c.od();
  g.sm_occupancy_ratio = c.od();
  g.tensor_active_ratio = c.od();
  g.dram_active_ratio = c.od();
  return g;
}

void bind_gpu_process(Binder& b, std::int64_t id, unsigned gpu, int seq, const GpuProcess& p) {
  b.s(id);
  b.u(gpu);
  b.s(seq);
  b.s(p.pid);
  b.ou(p.used_memory_bytes);
  b.ou(p.sm_util_pct);
}

GpuProcess read_gpu_process(Columns& c, unsigned& gpu) {
  GpuProcess p;
  c.i++;
  gpu = static_cast<unsigned>(c.u());
  c.i++;  // seq
  p.pid = static_cast<pid_t>(c.s());
  p.used_memory_bytes = c.ou<std::uint64_t>();
  p.sm_util_pct = c.ou<std::uint32_t>();
  return p;
}

}  // namespace dltune::store::sql

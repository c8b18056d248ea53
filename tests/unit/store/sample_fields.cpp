// fill_all, fill_empty, realistic: the Samples the recording tests and the soak benchmark write.
#include "unit/store/sample_fields.hpp"

#include <string>

namespace dltune::testing {

namespace {

using namespace monitor;

struct Counter {
  std::uint64_t n;
  std::uint64_t operator()() { return n++; }
  double d() { return static_cast<double>(n++) + 0.25; }  // not an integer: stored as REAL
  std::uint32_t u32() { return static_cast<std::uint32_t>(n++); }
  std::string s(const char* what) { return what + std::to_string(n++); }
};

void fill(PressureLine& l, Counter& c) {
  l.total_us = c();
  l.avg10 = c.d();
  l.avg60 = c.d();
  l.avg300 = c.d();
}

Pressures full_pressures(Counter& c) {
  Pressures p;
  for (auto* r : {&p.cpu, &p.memory, &p.io}) {
    Pressure x;
    fill(x.some, c);
    x.full.emplace();
    fill(*x.full, c);
    *r = x;
  }
  return p;
}

CpuTimes cpu_times(int cpu, Counter& c) {
  CpuTimes t;
  t.cpu = cpu;
  for (auto* v : {&t.user, &t.nice, &t.system, &t.idle, &t.iowait, &t.irq, &t.softirq, &t.steal})
    *v = c();
  return t;
}

void fill_scalars(Sample& s, Counter& c) {
  s.wall_ns = static_cast<std::int64_t>(c()) + 1'700'000'000'000'000'000;
  s.monotonic_ns = static_cast<std::int64_t>(c());
  s.ticks_per_second = c();
  s.page_size = c();
  System& y = s.system;
  y.total = cpu_times(-1, c);
  for (auto* v : {&y.context_switches, &y.processes_forked, &y.procs_running, &y.procs_blocked})
    *v = c();
  Memory& m = y.memory;
  for (auto* v : {&m.total, &m.free, &m.available, &m.buffers, &m.cached, &m.shmem, &m.swap_total,
                  &m.swap_free, &m.dirty, &m.writeback, &m.anon_huge})
    *v = c();
  VmStat& v = y.vm;
  for (auto* x : {&v.pswpin, &v.pswpout, &v.pgfault, &v.pgmajfault, &v.pgscan, &v.pgsteal,
                  &v.workingset_refault_file, &v.workingset_refault_anon, &v.thp_fault_alloc,
                  &v.thp_fault_fallback, &v.thp_collapse_alloc, &v.compact_stall, &v.oom_kill})
    *x = c();
}

Process full_process(pid_t pid, Counter& c) {
  Process p;
  p.pid = pid;
  p.ppid = static_cast<pid_t>(c());
  p.comm = c.s("comm");
  p.cmdline = c.s("python train.py --seed ");
  p.role = Role::kWorker;
  p.rank = static_cast<int>(pid % 7);  // per process, as RANK is (not per sample)
  p.state = 'D';
  p.start_ticks = c();
  for (auto* v : {&p.utime, &p.stime, &p.minflt, &p.majflt, &p.threads, &p.rss_bytes}) *v = c();
  p.processor = static_cast<int>(c());
  for (auto* v : {&p.run_ns, &p.wait_ns, &p.timeslices, &p.voluntary_switches,
                  &p.involuntary_switches, &p.read_bytes, &p.write_bytes, &p.rchar, &p.wchar})
    *v = c();
  return p;
}

Gpu full_gpu(unsigned index, Counter& c) {
  Gpu g;
  g.index = index;
  g.uuid = c.s("GPU-");
  g.name = c.s("NVIDIA H200 ");
  g.pci_bus_id = c.s("00000000:1A:00.");
  g.vendor = c.s("vendor-");
  g.utilization_gpu_pct = c.u32();
  g.utilization_memory_pct = c.u32();
  g.memory_used_bytes = c();
  g.memory_total_bytes = c();
  g.power_watts = c.d();
  g.temperature_celsius = c.u32();
  g.sm_clock_mhz = c.u32();
  g.memory_clock_mhz = c.u32();
  g.clock_event_reasons = c();
  g.pcie_tx_kib_s = c.u32();
  g.pcie_rx_kib_s = c.u32();
  g.energy_mj = c();
  g.sampled_at_ns = static_cast<std::int64_t>(c());
  g.pcie_replay_count = c();
  g.xid_errors = c();
  g.last_xid = static_cast<std::uint32_t>(c());
  g.ecc_corrected = c();
  g.ecc_uncorrected = c();
  g.nvlink_tx_kib = c();
  g.nvlink_rx_kib = c();
  g.memory_free_bytes = c();
  g.minor_number = c.u32();
  g.sm_active_ratio = c.d();
  g.sm_occupancy_ratio = c.d();
  g.tensor_active_ratio = c.d();
  g.dram_active_ratio = c.d();
  for (int i = 0; i < 2; ++i) g.processes.push_back({static_cast<pid_t>(c()), c(), c.u32()});
  return g;
}

}  // namespace

Sample fill_all(std::uint64_t n) {
  Counter c{n};
  Sample s;
  fill_scalars(s, c);
  System& y = s.system;
  y.memory.swap_cached = c();
  y.pressure = full_pressures(c);
  for (int cpu : {0, 1, 3}) y.cpus.push_back(cpu_times(cpu, c));
  for (const char* name : {"vdb", "nvme0n1", "vda"}) {  // not in name order: kept as written
    Disk d;
    d.name = name;
    for (auto* v : {&d.reads, &d.read_sectors, &d.read_ms, &d.writes, &d.write_sectors, &d.write_ms,
                    &d.in_flight, &d.io_ms, &d.weighted_io_ms})
      *v = c();
    y.disks.push_back(d);
  }
  for (const char* name : {"eth1", "eth0"}) {
    NetDevice d;
    d.name = name;
    for (auto* v : {&d.rx_bytes, &d.rx_packets, &d.rx_errors, &d.rx_dropped, &d.tx_bytes,
                    &d.tx_packets, &d.tx_errors, &d.tx_dropped})
      *v = c();
    y.net.push_back(d);
  }
  Cgroup g;
  g.path = c.s("/dltune/job-");
  g.version = "v2";
  for (auto* v : {&g.cpu_usage_us,
                  &g.cpu_user_us,
                  &g.cpu_system_us,
                  &g.nr_periods,
                  &g.nr_throttled,
                  &g.throttled_us,
                  &g.memory_bytes,
                  &g.memory_limit_bytes,
                  &g.memory_peak_bytes,
                  &g.swap_bytes,
                  &g.anon_bytes,
                  &g.file_bytes,
                  &g.failcnt,
                  &g.events_high,
                  &g.events_oom,
                  &g.events_oom_kill,
                  &g.workingset_refault_file,
                  &g.workingset_refault_anon,
                  &g.pgmajfault,
                  &g.pids})
    *v = c();
  g.cpu_quota_cpus = c.d();
  g.cpuset_cpus = c.u32();
  g.pressure = full_pressures(c);
  s.cgroup = g;
  for (pid_t pid : {101, 205, 4000}) s.processes.push_back(full_process(pid, c));
  s.processes[0].role = Role::kMain;
  s.processes[2].role = Role::kChild;
  for (unsigned i : {0u, 1u}) s.gpus.push_back(full_gpu(i, c));
  s.observer_cpu_us = c();
  // Counters past 2^63 are kept bit for bit.
  s.system.vm.oom_kill = ~std::uint64_t{0} - 5;
  return s;
}

Sample fill_empty(std::uint64_t n) {
  Counter c{n};
  Sample s;
  fill_scalars(s, c);
  // The cpu resource with no "full" line (before Linux 5.13): the one partial case.
  s.system.pressure.cpu = Pressure{};
  fill(s.system.pressure.cpu->some, c);
  // Present, every optional inside it empty. (The strings are built by constructors: assigning
  // short literals here made g++ 12 -O2 report false -Wmaybe-uninitialized and -Wrestrict.)
  s.cgroup.emplace();
  s.cgroup->path = std::string(1, '/');
  s.cgroup->version = std::string(c.s("v"));
  Process p;
  p.pid = 7;
  s.processes.push_back(p);  // every optional empty, comm and cmdline empty
  Gpu gpu;
  gpu.index = 3;
  s.gpus.push_back(gpu);
  return s;
}

Sample realistic(int t) {
  const auto u = static_cast<std::uint64_t>(t);
  Sample s;
  s.wall_ns = 1'764'500'000'000'000'000 + static_cast<std::int64_t>(u) * 1'000'000'000;
  s.monotonic_ns = 86'400'000'000'000 + static_cast<std::int64_t>(u) * 1'000'000'000;
  System& y = s.system;
  for (int cpu = 0; cpu < 2; ++cpu) {
    CpuTimes ct{cpu, 8'000'000 + 90 * u, 1200, 900'000 + 8 * u, 12'000'000 + u, 20'000 + (u % 3),
                0,   15'000 + u / 5,     3000};
    y.cpus.push_back(ct);
  }
  y.total = CpuTimes{-1, 16'000'000 + 180 * u, 2400, 1'800'000 + 16 * u, 24'000'000 + 2 * u, 40'000,
                     0,  30'000 + u / 3,       6000};
  y.context_switches = 900'000'000 + 4100 * u;
  y.processes_forked = 2'400'000 + u / 7;
  y.procs_running = 3;
  y.memory = Memory{8'329'342'976,
                    412'000'000 - 1024 * (u % 500),
                    5'100'000'000,
                    180'000'000,
                    4'600'000'000,
                    310'000'000,
                    2'147'479'552,
                    2'100'000'000,
                    4096 * (u % 40),
                    0,
                    0,
                    12'288'000};
  y.vm.pgfault = 700'000'000 + 9000 * u;
  y.vm.pgmajfault = 120'000 + u / 30;
  y.vm.workingset_refault_file = 40'000 + u / 10;
  Pressure p;
  p.some = PressureLine{0.12, 0.34, 0.20, 8'000'000'000 + 3000 * u};
  p.full = PressureLine{0, 0, 0, 1'000'000 + u};
  y.pressure.cpu = y.pressure.memory = y.pressure.io = p;
  for (const char* name : {"vda", "vdb"})
    y.disks.push_back(Disk{name, 900'000 + u, 40'000'000 + 512 * u, 600'000 + 3 * u,
                           2'000'000 + 2 * u, 90'000'000 + 300 * u, 4'000'000 + 4 * u, u % 2,
                           3'000'000 + 5 * u, 9'000'000 + 11 * u});
  for (const char* name : {"eth0", "ens5"})
    y.net.push_back(NetDevice{name, 80'000'000'000 + 600'000 * u, 60'000'000 + 400 * u, 0, 12,
                              9'000'000'000 + 90'000 * u, 20'000'000 + 200 * u, 0, 0});
  Cgroup g;
  g.path = "/dltune/job-4242";
  g.version = "v2";
  g.cpu_usage_us = 7'200'000'000 + 1'800'000 * u;
  g.cpu_user_us = 6'000'000'000 + 1'600'000 * u;
  g.cpu_system_us = 1'200'000'000 + 200'000 * u;
  g.nr_periods = g.nr_throttled = g.throttled_us = 0;
  g.memory_bytes = 6'000'000'000 + 4096 * (u % 1000);
  g.memory_peak_bytes = 6'500'000'000;
  g.anon_bytes = 5'000'000'000;
  g.file_bytes = 900'000'000;
  g.swap_bytes = g.failcnt = g.events_high = g.events_oom = g.events_oom_kill = 0;
  g.workingset_refault_file = 1000 + u / 20;
  g.workingset_refault_anon = 0;
  g.pgmajfault = 3000 + u / 40;
  g.pressure = y.pressure;
  g.pids = 20;
  s.cgroup = g;
  for (int i = 0; i < 20; ++i) {
    Process pr;
    pr.pid = 4242 + i * 3;
    pr.ppid = i == 0 ? 4100 : 4242;
    pr.comm = i == 0 ? "python" : "pt_data_worker";
    pr.cmdline = "/usr/bin/python3 train.py --data /data/imagenet --workers 19 --batch-size 256";
    pr.role = i == 0 ? Role::kMain : Role::kWorker;
    pr.state = (t + i) % 3 == 0 ? 'R' : 'S';
    pr.start_ticks = 8'640'000 + static_cast<std::uint64_t>(i);
    pr.utime = 40'000 + (i == 0 ? 60 : 5) * u;
    pr.stime = 9'000 + 2 * u;
    pr.minflt = 2'000'000 + 300 * u;
    pr.majflt = 900 + u / 100;
    pr.threads = i == 0 ? 48 : 4;
    pr.rss_bytes = 900'000'000 + 4096 * ((u * 7 + static_cast<std::uint64_t>(i)) % 900);
    pr.processor = (t + i) % 2;
    pr.run_ns = 400'000'000'000 + 50'000'000 * u;
    pr.wait_ns = 30'000'000'000 + 3'000'000 * u;
    pr.timeslices = 5'000'000 + 800 * u;
    pr.voluntary_switches = 3'000'000 + 700 * u;
    pr.involuntary_switches = 200'000 + 90 * u;
    pr.read_bytes = 50'000'000'000 + 5'000'000 * u;
    pr.write_bytes = 4096 * u;
    pr.rchar = 70'000'000'000 + 6'000'000 * u;
    pr.wchar = 1'000'000 + 200 * u;
    s.processes.push_back(pr);
  }
  return s;
}
}  // namespace dltune::testing

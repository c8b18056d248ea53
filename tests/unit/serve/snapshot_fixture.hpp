#pragma once
// A snapshot with every field filled, by numbers a reader can convert by hand, and hostile
// strings where the kernel or NVML could put any text (a GPU's name, a cgroup's path).
#include <limits>

#include "serve/exposition.hpp"

namespace dltune::serve::testing {

inline constexpr const char* kHostileName = "NVIDIA \"H100\" \\ 80GB\nHBM3";
inline constexpr const char* kHostileCgroup = "/dltune/we\"ird\\job\nname";

struct Fixture {
  monitor::Sample sample;
  std::vector<monitor::Cgroup> jobs;
  std::vector<std::vector<pid_t>> job_members;  // beside jobs
  CheckState check;
  Snapshot snapshot(bool gpus = true, bool with_check = true) const {
    Snapshot s;
    s.version = "0.1.0";
    s.hostname = "gpu-node-07";
    s.sample = &sample;
    s.jobs = jobs;
    s.job_members = job_members;
    s.gpus = gpus;
    s.check = with_check ? &check : nullptr;
    s.stats.samples = 3;
    s.stats.sample_duration_s = 0.0125;
    return s;
  }
};

inline Fixture full_fixture() {
  Fixture f;
  auto& s = f.sample;
  s.wall_ns = 1'700'000'000'500'000'000;
  s.ticks_per_second = 100;
  s.page_size = 4096;
  auto& sys = s.system;
  monitor::CpuTimes c0;
  c0.cpu = 0;
  c0.user = 12345;
  c0.nice = 1;
  c0.system = 250;
  c0.idle = 100000;
  c0.iowait = 7;
  c0.irq = 0;
  c0.softirq = 3;
  c0.steal = 2;
  monitor::CpuTimes c1 = c0;
  c1.cpu = 1;
  c1.user = 50;
  sys.cpus = {c0, c1};
  sys.context_switches = 10742364;
  sys.processes_forked = 155580;
  sys.procs_running = 4;
  sys.procs_blocked = 1;
  auto& m = sys.memory;
  m.total = 24683656ull * 1024;
  m.free = 19735812ull * 1024;
  m.available = 23116008ull * 1024;
  m.buffers = 1024;
  m.cached = 3457460ull * 1024;
  m.shmem = 2048;
  m.dirty = 4096;
  m.writeback = 0;
  m.anon_huge = 2097152;
  m.swap_total = 1ull << 30;
  m.swap_free = 1ull << 29;
  auto& v = sys.vm;
  v.pswpin = 3;
  v.pswpout = 5;
  v.pgfault = 862383514;
  v.pgmajfault = 25514;
  v.workingset_refault_file = 26;
  v.thp_fault_alloc = 9;
  v.compact_stall = 1;
  v.oom_kill = 29;
  monitor::Pressure cpu;
  cpu.some.total_us = 6899256696;
  cpu.full = monitor::PressureLine{};
  sys.pressure.cpu = cpu;
  monitor::Pressure mem;
  mem.some.total_us = 76118475;
  sys.pressure.memory = mem;  // no full line: no full series
  // no io pressure at all
  monitor::Disk d;
  d.name = "vda";
  d.reads = 568198;
  d.read_sectors = 14999442;
  d.writes = 401825;
  d.write_sectors = 216241240;
  d.in_flight = 2;
  d.io_ms = 204068;
  sys.disks = {d};
  monitor::NetDevice n;
  n.name = "eth0";
  n.rx_bytes = 67578305;
  n.tx_bytes = 72423;
  n.rx_errors = 1;
  n.tx_errors = 2;
  n.rx_dropped = 3;
  n.tx_dropped = 4;
  sys.net = {n};

  monitor::Gpu g;
  g.index = 0;
  g.uuid = "GPU-8c7d1f00-aaaa-bbbb-cccc-000000000000";
  g.name = kHostileName;
  g.pci_bus_id = "00000000:18:00.0";
  g.utilization_gpu_pct = 87;
  g.utilization_memory_pct = 40;
  g.sm_active_ratio = 0.155;  // NVML GPM (Hopper)
  g.sm_occupancy_ratio = 0.08;
  g.tensor_active_ratio = 0.03;
  g.dram_active_ratio = 0.2;
  g.memory_used_bytes = 553648128;
  g.memory_total_bytes = 85520809984;
  g.memory_free_bytes = 84430290944;  // total less used and a 512 MiB reserve
  g.minor_number = 3;
  g.power_watts = 69.5;
  g.temperature_celsius = 35;
  g.sm_clock_mhz = 1980;
  g.memory_clock_mhz = 2619;
  g.clock_event_reasons = 0x44;  // SwPowerCap | HwThermalSlowdown
  g.pcie_tx_kib_s = 1200;
  g.pcie_rx_kib_s = 350000;
  g.energy_mj = 123456789;
  g.processes = {{4242, 1073741824, 87}, {4243, std::nullopt, 0}};
  g.sampled_at_ns = 1;
  g.pcie_replay_count = 7;
  g.xid_errors = 2;
  g.last_xid = 79;
  g.xid_codes = {{13, 1}, {79, 1}, {4000, 0}};  // 4000: no such Xid in the table
  g.ecc_corrected = 12;
  g.ecc_uncorrected = 0;
  g.nvlink_tx_kib = 5000;  // 5 120 000 bytes
  g.nvlink_rx_kib = 0;     // nothing received yet: a real 0, written
  monitor::Gpu bare;       // NVML listed it and said nothing else
  bare.index = 1;
  bare.uuid = "GPU-bare";
  bare.power_watts = std::numeric_limits<double>::quiet_NaN();
  s.gpus = {g, bare};
  // PCI has a third GPU that NVML does not list (it fell off the bus).
  s.gpu_slots = {{"00000000:18:00.0", "nvidia", true, 0u},
                 {"00000000:2A:00.0", "nvidia", true, 1u},
                 {"00000000:9A:00.0", "nvidia", false, std::nullopt}};

  monitor::Cgroup job;
  job.path = "/dltune/job-1";
  job.version = "v1";
  job.cpu_usage_us = 34891912642;
  job.cpu_user_us = 31745280000;
  job.cpu_system_us = 3146620000;
  job.nr_periods = 200;
  job.nr_throttled = 50;
  job.throttled_us = 1500000;
  job.cpu_quota_cpus = 1.5;
  job.cpuset_cpus = 6;
  job.memory_bytes = 4100096;
  job.memory_limit_bytes = 536870912;
  job.memory_peak_bytes = 5242880;
  job.swap_bytes = 4096;
  job.anon_bytes = 1873568;
  job.file_bytes = 976544;
  job.failcnt = 43;
  job.events_oom = 1;
  job.events_oom_kill = 2;
  job.workingset_refault_file = 27;
  job.pgmajfault = 5;
  monitor::Pressure jio;
  jio.some.total_us = 250000;
  jio.full = monitor::PressureLine{0, 0, 0, 125000};
  job.pressure.io = jio;
  job.pids = 3;
  monitor::Cgroup weird;  // no limit, nothing but its memory
  weird.path = kHostileCgroup;
  weird.version = "v2";
  weird.memory_bytes = 1;
  f.jobs = {job, weird};
  // 4242 (1 GiB on GPU 0) is the job's; 4243 is no job's.
  f.job_members = {{4242, 4250}, {}};

  f.check.ran = true;
  f.check.ok = true;
  f.check.findings = {{"vm.swappiness", "warn", "memory"}, {"gpu.persistence", "critical", "gpu"}};
  f.check.counts = {10, 0, 1, 1};
  f.check.unknown = {{"gpu.ecc", "critical", "gpu", 2}};
  f.check.unknown_count = 2;
  f.check.finished_wall_ns = 1'700'000'100'000'000'000;
  f.check.duration_s = 0.25;
  return f;
}

}  // namespace dltune::serve::testing

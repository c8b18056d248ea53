// The host and cgroup parts of the Model against rates computed by hand (the arithmetic is in
// the comments): no previous sample, dt 0, counters that went backwards, CPUs matched by number.
#include <gtest/gtest.h>

#include "monitor/model.hpp"

namespace dltune::monitor::model_system_test {
namespace {

CpuTimes cpu(int n, std::uint64_t user, std::uint64_t nice, std::uint64_t system,
             std::uint64_t idle, std::uint64_t iowait, std::uint64_t irq, std::uint64_t softirq,
             std::uint64_t steal) {
  CpuTimes c;
  c.cpu = n;
  c.user = user;
  c.nice = nice;
  c.system = system;
  c.idle = idle;
  c.iowait = iowait;
  c.irq = irq;
  c.softirq = softirq;
  c.steal = steal;
  return c;
}

Pressure psi(std::uint64_t some_us, std::optional<std::uint64_t> full_us, double avg10 = 0) {
  Pressure p;
  p.some.total_us = some_us;
  p.some.avg10 = avg10;
  if (full_us) {
    p.full.emplace();
    p.full->total_us = *full_us;
  }
  return p;
}

// Two samples 2 s apart.
struct Pair {
  Sample before, now;
  Pair() {
    before.page_size = now.page_size = 4096;
    before.system.total = cpu(-1, 100, 0, 50, 1000, 10, 0, 0, 0);
    // Δ: user 60 + nice 20 = 80, system 20 + irq 5 + softirq 15 = 40, idle 60, iowait 10,
    // steal 10; all = 80 + 40 + 60 + 10 + 10 = 200 ticks.
    now.system.total = cpu(-1, 160, 20, 70, 1060, 20, 5, 15, 10);
    before.system.cpus = {cpu(0, 0, 0, 0, 100, 0, 0, 0, 0), cpu(1, 0, 0, 0, 100, 0, 0, 0, 0)};
    // cpu1 went offline; cpu2 came; cpu0: Δuser 50, Δidle 50 → 50 % / 50 %.
    now.system.cpus = {cpu(0, 50, 0, 0, 150, 0, 0, 0, 0), cpu(2, 10, 0, 0, 10, 0, 0, 0, 0)};
    before.system.context_switches = 1000;
    now.system.context_switches = 3000;  // 2000 / 2 s = 1000/s
    before.system.processes_forked = 10;
    now.system.processes_forked = 14;  // 4 / 2 = 2/s
    now.system.procs_running = 3;
    now.system.procs_blocked = 1;
    now.system.memory.total = 1000;
    now.system.memory.available = 400;
    now.system.memory.cached = 100;
    now.system.memory.buffers = 20;
    now.system.memory.swap_total = 500;
    now.system.memory.swap_free = 200;
    before.system.vm.pswpin = 10;
    now.system.vm.pswpin = 30;  // 20 pages · 4096 / 2 s = 40960 B/s
    before.system.vm.pgfault = 1000;
    now.system.vm.pgfault = 1600;  // (600 - 100 major) / 2 = 250/s minor
    before.system.vm.pgmajfault = 100;
    now.system.vm.pgmajfault = 200;  // 100 / 2 = 50/s
    before.system.vm.workingset_refault_file = 7;
    now.system.vm.workingset_refault_file = 27;  // 20 / 2 = 10/s
    before.system.vm.oom_kill = 2;
    now.system.vm.oom_kill = 3;
    // PSI cpu: Δsome 500000 µs over 2 s = 0.5 s / 2 s = 25 %; Δfull 100000 µs = 5 %.
    before.system.pressure.cpu = psi(1'000'000, 0);
    now.system.pressure.cpu = psi(1'500'000, 100'000, 12.5);
    // PSI io: Δsome 3 s in a 2 s interval (rounding in the kernel): clamped to 100 %.
    before.system.pressure.io = psi(0, std::nullopt);
    now.system.pressure.io = psi(3'000'000, std::nullopt);
    Disk vda;
    vda.name = "vda";
    before.system.disks = {vda};
    // Δreads 100, Δread_sectors 2000 (· 512 / 2 = 512000 B/s), Δwrites 100,
    // Δread_ms 300 + Δwrite_ms 100 = 400 ms / 200 I/Os = 2 ms await; Δio_ms 500 of 2000 = 25 %.
    vda.reads = 100;
    vda.read_sectors = 2000;
    vda.read_ms = 300;
    vda.writes = 100;
    vda.write_ms = 100;
    vda.io_ms = 500;
    vda.in_flight = 2;
    Disk sdb;
    sdb.name = "sdb";  // new: no rates
    sdb.reads = 1'000'000;
    now.system.disks = {sdb, vda};
    NetDevice eth;
    eth.name = "eth0";
    eth.rx_bytes = 5000;
    before.system.net = {eth};
    eth.rx_bytes = 1000;  // went backwards (the device re-created): 0
    eth.tx_bytes = 400;   // 400 / 2 = 200 B/s
    eth.rx_errors = 2;
    eth.tx_dropped = 4;
    now.system.net = {eth};
  }
};

TEST(ModelSystem, RatesFromHandComputedDeltas) {
  Pair p;
  Model m;
  model_system(p.now, &p.before, 2.0, m);
  EXPECT_DOUBLE_EQ(m.cpu.user_pct, 40);    // 80 / 200
  EXPECT_DOUBLE_EQ(m.cpu.system_pct, 20);  // 40 / 200
  EXPECT_DOUBLE_EQ(m.cpu.idle_pct, 30);    // 60 / 200
  EXPECT_DOUBLE_EQ(m.cpu.iowait_pct, 5);   // 10 / 200
  EXPECT_DOUBLE_EQ(m.cpu.steal_pct, 5);    // 10 / 200
  EXPECT_DOUBLE_EQ(m.cpu.busy_pct(), 65);
  ASSERT_EQ(m.cpus.size(), 2u);
  EXPECT_EQ(m.cpus[0].cpu, 0);
  EXPECT_DOUBLE_EQ(m.cpus[0].user_pct, 50);
  EXPECT_EQ(m.cpus[1].cpu, 2);  // cpu2 is not matched with the old cpu1 at that position
  EXPECT_DOUBLE_EQ(m.cpus[1].user_pct, 0);
  EXPECT_DOUBLE_EQ(m.context_switches_s, 1000);
  EXPECT_DOUBLE_EQ(m.forks_s, 2);
  EXPECT_EQ(m.procs_running, 3u);
  EXPECT_EQ(m.procs_blocked, 1u);
  EXPECT_EQ(m.memory.used, 600u);  // 1000 - 400
  EXPECT_EQ(m.memory.cache, 120u);
  EXPECT_EQ(m.memory.swap_used, 300u);
  EXPECT_DOUBLE_EQ(m.memory.swap_in_bytes_s, 40960);
  EXPECT_DOUBLE_EQ(m.memory.major_faults_s, 50);
  EXPECT_DOUBLE_EQ(m.memory.minor_faults_s, 250);
  EXPECT_DOUBLE_EQ(m.memory.refault_file_s, 10);
  EXPECT_EQ(m.memory.oom_kills, 1u);
  ASSERT_TRUE(m.pressure.cpu);
  EXPECT_DOUBLE_EQ(m.pressure.cpu->some_pct, 25);
  ASSERT_TRUE(m.pressure.cpu->full_pct);
  EXPECT_DOUBLE_EQ(*m.pressure.cpu->full_pct, 5);
  EXPECT_DOUBLE_EQ(m.pressure.cpu->avg10_some, 12.5);
  ASSERT_TRUE(m.pressure.io);
  EXPECT_DOUBLE_EQ(m.pressure.io->some_pct, 100);
  EXPECT_FALSE(m.pressure.io->full_pct);
  EXPECT_FALSE(m.pressure.memory);
  ASSERT_EQ(m.disks.size(), 2u);
  EXPECT_EQ(m.disks[0].name, "sdb");
  EXPECT_DOUBLE_EQ(m.disks[0].reads_s, 0);  // new disk: zero rates
  EXPECT_EQ(m.disks[1].name, "vda");
  EXPECT_DOUBLE_EQ(m.disks[1].read_bytes_s, 512000);
  EXPECT_DOUBLE_EQ(m.disks[1].reads_s, 50);
  EXPECT_DOUBLE_EQ(m.disks[1].writes_s, 50);
  EXPECT_DOUBLE_EQ(m.disks[1].await_ms, 2);
  EXPECT_DOUBLE_EQ(m.disks[1].util_pct, 25);
  EXPECT_EQ(m.disks[1].in_flight, 2u);
  ASSERT_EQ(m.net.size(), 1u);
  EXPECT_DOUBLE_EQ(m.net[0].rx_bytes_s, 0);
  EXPECT_DOUBLE_EQ(m.net[0].tx_bytes_s, 200);
  EXPECT_DOUBLE_EQ(m.net[0].errors_s, 1);   // 2 / 2
  EXPECT_DOUBLE_EQ(m.net[0].dropped_s, 2);  // 4 / 2
}

TEST(ModelSystem, NoPreviousOrZeroDtGivesNoRatesButTheInstantValues) {
  Pair p;
  for (const Sample* prev : std::initializer_list<const Sample*>{nullptr, &p.before}) {
    Model m;
    model_system(p.now, prev, 0.0, m);
    EXPECT_DOUBLE_EQ(m.cpu.user_pct, 0);
    EXPECT_DOUBLE_EQ(m.context_switches_s, 0);
    EXPECT_DOUBLE_EQ(m.memory.swap_in_bytes_s, 0);
    EXPECT_EQ(m.memory.oom_kills, 0u);
    EXPECT_EQ(m.memory.used, 600u);
    EXPECT_FALSE(m.pressure.cpu);
    ASSERT_EQ(m.disks.size(), 2u);
    EXPECT_DOUBLE_EQ(m.disks[1].reads_s, 0);
    EXPECT_EQ(m.disks[1].in_flight, 2u);
    EXPECT_EQ(m.cpus.size(), 2u);
  }
}

TEST(ModelSystem, CountersThatWentBackwardsGiveZeroNeverNegative) {
  Pair p;
  std::swap(p.now, p.before);  // every counter went backwards
  Model m;
  model_system(p.now, &p.before, 2.0, m);
  EXPECT_DOUBLE_EQ(m.cpu.user_pct, 0);
  EXPECT_DOUBLE_EQ(m.cpu.idle_pct, 0);
  EXPECT_DOUBLE_EQ(m.context_switches_s, 0);
  EXPECT_DOUBLE_EQ(m.memory.minor_faults_s, 0);
  EXPECT_EQ(m.memory.oom_kills, 0u);
  ASSERT_TRUE(m.pressure.cpu);
  EXPECT_DOUBLE_EQ(m.pressure.cpu->some_pct, 0);
  for (const auto& d : m.disks) EXPECT_DOUBLE_EQ(d.read_bytes_s, 0);
  // One CPU's idle reset alone (hot-unplug): only that part is 0; the rest are shares of what
  // did advance. before idle 100, now idle 5: Δidle 0; Δuser 50 → user 100 %.
  Sample a, b;
  a.system.total = cpu(-1, 0, 0, 0, 100, 0, 0, 0, 0);
  b.system.total = cpu(-1, 50, 0, 0, 5, 0, 0, 0, 0);
  model_system(b, &a, 1.0, m);
  EXPECT_DOUBLE_EQ(m.cpu.user_pct, 100);
  EXPECT_DOUBLE_EQ(m.cpu.idle_pct, 0);
}

// A sample that carries the activity counters' reading (System::activity_carried) keeps the
// rates of the model before; the next reading's rates are over the span between the two
// readings, not the last interval.
TEST(ModelSystem, CarriedActivityKeepsTheRatesBeforeAndTheNextReadingSpansBoth) {
  Pair p;
  p.before.monotonic_ns = 10'000'000'000;
  p.before.system.activity_ns = p.before.monotonic_ns;
  Sample carried = p.before;  // 0.5 s later, its activity counters the reading of `before`
  carried.monotonic_ns += 500'000'000;
  carried.system.activity_carried = true;
  carried.system.context_switches += 500;  // /proc/stat is read every sample: 1000/s
  p.now.monotonic_ns = p.before.monotonic_ns + 2'000'000'000;
  p.now.system.activity_ns = p.now.monotonic_ns;

  Model earlier;
  earlier.memory.swap_in_bytes_s = 123;
  earlier.memory.oom_kills = 4;
  earlier.pressure.cpu.emplace().some_pct = 7;
  earlier.disks.emplace_back().name = "vda";
  earlier.disks.back().reads_s = 9;
  Model m;
  model_system(carried, &p.before, 0.5, m, &earlier);
  EXPECT_DOUBLE_EQ(m.context_switches_s, 1000);
  EXPECT_DOUBLE_EQ(m.memory.swap_in_bytes_s, 123);
  EXPECT_EQ(m.memory.oom_kills, 0u);  // counted in the model before, not again
  ASSERT_TRUE(m.pressure.cpu);
  EXPECT_DOUBLE_EQ(m.pressure.cpu->some_pct, 7);
  ASSERT_EQ(m.disks.size(), 1u);
  EXPECT_DOUBLE_EQ(m.disks[0].reads_s, 9);
  EXPECT_EQ(m.memory.used, p.before.system.memory.total - p.before.system.memory.available);

  // Without the model before, a carried reading gives no rates (nothing new was read).
  Model alone;
  model_system(carried, &p.before, 0.5, alone);
  EXPECT_DOUBLE_EQ(alone.memory.swap_in_bytes_s, 0);
  EXPECT_FALSE(alone.pressure.cpu);

  // `now` read 1.5 s after `carried` and 2 s after the reading it carried: the activity rates
  // are over 2 s (as RatesFromHandComputedDeltas), the CPU and /proc/stat's over 1.5 s.
  model_system(p.now, &carried, 1.5, m, &earlier);
  EXPECT_DOUBLE_EQ(m.memory.swap_in_bytes_s, 40960);
  EXPECT_DOUBLE_EQ(m.memory.major_faults_s, 50);
  EXPECT_EQ(m.memory.oom_kills, 1u);
  ASSERT_TRUE(m.pressure.cpu);
  EXPECT_DOUBLE_EQ(m.pressure.cpu->some_pct, 25);
  ASSERT_EQ(m.disks.size(), 2u);
  EXPECT_DOUBLE_EQ(m.disks[1].read_bytes_s, 512000);
  EXPECT_DOUBLE_EQ(m.context_switches_s, 1500 / 1.5);  // 3000 - 1500
}

Cgroup group(std::uint64_t scale) {
  Cgroup c;
  c.path = "/dltune/job";
  c.version = "v1";
  c.cpu_usage_us = 1'000'000 * scale;
  c.cpu_user_us = 800'000 * scale;
  c.cpu_system_us = 200'000 * scale;
  c.nr_periods = 100 * scale;
  c.nr_throttled = 25 * scale;
  c.throttled_us = 250'000 * scale;
  c.cpu_quota_cpus = 1.5;
  c.memory_bytes = 750;
  c.memory_limit_bytes = 1000;
  c.memory_peak_bytes = 900;
  c.failcnt = 10 * scale;
  c.events_oom_kill = scale - 1;
  c.workingset_refault_file = 40 * scale;
  c.pgmajfault = 8 * scale;
  c.pressure.cpu = psi(400'000 * scale, 200'000 * scale);
  c.pids = 3;
  return c;
}

TEST(ModelCgroup, RatesFromHandComputedDeltas) {
  Sample before, now;
  before.cgroup = group(1);
  now.cgroup = group(3);  // every counter ×3: Δ = 2 × the scale-1 value
  Model m;
  model_cgroup(now, &before, 2.0, m);
  ASSERT_TRUE(m.cgroup);
  const auto& c = *m.cgroup;
  EXPECT_EQ(c.path, "/dltune/job");
  EXPECT_EQ(c.version, "v1");
  EXPECT_DOUBLE_EQ(*c.cpu_pct, 100);               // Δ2 000 000 µs / (2 s · 1e6) · 100
  EXPECT_DOUBLE_EQ(*c.user_pct, 80);               // Δ1 600 000 µs / 2e6 · 100
  EXPECT_DOUBLE_EQ(*c.system_pct, 20);             // Δ400 000 / 2e6 · 100
  EXPECT_DOUBLE_EQ(*c.throttled_pct, 25);          // Δ500 000 / 2e6 · 100
  EXPECT_DOUBLE_EQ(*c.throttled_periods_pct, 25);  // Δ50 / Δ200
  EXPECT_DOUBLE_EQ(*c.cpu_quota_cpus, 1.5);
  EXPECT_DOUBLE_EQ(*c.memory_limit_pct, 75);  // 750 / 1000
  EXPECT_EQ(*c.memory_peak_bytes, 900u);
  EXPECT_EQ(*c.failcnt_delta, 20u);
  EXPECT_EQ(*c.oom_kills_delta, 2u);        // 2 - 0
  EXPECT_DOUBLE_EQ(*c.refault_file_s, 40);  // Δ80 / 2
  EXPECT_DOUBLE_EQ(*c.major_faults_s, 8);   // Δ16 / 2
  ASSERT_TRUE(c.pressure.cpu);
  EXPECT_DOUBLE_EQ(c.pressure.cpu->some_pct, 40);   // Δ800 000 µs / 2e6 · 100
  EXPECT_DOUBLE_EQ(*c.pressure.cpu->full_pct, 20);  // Δ400 000 / 2e6 · 100
  EXPECT_EQ(*c.pids, 3u);
}

TEST(ModelCgroup, NoPreviousDtZeroAnotherGroupOrAResetGiveNoOrZeroRates) {
  Sample before, now;
  before.cgroup = group(3);
  now.cgroup = group(1);  // counters went back (the group re-created): deltas 0
  Model m;
  model_cgroup(now, &before, 2.0, m);
  EXPECT_DOUBLE_EQ(*m.cgroup->cpu_pct, 0);
  EXPECT_DOUBLE_EQ(*m.cgroup->throttled_periods_pct, 0);
  EXPECT_EQ(*m.cgroup->failcnt_delta, 0u);
  for (double dt : {0.0, 2.0}) {
    const Sample* prev = dt > 0 ? nullptr : &before;
    model_cgroup(now, prev, dt, m);
    ASSERT_TRUE(m.cgroup);
    EXPECT_FALSE(m.cgroup->cpu_pct);
    EXPECT_FALSE(m.cgroup->failcnt_delta);
    EXPECT_FALSE(m.cgroup->pressure.cpu);
    EXPECT_DOUBLE_EQ(*m.cgroup->memory_limit_pct, 75);  // instantaneous: there
  }
  before.cgroup->path = "/dltune/other";
  model_cgroup(now, &before, 2.0, m);
  EXPECT_FALSE(m.cgroup->cpu_pct);
  // No cgroup in the sample (it vanished): none in the Model.
  now.cgroup.reset();
  model_cgroup(now, &before, 2.0, m);
  EXPECT_FALSE(m.cgroup);
  // No limit: no percentage.
  now.cgroup = group(1);
  now.cgroup->memory_limit_bytes.reset();
  model_cgroup(now, nullptr, 0, m);
  EXPECT_FALSE(m.cgroup->memory_limit_pct);
}

}  // namespace
}  // namespace dltune::monitor::model_system_test

namespace dltune::monitor::model_system_test {
namespace {

TEST(ModelCgroup, AGroupWithoutCpuAccountingGetsItsProcessesCpu) {
  // A Slurm job's group on v1: memory, no cpuacct; its two processes used 150% of a CPU.
  auto sample = [](std::uint64_t ticks_a, std::uint64_t ticks_b) {
    Sample s;
    s.ticks_per_second = 100;
    Cgroup c;
    c.path = "/slurm/uid_0/job_3";
    c.version = "v1";
    c.memory_bytes = 1 << 20;
    s.cgroup = c;
    for (auto [pid, ticks] : {std::pair{10, ticks_a}, std::pair{11, ticks_b}}) {
      Process p;
      p.pid = pid;
      p.start_ticks = 5;
      p.utime = ticks;
      s.processes.push_back(p);
    }
    return s;
  };
  const auto before = sample(100, 100), now = sample(300, 200);  // +2 s and +1 s over 2 s
  auto m = Model::from(now, &before, 2.0);
  ASSERT_TRUE(m.cgroup);
  ASSERT_TRUE(m.cgroup->cpu_pct);
  EXPECT_DOUBLE_EQ(*m.cgroup->cpu_pct, 150);
  EXPECT_TRUE(m.cgroup->cpu_from_processes);
  // A group with its own CPU time keeps it.
  auto with = now;
  auto was = before;
  with.cgroup->cpu_usage_us = 3'000'000;
  was.cgroup->cpu_usage_us = 1'000'000;
  m = Model::from(with, &was, 2.0);
  EXPECT_DOUBLE_EQ(*m.cgroup->cpu_pct, 100);
  EXPECT_FALSE(m.cgroup->cpu_from_processes);
  // No rates yet: nothing summed.
  m = Model::from(now, nullptr, 0);
  EXPECT_FALSE(m.cgroup->cpu_pct);
}

}  // namespace
}  // namespace dltune::monitor::model_system_test

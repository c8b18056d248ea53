// Model's process and GPU parts against hand-computed numbers (model_process.cpp).
#include <gtest/gtest.h>

#include "monitor/model.hpp"

namespace model_process_test {

using namespace dltune::monitor;

namespace {

Process proc(pid_t pid, std::uint64_t start) {
  Process p;
  p.pid = pid;
  p.start_ticks = start;
  p.comm = "python";
  p.cmdline = "python train.py";
  return p;
}

}  // namespace

TEST(ModelProcesses, HandComputedRates) {
  Sample before, now;
  before.ticks_per_second = now.ticks_per_second = 100;
  Process a = proc(100, 5000);
  a.utime = 1000;
  a.stime = 200;
  a.minflt = 10;
  a.majflt = 1;
  a.run_ns = 1'000'000'000;
  a.wait_ns = 100'000'000;
  a.voluntary_switches = 50;
  a.involuntary_switches = 5;
  a.read_bytes = 0;
  a.write_bytes = 4096;
  before.processes = {a};
  Process b = a;
  b.utime = 1150;               // +150 ticks
  b.stime = 250;                // +50 ticks
  b.minflt = 410;               // +400
  b.majflt = 3;                 // +2
  b.run_ns = 2'500'000'000;     // +1.5e9 ns
  b.wait_ns = 600'000'000;      // +5e8 ns
  b.voluntary_switches = 250;   // +200
  b.involuntary_switches = 45;  // +40
  b.read_bytes = 8'000'000;     // +8e6
  b.write_bytes = 4096;         // +0
  b.threads = 12;
  b.rss_bytes = 1 << 20;
  b.state = 'R';
  b.role = Role::kMain;
  now.processes = {b};

  Model m;
  model_processes(now, &before, 2.0, m);  // dt = 2 s
  ASSERT_EQ(m.processes.size(), 1u);
  const auto& p = m.processes[0];
  EXPECT_TRUE(p.has_rates);
  // user: 150 ticks / 100 Hz = 1.5 s of CPU in 2 s = 75 %; system: 50 / 100 / 2 = 25 %.
  EXPECT_DOUBLE_EQ(p.user_pct, 75.0);
  EXPECT_DOUBLE_EQ(p.system_pct, 25.0);
  EXPECT_DOUBLE_EQ(p.cpu_pct, 100.0);
  EXPECT_DOUBLE_EQ(p.minor_faults_s, 200.0);  // 400 / 2
  EXPECT_DOUBLE_EQ(p.major_faults_s, 1.0);    // 2 / 2
  // on CPU: 1.5e9 ns / (2 s · 1e9) = 75 %; waiting: 5e8 / 2e9 = 25 %.
  EXPECT_DOUBLE_EQ(p.on_cpu_pct.value(), 75.0);
  EXPECT_DOUBLE_EQ(p.run_queue_pct.value(), 25.0);
  EXPECT_DOUBLE_EQ(p.voluntary_switches_s.value(), 100.0);   // 200 / 2
  EXPECT_DOUBLE_EQ(p.involuntary_switches_s.value(), 20.0);  // 40 / 2
  EXPECT_DOUBLE_EQ(p.read_bytes_s.value(), 4'000'000.0);     // 8e6 / 2
  EXPECT_DOUBLE_EQ(p.write_bytes_s.value(), 0.0);
  EXPECT_EQ(p.role, Role::kMain);
  EXPECT_EQ(p.state, 'R');
  EXPECT_EQ(p.threads, 12u);
  EXPECT_EQ(p.rss_bytes, 1u << 20);
  EXPECT_EQ(p.cmdline, "python train.py");
}

TEST(ModelProcesses, ReusedPidNewAndExitedProcesses) {
  Sample before, now;
  Process gone = proc(90, 10);
  Process kept = proc(100, 20);
  kept.utime = 10;
  Process reused_old = proc(200, 30);
  reused_old.utime = 5000;
  before.processes = {gone, kept, reused_old};

  Process kept_now = kept;
  kept_now.utime = 60;                  // +50 ticks over 1 s at 100 Hz: 50 %
  Process reused_new = proc(200, 900);  // the same pid, started later: another process
  reused_new.utime = 3;
  Process fresh = proc(300, 950);
  now.processes = {kept_now, reused_new, fresh};

  Model m;
  model_processes(now, &before, 1.0, m);
  ASSERT_EQ(m.processes.size(), 3u);  // 90 exited: absent
  EXPECT_EQ(m.processes[0].pid, 100);
  EXPECT_TRUE(m.processes[0].has_rates);
  EXPECT_DOUBLE_EQ(m.processes[0].cpu_pct, 50.0);
  EXPECT_EQ(m.processes[1].pid, 200);
  EXPECT_FALSE(m.processes[1].has_rates);  // not 3 - 5000
  EXPECT_DOUBLE_EQ(m.processes[1].cpu_pct, 0.0);
  EXPECT_EQ(m.processes[2].pid, 300);
  EXPECT_FALSE(m.processes[2].has_rates);
}

TEST(ModelProcesses, NoRatesWithoutDtOrPrevious) {
  Sample before, now;
  Process a = proc(100, 20), b = proc(100, 20);
  b.utime = 100;
  before.processes = {a};
  now.processes = {b};
  Model m;
  model_processes(now, &before, 0.0, m);
  ASSERT_EQ(m.processes.size(), 1u);
  EXPECT_FALSE(m.processes[0].has_rates);
  EXPECT_FALSE(m.processes[0].run_queue_pct);
  model_processes(now, nullptr, 1.0, m);
  EXPECT_FALSE(m.processes[0].has_rates);
}

TEST(ModelProcesses, BackwardsCountersGiveZeroAndMissingStayMissing) {
  Sample before, now;
  Process a = proc(100, 20);
  a.utime = 500;
  a.wait_ns = 1000;
  a.read_bytes = 100;  // readable before, not now (another user's process after a setuid)
  Process b = a;
  b.utime = 400;  // backwards: 0, never negative
  b.wait_ns = 500;
  b.read_bytes.reset();
  before.processes = {a};
  now.processes = {b};
  Model m;
  model_processes(now, &before, 1.0, m);
  const auto& p = m.processes[0];
  EXPECT_TRUE(p.has_rates);
  EXPECT_DOUBLE_EQ(p.cpu_pct, 0.0);
  EXPECT_DOUBLE_EQ(p.run_queue_pct.value(), 0.0);
  EXPECT_FALSE(p.read_bytes_s);
  EXPECT_FALSE(p.on_cpu_pct);  // no schedstat run_ns in either
}

TEST(ModelGpus, CopiedAndPcieInBytes) {
  Sample now;
  Gpu g;
  g.index = 3;
  g.uuid = "GPU-1";
  g.utilization_gpu_pct = 87;
  g.pcie_tx_kib_s = 1200;    // 1200 · 1024 = 1 228 800 B/s
  g.pcie_rx_kib_s = 350000;  // 350000 · 1024 = 358 400 000 B/s
  g.power_watts = 69.5;
  g.processes = {{4242, 1073741824ull}, {4243, std::nullopt}};
  now.gpus = {g, Gpu{}};
  Model m;
  model_gpus(now, nullptr, 0, m);
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[0].index, 3u);
  EXPECT_EQ(m.gpus[0].uuid, "GPU-1");
  EXPECT_DOUBLE_EQ(m.gpus[0].utilization_gpu_pct.value(), 87.0);
  EXPECT_DOUBLE_EQ(m.gpus[0].pcie_tx_bytes_s.value(), 1'228'800.0);
  EXPECT_DOUBLE_EQ(m.gpus[0].pcie_rx_bytes_s.value(), 358'400'000.0);
  EXPECT_DOUBLE_EQ(m.gpus[0].power_watts.value(), 69.5);
  ASSERT_EQ(m.gpus[0].processes.size(), 2u);
  EXPECT_EQ(m.gpus[0].processes[0].pid, 4242);
  EXPECT_EQ(m.gpus[0].processes[0].used_memory_bytes, 1073741824ull);
  EXPECT_FALSE(m.gpus[0].processes[1].used_memory_bytes);
  EXPECT_FALSE(m.gpus[1].pcie_tx_bytes_s);
  EXPECT_FALSE(m.gpus[1].utilization_gpu_pct);
}

// A process carried between readings of its stat and schedstat (top's processes off screen, its
// quiet rows): while carried it keeps the rates of its last two readings; read again, its rates
// span the time since the last reading, not the last interval.
TEST(ModelProcesses, ACarriedProcessKeepsItsRatesAndTheNextReadingSpansItsOwnTime) {
  const std::int64_t s = 1'000'000'000;
  std::vector<Sample> samples(4);
  for (int i = 0; i < 4; ++i) {
    samples[i].ticks_per_second = 100;
    samples[i].monotonic_ns = (i + 1) * s;
  }
  Process a = proc(100, 5000);
  a.utime = 0;
  a.run_ns = 0;
  a.wait_ns = 0;
  a.stat_ns = 1 * s;
  samples[0].processes = {a};
  a.utime = 50;  // read at 2 s: 50 ticks in 1 s = 50 %
  a.run_ns = s / 2;
  a.wait_ns = s / 10;  // and its schedstat with it: on a CPU 50 %, waiting 10 %
  a.stat_ns = 2 * s;
  samples[1].processes = {a};
  samples[2].processes = {a};  // carried at 3 s, schedstat with stat
  a.utime = 250;               // read at 4 s: 200 ticks over the 2 s since its last reading
  a.run_ns = 3 * s / 2;        // 1 s more on a CPU over those 2 s: 50 %
  a.wait_ns = s / 2;           // 0.4 s more waiting: 20 %
  a.stat_ns = 4 * s;
  samples[3].processes = {a};

  auto m1 = Model::from(samples[1], &samples[0]);
  EXPECT_DOUBLE_EQ(m1.processes[0].cpu_pct, 50.0);
  EXPECT_DOUBLE_EQ(*m1.processes[0].on_cpu_pct, 50.0);
  EXPECT_DOUBLE_EQ(*m1.processes[0].run_queue_pct, 10.0);
  auto m2 = Model::from(samples[2], &samples[1], m1);
  EXPECT_TRUE(m2.processes[0].has_rates);
  EXPECT_DOUBLE_EQ(m2.processes[0].cpu_pct, 50.0);  // kept, not 0 for "no change"
  ASSERT_TRUE(m2.processes[0].run_queue_pct);
  EXPECT_DOUBLE_EQ(*m2.processes[0].run_queue_pct, 10.0);
  EXPECT_DOUBLE_EQ(*m2.processes[0].on_cpu_pct, 50.0);
  auto m3 = Model::from(samples[3], &samples[2], m2);
  EXPECT_DOUBLE_EQ(m3.processes[0].cpu_pct, 100.0);  // 200 ticks / 2 s, not / 1 s
  EXPECT_DOUBLE_EQ(*m3.processes[0].on_cpu_pct, 50.0);
  EXPECT_DOUBLE_EQ(*m3.processes[0].run_queue_pct, 20.0);
  // Without the model before, a carried process has no rates (never a made-up 0).
  auto alone = Model::from(samples[2], &samples[1]);
  EXPECT_FALSE(alone.processes[0].has_rates);
}

// Model::into a model that held another host's view gives what Model::from gives: nothing of
// the old one is left (its processes' frames, its cgroup, GPUs, CPUs), its storage reused.
TEST(ModelProcesses, IntoAReusedModelIsTheModelFromWouldGive) {
  const std::int64_t s = 1'000'000'000;
  Sample before, now;
  before.ticks_per_second = now.ticks_per_second = 100;
  before.monotonic_ns = s;
  now.monotonic_ns = 2 * s;
  Process a = proc(100, 5000), b = proc(200, 6000);
  a.stat_ns = b.stat_ns = s;
  before.processes = {a, b};
  a.utime = 40;
  a.stat_ns = 2 * s;
  b.comm = "sh";
  b.cmdline = "";
  b.start_ticks = 7000;  // a new process under pid 200: no rates
  b.stat_ns = 2 * s;
  now.processes = {a, b};
  const Model first = Model::from(before, nullptr);
  const Model want = Model::from(now, &before, first);

  Model spare;
  for (pid_t pid : {5, 6, 7}) {
    ProcessModel p;
    p.pid = pid;
    p.cmdline = std::string(200, 'x');
    p.python_frame = "Model.forward train.py:10";
    p.has_rates = true;
    p.cpu_pct = 99;
    p.run_queue_pct = 50;
    spare.processes.push_back(p);
  }
  spare.cgroup = CgroupModel{};
  spare.gpus.resize(2);
  spare.cpus.resize(8);
  spare.observer_cpu_pct = 3;
  const auto* storage = spare.processes.data();
  Model::into(now, &before, first, spare);

  EXPECT_EQ(spare.processes.data(), storage);
  ASSERT_EQ(spare.processes.size(), want.processes.size());
  for (std::size_t i = 0; i < want.processes.size(); ++i) {
    const auto& got = spare.processes[i];
    const auto& w = want.processes[i];
    EXPECT_EQ(got.pid, w.pid);
    EXPECT_EQ(got.comm, w.comm);
    EXPECT_EQ(got.cmdline, w.cmdline);
    EXPECT_EQ(got.python_frame, "");
    EXPECT_EQ(got.has_rates, w.has_rates);
    EXPECT_DOUBLE_EQ(got.cpu_pct, w.cpu_pct);
    EXPECT_EQ(got.run_queue_pct, w.run_queue_pct);
  }
  EXPECT_TRUE(spare.processes[0].has_rates);
  EXPECT_DOUBLE_EQ(spare.processes[0].cpu_pct, 40.0);
  EXPECT_FALSE(spare.processes[1].has_rates);
  EXPECT_EQ(spare.processes[1].cmdline, "");
  EXPECT_FALSE(spare.cgroup);
  EXPECT_TRUE(spare.gpus.empty());
  EXPECT_EQ(spare.cpus.size(), want.cpus.size());
  EXPECT_EQ(spare.observer_cpu_pct, want.observer_cpu_pct);
  EXPECT_DOUBLE_EQ(spare.interval_s, want.interval_s);
  EXPECT_EQ(spare.has_rates, want.has_rates);
}

}  // namespace model_process_test

// The profile's signals from Samples, through the Model (diagnose/signals.hpp), and the window
// built from them: which processes are the job, what is absent rather than 0, and the job's end.
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "diagnose/bottleneck.hpp"
#include "diagnose/profile_text.hpp"
#include "diagnose/signals.hpp"

namespace signals_test {

using namespace dltune::diagnose;
using dltune::monitor::Gpu;
using dltune::monitor::GpuProcess;
using dltune::monitor::Model;
using dltune::monitor::Process;
using dltune::monitor::Role;
using dltune::monitor::Sample;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

Process proc(pid_t pid, Role role, char state, std::uint64_t ticks, std::uint64_t run_ns,
             std::uint64_t wait_ns) {
  Process p;
  p.pid = pid;
  p.ppid = role == Role::kMain ? 1 : 100;
  p.comm = "python3";
  p.cmdline = "python3 train.py";
  p.role = role;
  p.state = state;
  p.start_ticks = 1000 + static_cast<std::uint64_t>(pid);
  p.utime = ticks;
  p.threads = 3;
  p.run_ns = run_ns;
  p.wait_ns = wait_ns;
  p.voluntary_switches = 0;
  p.involuntary_switches = 0;
  p.read_bytes = 0;
  return p;
}

// Two CPUs; `busy_ticks` of the 200 ticks per second of all CPUs are user time.
Sample sample(std::int64_t t, std::uint64_t busy_ticks_total, std::vector<Process> procs) {
  Sample s;
  s.monotonic_ns = t;
  s.wall_ns = t + 1'700'000'000 * kSecond;
  s.ticks_per_second = 100;
  s.system.total.user = busy_ticks_total;
  s.system.total.idle = static_cast<std::uint64_t>(t / kSecond) * 200 - busy_ticks_total;
  for (int c = 0; c < 2; ++c) {
    dltune::monitor::CpuTimes ct;
    ct.cpu = c;
    s.system.cpus.push_back(ct);
  }
  s.processes = std::move(procs);
  return s;
}

double value(const SignalValues& v, Signal s) {
  const auto& x = v[static_cast<std::size_t>(s)];
  EXPECT_TRUE(x.has_value()) << info(s).name;
  return x.value_or(-1);
}

bool absent(const SignalValues& v, Signal s) {
  return !v[static_cast<std::size_t>(s)];
}

}  // namespace

TEST(ProfileSignals, MainWorkersAndTheRestOfTheHost) {
  // Over one second: main 20 ticks (20%), on a CPU 0.15 s, waiting 0.05 s, sleeping; one worker
  // 95 ticks, R; the launcher above the job (sampled, not the job's) 10 ticks. The host's CPUs
  // were busy 180 of 200: 55 of them by processes that were not sampled.
  const auto before =
      sample(10 * kSecond, 1000,
             {proc(100, Role::kMain, 'S', 100, 0, 0), proc(101, Role::kWorker, 'R', 100, 0, 0),
              proc(300, Role::kOther, 'R', 100, 0, 0)});
  const auto now = sample(11 * kSecond, 1180,
                          {proc(100, Role::kMain, 'S', 120, 150'000'000, 50'000'000),
                           proc(101, Role::kWorker, 'R', 195, 950'000'000, 0),
                           proc(300, Role::kOther, 'S', 110, 0, 0)});
  const auto v = signals_of(Model::from(now, &before));
  EXPECT_NEAR(value(v, Signal::kMainCpu), 20, 1e-6);
  EXPECT_NEAR(value(v, Signal::kMainOnCpu), 15, 1e-6);
  EXPECT_NEAR(value(v, Signal::kMainRunQueue), 5, 1e-6);
  EXPECT_EQ(value(v, Signal::kMainSleeping), 1);
  EXPECT_EQ(value(v, Signal::kMainRunning), 0);
  EXPECT_EQ(value(v, Signal::kWorkersCount), 1);
  EXPECT_NEAR(value(v, Signal::kWorkersCpu), 95, 1e-6);
  EXPECT_EQ(value(v, Signal::kWorkersRunning), 1);
  EXPECT_NEAR(value(v, Signal::kJobCpu), 115, 1e-6);
  // 180% busy on the host, 125% of it the sampled tree's: the rest is someone else's.
  EXPECT_NEAR(value(v, Signal::kHostOtherCpu), 55, 1e-6);
  EXPECT_NEAR(value(v, Signal::kHostIdleCpus), 0.2, 1e-6);
  EXPECT_EQ(value(v, Signal::kHostCpus), 2);
  // The kernel's share is not judged on a process that hardly runs (20% is the floor).
  EXPECT_NEAR(value(v, Signal::kMainSystemShare), 0, 1e-6);
  // No cgroup, no GPU processes: absent, never 0; GPUs used: 0 on a host without GPUs.
  EXPECT_TRUE(absent(v, Signal::kJobPsiCpu));
  EXPECT_TRUE(absent(v, Signal::kCgroupThrottled));
  EXPECT_TRUE(absent(v, Signal::kGpuUtil));
  EXPECT_EQ(value(v, Signal::kJobGpus), 0);

  // The observer (the sampling process) used 0.3 s of CPU in that second: it is not load on the
  // job, so 30 of the 55 are left out. Its counter going backwards (another process's sample)
  // gives no observer figure, never a negative one.
  auto before_obs = before;
  auto now_obs = now;
  before_obs.observer_cpu_us = 2'000'000;
  now_obs.observer_cpu_us = 2'300'000;
  const auto m_obs = Model::from(now_obs, &before_obs);
  ASSERT_TRUE(m_obs.observer_cpu_pct.has_value());
  EXPECT_NEAR(*m_obs.observer_cpu_pct, 30, 1e-6);
  EXPECT_NEAR(value(signals_of(m_obs), Signal::kHostOtherCpu), 25, 1e-6);
  now_obs.observer_cpu_us = 1'000'000;
  EXPECT_FALSE(Model::from(now_obs, &before_obs).observer_cpu_pct.has_value());
  EXPECT_NEAR(value(signals_of(Model::from(now_obs, &before_obs)), Signal::kHostOtherCpu), 55,
              1e-6);
}

TEST(ProfileSignals, TheFirstSampleHasNoSignalsAndAZombieIsNotTheJob) {
  const auto first = sample(10 * kSecond, 0, {proc(100, Role::kMain, 'S', 0, 0, 0)});
  const auto none = signals_of(Model::from(first, nullptr));
  for (const auto& x : none) EXPECT_FALSE(x.has_value());
  const auto zombie = sample(11 * kSecond, 10, {proc(100, Role::kMain, 'Z', 0, 0, 0)});
  const auto v = signals_of(Model::from(zombie, &first));
  EXPECT_TRUE(absent(v, Signal::kMainOnCpu));
  EXPECT_TRUE(absent(v, Signal::kJobCpu));
}

TEST(ProfileSignals, TheJobsGpusAreThoseWithItsProcesses) {
  const auto gpu = [](unsigned i, std::uint32_t util, std::vector<pid_t> pids) {
    Gpu g;
    g.index = i;
    g.utilization_gpu_pct = util;
    for (pid_t p : pids) g.processes.push_back(GpuProcess{p, std::nullopt});
    return g;
  };
  auto before = sample(10 * kSecond, 0, {proc(100, Role::kMain, 'R', 0, 0, 0)});
  auto now = sample(11 * kSecond, 100, {proc(100, Role::kMain, 'R', 100, 0, 0)});
  now.gpus = {gpu(0, 90, {100}), gpu(1, 10, {555}), gpu(2, 70, {100})};
  auto v = signals_of(Model::from(now, &before));
  EXPECT_EQ(value(v, Signal::kJobGpus), 2);
  EXPECT_NEAR(value(v, Signal::kGpuUtil), 80, 1e-6);
  // No GPU lists processes (a container without the host's PIDs): every GPU counts.
  now.gpus = {gpu(0, 90, {}), gpu(1, 10, {})};
  v = signals_of(Model::from(now, &before));
  EXPECT_EQ(value(v, Signal::kJobGpus), 2);
  EXPECT_NEAR(value(v, Signal::kGpuUtil), 50, 1e-6);
}

// Their clocks and whether one was slowed: a power cap or heat counts, an idle GPU does not.
TEST(ProfileSignals, TheJobsGpusClocksAndSlowdown) {
  const auto gpu = [](unsigned i, std::uint32_t clock, std::uint64_t reasons, pid_t pid) {
    Gpu g;
    g.index = i;
    g.sm_clock_mhz = clock;
    g.clock_event_reasons = reasons;
    g.processes.push_back(GpuProcess{pid, std::nullopt});
    return g;
  };
  auto before = sample(10 * kSecond, 0, {proc(100, Role::kMain, 'R', 0, 0, 0)});
  auto now = sample(11 * kSecond, 100, {proc(100, Role::kMain, 'R', 100, 0, 0)});
  // GPU 1 (another job's) is thermally slowed; the job's GPUs only idle (0x1).
  now.gpus = {gpu(0, 1980, 0x1, 100), gpu(1, 900, 0x40, 555), gpu(2, 1960, 0, 100)};
  auto v = signals_of(Model::from(now, &before));
  EXPECT_NEAR(value(v, Signal::kGpuSmClock), 1970, 1e-6);
  EXPECT_EQ(value(v, Signal::kGpuSlowdown), 0);
  // Its own GPU 2 at its power cap (SwPowerCap, 0x4).
  now.gpus[2] = gpu(2, 1410, 0x4, 100);
  v = signals_of(Model::from(now, &before));
  EXPECT_EQ(value(v, Signal::kGpuSlowdown), 1);
  // No GPU: neither signal.
  now.gpus.clear();
  v = signals_of(Model::from(now, &before));
  EXPECT_TRUE(absent(v, Signal::kGpuSmClock));
  EXPECT_TRUE(absent(v, Signal::kGpuSlowdown));
}

TEST(ProfileSignals, TheWindowBuilderPairsSamplesAndSeesTheJobEnd) {
  WindowBuilder b;
  b.add(sample(10 * kSecond, 0,
               {proc(100, Role::kMain, 'S', 0, 0, 0), proc(101, Role::kWorker, 'R', 0, 0, 0),
                proc(102, Role::kWorker, 'R', 0, 0, 0)}));
  b.add(sample(11 * kSecond, 100,
               {proc(100, Role::kMain, 'S', 10, 0, 0), proc(101, Role::kWorker, 'R', 50, 0, 0),
                proc(102, Role::kWorker, 'R', 50, 0, 0)}));
  b.add(sample(12 * kSecond, 200, {}));
  EXPECT_EQ(b.window().samples.size(), 2u);
  EXPECT_EQ(b.job().main, 100);
  EXPECT_EQ(b.job().max_workers, 2u);
  EXPECT_EQ(b.job().cmdline, "python3 train.py");
  EXPECT_TRUE(b.job().main_gone);
  EXPECT_TRUE(absent(b.window().samples[1], Signal::kMainOnCpu));
}

TEST(ProfileSignals, TheJobsGpusWithTheMostMemoryItHeldOnEach) {
  const auto with_gpus = [](Sample s, std::uint64_t main_mem, std::uint64_t worker_mem) {
    dltune::monitor::Gpu g0, g1, g2;
    g0.index = 0;
    g0.uuid = "GPU-0";
    g0.processes = {{100, main_mem}, {101, worker_mem}};  // main and a worker: summed
    g1.index = 1;
    g1.processes = {{555, 1u << 30}};  // an outsider's process: not the job's GPU
    g2.index = 2;
    g2.uuid = "GPU-2";
    g2.processes = {{100, std::nullopt}};  // no per-process figure: used, 0 bytes
    s.gpus = {g2, g0, g1};
    return s;
  };
  auto outsider = proc(555, Role::kOther, 'R', 0, 0, 0);
  outsider.ppid = 1;
  WindowBuilder b;
  b.add(with_gpus(sample(10 * kSecond, 0,
                         {proc(100, Role::kMain, 'S', 0, 0, 0),
                          proc(101, Role::kWorker, 'R', 0, 0, 0), outsider}),
                  1000, 500));
  b.add(with_gpus(sample(11 * kSecond, 100,
                         {proc(100, Role::kMain, 'S', 10, 0, 0),
                          proc(101, Role::kWorker, 'R', 50, 0, 0), outsider}),
                  800, 100));
  const auto& gpus = b.job().gpus;
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0u);  // by index
  EXPECT_EQ(gpus[0].uuid, "GPU-0");
  EXPECT_EQ(gpus[0].peak_memory_bytes, 1500u);  // 1000 + 500 at once, not 1000 + 800
  EXPECT_EQ(gpus[1].index, 2u);
  EXPECT_EQ(gpus[1].peak_memory_bytes, 0u);
  EXPECT_THAT(describe_job(b.job()), ::testing::HasSubstr(", on GPU 0 (1.5 KiB at most), 2"));
}

TEST(ProfileRanks, ALaunchersChildrenAreRanksEachWithItsOwnWorkers) {
  EXPECT_TRUE(is_rank_launcher("/usr/bin/python3 /usr/bin/torchrun --nproc_per_node 8 train.py"));
  EXPECT_TRUE(is_rank_launcher("python3 -m torch.distributed.run --standalone train.py"));
  EXPECT_TRUE(is_rank_launcher("python -m torch.distributed.launch train.py"));
  EXPECT_FALSE(is_rank_launcher("python3 train.py"));
  const auto rank_proc = [](pid_t pid, pid_t ppid, const char* cmdline) {
    Process p = proc(pid, Role::kChild, 'R', 0, 0, 0);
    p.ppid = ppid;
    p.cmdline = cmdline;
    return p;
  };
  auto launcher = proc(100, Role::kMain, 'S', 0, 0, 0);
  launcher.cmdline = "/usr/bin/python3 /usr/bin/torchrun --nproc_per_node 2 train.py";
  // Two ranks (children of the launcher), each with a DataLoader worker (a fork: its rank's
  // command line), and a compiler one rank started.
  const auto s = sample(
      10 * kSecond, 0,
      {launcher, rank_proc(200, 100, "/usr/bin/python3 -u train.py"),
       rank_proc(201, 200, "/usr/bin/python3 -u train.py"), rank_proc(202, 200, "gcc -c x.c"),
       rank_proc(300, 100, "/usr/bin/python3 -u train.py"),
       rank_proc(301, 300, "/usr/bin/python3 -u train.py")});
  EXPECT_EQ(ranks_of(s), (std::vector<pid_t>{200, 300}));
  const auto r = rerooted(s, 200);
  std::map<pid_t, Role> roles;
  for (const auto& p : r.processes) roles[p.pid] = p.role;
  EXPECT_EQ(roles, (std::map<pid_t, Role>{{100, Role::kOther},
                                          {200, Role::kMain},
                                          {201, Role::kWorker},
                                          {202, Role::kChild},
                                          {300, Role::kOther},
                                          {301, Role::kOther}}));
  EXPECT_TRUE(rerooted(s, 999).processes.empty());
  // Not a launcher: no ranks.
  auto plain = s;
  plain.processes[0].cmdline = "python3 train.py";
  EXPECT_TRUE(ranks_of(plain).empty());
  // JobWindows keeps a window per rank, each with its own workers.
  JobWindows jw;
  auto s2 = s;
  s2.monotonic_ns += kSecond;
  s2.system.total.idle += 200;
  jw.add(Sample(s));
  jw.add(std::move(s2));
  ASSERT_EQ(jw.ranks().size(), 2u);
  EXPECT_EQ(jw.ranks().at(200).job().max_workers, 1u);
  EXPECT_EQ(jw.ranks().at(200).job().max_children, 1u);
  EXPECT_EQ(jw.ranks().at(300).job().main, 300);
  EXPECT_EQ(jw.ranks().at(300).window().samples.size(), 1u);
  EXPECT_EQ(jw.job().job().main, 100);
}

// `dltune run --nproc N` is a launcher; in a job's group whose launcher is outside it (run's
// recording, srun), the top-level processes with the main one's command line are the ranks.
TEST(ProfileRanks, DltuneRunsRanksAndSiblingsInAGroupAreRanks) {
  EXPECT_TRUE(is_rank_launcher("/usr/bin/dltune run --nproc 2 -- python3 train.py"));
  EXPECT_TRUE(is_rank_launcher("dltune run --cpus 0-3 --nproc=4 -- python3 train.py"));
  EXPECT_FALSE(is_rank_launcher("dltune run -- python3 train.py --nproc 2"));
  EXPECT_FALSE(is_rank_launcher("dltune top --nproc"));
  const auto p = [](pid_t pid, pid_t ppid, Role role, const char* cmdline) {
    Process x = proc(pid, role, 'R', 0, 0, 0);
    x.ppid = ppid;
    x.cmdline = cmdline;
    return x;
  };
  // The group's processes: two ranks (their parent, dltune, is not in the group), each with a
  // worker; the sampler named the first rank main and the second a "worker" of it.
  const auto s = sample(
      10 * kSecond, 0,
      {p(200, 50, Role::kMain, "python3 train.py"), p(201, 200, Role::kWorker, "python3 train.py"),
       p(300, 50, Role::kWorker, "python3 train.py"),
       p(301, 300, Role::kWorker, "python3 train.py")});
  EXPECT_EQ(ranks_of(s), (std::vector<pid_t>{200, 300}));
  // One process of that command line at the top: a job of one process, not ranks.
  auto one = s;
  one.processes[2].ppid = 200;
  EXPECT_TRUE(ranks_of(one).empty());
  // A rank that ends: its window stops there (the samples after it are not its own).
  JobWindows jw;
  for (int i = 0; i < 4; ++i) {
    auto x = s;
    x.monotonic_ns += i * kSecond;
    x.system.total.idle += static_cast<std::uint64_t>(i) * 200;
    if (i >= 2)  // rank 300 and its worker are gone
      x.processes.erase(x.processes.begin() + 2, x.processes.end());
    jw.add(std::move(x));
  }
  ASSERT_EQ(jw.ranks().size(), 2u);
  EXPECT_FALSE(jw.ranks().at(200).job().main_gone);
  EXPECT_EQ(jw.ranks().at(200).window().samples.size(), 3u);
  EXPECT_TRUE(jw.ranks().at(300).job().main_gone);
  EXPECT_EQ(jw.ranks().at(300).window().samples.size(), 1u) << "the one interval it lived";
}

}  // namespace signals_test

// known(): samples whose rates are worked out in report_samples.hpp.
#include "unit/report/report_samples.hpp"
#include "core/json.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

namespace dltune::testing {

using namespace monitor;

namespace {

constexpr std::uint64_t kGiB = 1ull << 30, kMiB = 1ull << 20;

// Strings made out of line: g++ 12 -O2 reports a false -Wmaybe-uninitialized when short
// literals are assigned to a new struct's strings (as sample_fields.cpp notes).
[[gnu::noinline]] std::string text(const char* s) {
  return s;
}

}  // namespace

Sample known(int t, const KnownOptions& o) {
  const auto u = static_cast<std::uint64_t>(t);
  Sample s;
  s.wall_ns = kT0 + static_cast<std::int64_t>(t) * 1'000'000'000;
  s.monotonic_ns = 5'000'000'000'000 + static_cast<std::int64_t>(t) * 1'000'000'000;
  s.ticks_per_second = 100;
  s.page_size = 4096;
  System& y = s.system;
  // Per second: user 50 + nice 10 = 60 of 200 (30 %), system 20 + softirq 10 = 30 (15 %),
  // iowait 10 (5 %), idle 100.
  y.total = CpuTimes{
      -1, 1000 + 50 * u, 500 + 10 * u, 800 + 20 * u, 9000 + 100 * u, 300 + 10 * u, 0, 40 + 10 * u,
      0};
  for (int c = 0; c < 2; ++c)
    y.cpus.push_back(CpuTimes{c, 500 + 25 * u, 250 + 5 * u, 400 + 10 * u, 4500 + 50 * u,
                              150 + 5 * u, 0, 20 + 5 * u, 0});
  y.memory.total = 8 * kGiB;
  y.memory.available = 6 * kGiB;
  y.memory.free = 5 * kGiB;
  y.memory.cached = kGiB;
  y.memory.buffers = 100 * kMiB;
  y.memory.swap_total = kGiB;
  y.memory.swap_free = kGiB - 100 * kMiB;
  y.vm.pswpin = 1000 + 25 * u;
  y.vm.pswpout = 400;
  y.vm.pgfault = 100'000 + 1000 * u;
  y.vm.pgmajfault = 50 + 7 * u;
  y.vm.oom_kill = t >= o.host_oom_at ? 1 : 0;
  if (o.pressure) {
    // some: 100 ms stalled a second (10 %); full: 20 ms (2 %); cpu without "full".
    Pressure p{PressureLine{1, 1, 1, 1'000'000 + 100'000 * u},
               PressureLine{0, 0, 0, 50'000 + 20'000 * u}};
    y.pressure.memory = y.pressure.io = p;
    y.pressure.cpu = Pressure{PressureLine{1, 1, 1, 2'000'000 + 100'000 * u}, std::nullopt};
  }
  y.disks.push_back(Disk{"vda", 100 + u, 8000 + 2048 * u, 10, 50, 900, 10, 0, 100, 200});
  y.net.push_back(NetDevice{"eth0", 10'000 + 1000 * u, 100, 0, 0, 5000 + 500 * u, 50, 0, 0});
  if (o.job) {
    // Main: 50 ticks/s of 100 = 50 % of one CPU; each worker 20 ticks/s.
    Process main;
    main.pid = 100;
    main.ppid = 1;
    main.comm = text("python");
    main.cmdline = text("python train.py");
    main.role = Role::kMain;
    main.start_ticks = 77;
    main.utime = 1000 + 40 * u;
    main.stime = 100 + 10 * u;
    main.rss_bytes = kGiB;
    s.processes.push_back(main);
    for (pid_t pid : {101, 102}) {
      Process w = main;
      w.pid = pid;
      w.ppid = 100;
      w.comm = text("pt_data_worker");
      w.role = Role::kWorker;
      w.start_ticks = 80;
      w.utime = 200 + 20 * u;
      w.stime = 30;
      w.rss_bytes = 256 * kMiB;
      s.processes.push_back(w);
    }
  }
  if (o.cgroup) {
    Cgroup g;
    g.path = text("/dltune/job-1");
    g.version = text("v2");
    g.cpu_usage_us = 1'000'000 + 500'000 * u;
    g.nr_periods = 10 * u;
    g.nr_throttled = 0;
    g.throttled_us = 0;
    g.cpu_quota_cpus = 2.0;
    g.memory_bytes = kGiB;
    g.memory_limit_bytes = 2 * kGiB;
    g.failcnt = 0;
    g.events_oom_kill = t >= o.cgroup_oom_at ? 1 : 0;
    s.cgroup = g;
  }
  if (o.gpu) {
    Gpu g;
    g.index = 0;
    g.name = text("NVIDIA H100");
    g.utilization_gpu_pct = 70;
    g.power_watts = 250.5;
    g.temperature_celsius = 60;
    g.memory_used_bytes = 10 * kGiB;
    g.memory_total_bytes = 80 * kGiB;
    g.memory_clock_mhz = 2619;
    // Idle in even seconds, at its power cap and hot in odd ones; PCIe at 1000 and 250 KiB/s.
    g.clock_event_reasons = t % 2 == 0 ? 0x1 : 0x4 | 0x20;
    g.pcie_rx_kib_s = 1000;
    g.pcie_tx_kib_s = 250;
    s.gpus.push_back(g);
  }
  return s;
}

void write_recording(const std::string& path, int n, const KnownOptions& options,
                     store::RecordingInfo info,
                     const std::vector<std::pair<std::string, nlohmann::json>>& documents) {
  if (info.started_wall_ns == 0) info.started_wall_ns = kT0;
  if (info.interval_ns == 0) info.interval_ns = 1'000'000'000;
  if (info.hostname.empty()) info.hostname = "testhost";
  if (info.scope.empty()) info.scope = "tree of python";
  auto w = store::RecordingWriter::create(path, info, {.force = true});
  ASSERT_TRUE(w) << w.error().message();
  for (int t = 0; t < n; ++t) ASSERT_TRUE((*w)->append(known(t, options)));
  for (const auto& [key, doc] : documents) ASSERT_TRUE((*w)->put_document(key, doc));
  ASSERT_TRUE((*w)->finish(0));
}

TempDir::TempDir() {
  static int counter = 0;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = std::filesystem::path(::testing::TempDir()) /
         ("dltune_report_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
          (info ? info->name() : "x"));
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

TempDir::~TempDir() {
  std::filesystem::remove_all(dir_);
}

}  // namespace dltune::testing

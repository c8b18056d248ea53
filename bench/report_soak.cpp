// A day of a training job at 1 Hz, for `dltune report` (the goal: a 24-hour recording at 1 Hz must
// give a report that opens in under 3 s). Writes a recording of synthetic but plausible samples
// (4 CPUs, 2 disks, 2 NICs, 2 GPUs, the job's cgroup, a main process with 4 DataLoader workers and
// a child; epochs of 20 minutes with an evaluation dip, a data-loading stall, an OOM kill in the
// 18th hour), the env/check documents and a few kernel events; then times reading it back both
// ways: Recording::at(i) sample by sample and Recording::for_each. bench/run-report-bench times
// `dltune report` and Chromium on the file; results in bench/README.md.
//
// Usage: dltune_report_soak [SAMPLES (86400)] [PATH (/tmp/dltune_report_soak.db)]
//        dltune_report_soak read PATH      (only time reading PATH)
#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "audit/check.hpp"
#include "audit/rules.hpp"
#include "core/json.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "store/recording.hpp"

namespace {

using namespace dltune;
using namespace dltune::monitor;

double now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A small deterministic noise source (the same file every run).
struct Noise {
  std::uint64_t s = 0x9e3779b97f4a7c15ull;
  double operator()() {  // in [0, 1)
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<double>(s >> 11) / 9007199254740992.0;
  }
};

constexpr std::int64_t kStart = 1'764'500'000'000'000'000;
constexpr std::uint64_t kGiB = 1ull << 30;

// The job's state second by second: counters only grow, by the rates of that second.
class Day {
 public:
  Sample next(int t) {
    const double epoch = std::fmod(t, 1200.0) / 1200.0;  // 20-minute epochs
    const bool eval = epoch > 0.93;                      // evaluation at the end of each
    const bool stall = t > 30'000 && t < 30'900;         // a slow storage quarter-hour
    const double busy = (eval ? 0.35 : stall ? 0.25 : 0.9) + 0.06 * (n_() - 0.5);
    Sample s;
    s.wall_ns = kStart + static_cast<std::int64_t>(t) * 1'000'000'000;
    s.monotonic_ns = 1'000'000'000'000 + static_cast<std::int64_t>(t) * 1'000'000'000;
    auto& y = s.system;
    // 4 CPUs at 100 ticks/s: user from the workers, iowait during the stall.
    const auto user = static_cast<std::uint64_t>(400 * (stall ? 0.3 : 0.55 + 0.1 * n_()));
    const auto sys = static_cast<std::uint64_t>(400 * 0.06);
    const auto iow = static_cast<std::uint64_t>(stall ? 400 * 0.35 : 400 * 0.01 * n_());
    cpu_[0] += user;
    cpu_[2] += sys;
    cpu_[4] += iow;
    cpu_[3] += 400 - user - sys - iow;
    y.total = CpuTimes{-1, cpu_[0], 0, cpu_[2], cpu_[3], cpu_[4], 0, 0, 0};
    for (int c = 0; c < 4; ++c)
      y.cpus.push_back(CpuTimes{c, cpu_[0] / 4, 0, cpu_[2] / 4, cpu_[3] / 4, cpu_[4] / 4, 0, 0, 0});
    y.context_switches = ctx_ += 20'000;
    y.memory.total = 64 * kGiB;
    const double grow = std::min(1.0, t / 60'000.0);  // the page cache fills with the data set
    y.memory.cached = static_cast<std::uint64_t>((8 + 30 * grow) * kGiB);
    y.memory.available = y.memory.total - static_cast<std::uint64_t>(18 * kGiB) -
                         static_cast<std::uint64_t>(2 * kGiB * n_());
    y.memory.free = y.memory.available - y.memory.cached / 2;
    y.memory.swap_total = 8 * kGiB;
    y.memory.swap_free = 8 * kGiB - static_cast<std::uint64_t>(grow * kGiB);
    if (t > 64'000 && t < 64'600) pswpin_ += static_cast<std::uint64_t>(800 * n_());
    y.vm.pswpin = pswpin_;
    y.vm.pgmajfault = majflt_ += stall ? 400 : static_cast<std::uint64_t>(5 * n_());
    y.vm.pgfault = 9'000'000 + 4000 * static_cast<std::uint64_t>(t);
    y.vm.oom_kill = t >= 64'500 ? 1 : 0;
    Pressure p;
    psi_some_ += static_cast<std::uint64_t>((stall ? 400'000 : 5'000) * (0.5 + n_()));
    psi_full_ += stall ? 200'000 : 500;
    p.some.total_us = psi_some_;
    p.full = PressureLine{0, 0, 0, psi_full_};
    y.pressure.io = y.pressure.memory = p;
    cpu_psi_ += static_cast<std::uint64_t>(30'000 * n_());
    y.pressure.cpu = Pressure{PressureLine{0, 0, 0, cpu_psi_}, PressureLine{0, 0, 0, 0}};
    for (int d = 0; d < 2; ++d) {
      const double mb = d == 0 ? (stall  ? 40
                                  : eval ? 20
                                         : 300 * (1 - grow * 0.8)) *
                                     n_()
                               : 2 * n_();
      disk_read_[d] += static_cast<std::uint64_t>(mb * 2048);
      disk_write_[d] +=
          static_cast<std::uint64_t>((d == 1 && t % 1200 == 0 ? 2048 : 1) * 2048 * n_());
      y.disks.push_back(Disk{d == 0 ? "nvme0n1" : "nvme1n1", disk_read_[d] / 64, disk_read_[d], 0,
                             disk_write_[d] / 64, disk_write_[d], 0, 0, disk_read_[d] / 4000, 0});
    }
    for (int i = 0; i < 2; ++i) {
      net_[i] += static_cast<std::uint64_t>((i == 0 ? 2e6 : 5e4) * n_());
      y.net.push_back(NetDevice{i == 0 ? "ens5" : "docker0", net_[i], net_[i] / 1500, 0, 0,
                                net_[i] / 20, net_[i] / 30000, 0, 0});
    }
    Cgroup g;
    g.path = "/dltune/job-4242";
    g.version = "v2";
    cg_usage_ += static_cast<std::uint64_t>(busy * 3.2e6);
    g.cpu_usage_us = cg_usage_;
    g.nr_periods = static_cast<std::uint64_t>(t) * 10;
    throttled_ += busy > 0.85 ? static_cast<std::uint64_t>(50'000 * n_()) : 0;
    g.nr_throttled = throttled_ / 10'000;
    g.throttled_us = throttled_;
    g.cpu_quota_cpus = 3.5;
    g.memory_bytes = static_cast<std::uint64_t>((20 + 8 * grow + 2 * n_()) * kGiB);
    g.memory_limit_bytes = 48 * kGiB;
    g.failcnt = t >= 64'500 ? 3 : 0;
    g.events_oom_kill = t >= 64'500 ? 1 : 0;
    g.pressure = y.pressure;
    s.cgroup = g;
    // main, 4 workers, a child (a compile step that comes and goes)
    for (int i = 0; i < 6; ++i) {
      if (i == 5 && (t % 3600) > 120) continue;
      Process pr;
      pr.pid = 4242 + i;
      pr.ppid = i == 0 ? 4000 : 4242;
      pr.comm = i == 0 ? "python" : i == 5 ? "cc1plus" : "pt_data_worker";
      pr.cmdline = i == 5 ? "cc1plus -O2 kernel.cpp" : "python train.py --workers 4";
      pr.role = i == 0 ? Role::kMain : i == 5 ? Role::kChild : Role::kWorker;
      pr.start_ticks = i == 5 ? 100'000 + static_cast<std::uint64_t>(t / 3600) : 5000;
      proc_[i] += static_cast<std::uint64_t>((i == 0 ? 80 : i == 5 ? 95 : 45 * busy) * n_() + 5);
      pr.utime = i == 5 ? proc_[i] % 100'000 : proc_[i];
      pr.stime = pr.utime / 8;
      pr.rss_bytes = static_cast<std::uint64_t>((i == 0 ? 6.0 + 2 * grow : 1.5) * kGiB);
      pr.threads = i == 0 ? 40 : 3;
      s.processes.push_back(pr);
    }
    for (unsigned i = 0; i < 2; ++i) {
      Gpu gp;
      gp.index = i;
      gp.uuid = "GPU-" + std::to_string(i);
      gp.name = "NVIDIA H100 80GB HBM3";
      const double u = std::clamp(busy * 100 - 3 * i + 5 * (n_() - 0.5), 0.0, 100.0);
      gp.utilization_gpu_pct = static_cast<std::uint32_t>(u);
      gp.utilization_memory_pct = static_cast<std::uint32_t>(u * 0.4);
      gp.memory_used_bytes = static_cast<std::uint64_t>((61 + 3 * i) * 1.0 * kGiB);
      gp.memory_total_bytes = 80 * kGiB;
      gp.power_watts = 90 + 5.9 * u + 10 * n_();
      gp.temperature_celsius = static_cast<std::uint32_t>(38 + 0.35 * u + 2 * n_());
      gp.sm_clock_mhz = u > 50 ? 1980 - static_cast<std::uint32_t>(60 * n_()) : 1410;
      gp.memory_clock_mhz = 2619;
      s.gpus.push_back(gp);
    }
    return s;
  }

 private:
  Noise n_;
  std::uint64_t cpu_[5] = {}, ctx_ = 0, pswpin_ = 0, majflt_ = 0, psi_some_ = 0, psi_full_ = 0,
                cpu_psi_ = 0, disk_read_[2] = {}, disk_write_[2] = {}, net_[2] = {}, cg_usage_ = 0,
                throttled_ = 0, proc_[6] = {};
};

// Reads every sample of `path` with at(i) in a loop and with for_each, and prints both times.
int time_reading(const std::string& path) {
  auto rec = store::Recording::open(path);
  if (!rec) return std::fprintf(stderr, "%s\n", rec.error().message().c_str()), 1;
  std::size_t sink = 0;
  double t0 = now_s();
  for (std::size_t i = 0; i < (*rec)->size(); ++i) {
    auto s = (*rec)->at(i);
    if (!s) return std::fprintf(stderr, "%s\n", s.error().message().c_str()), 1;
    sink += s->processes.size();
  }
  const double at_s = now_s() - t0;
  t0 = now_s();
  auto r = (*rec)->for_each(0, (*rec)->size(), [&](std::size_t, Sample&& s) -> Result<void> {
    sink += s.processes.size();
    return {};
  });
  if (!r) return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
  const double each_s = now_s() - t0;
  std::printf(
      "read all %zu samples: at(i) in a loop %.2f s (%.1f us/sample), for_each %.2f s "
      "(%.1f us/sample)\n",
      (*rec)->size(), at_s, at_s * 1e6 / double((*rec)->size()), each_s,
      each_s * 1e6 / double((*rec)->size()));
  return sink == 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // `read PATH`: only time the reading of an existing recording.
  const bool read_only = argc > 2 && std::string(argv[1]) == "read";
  const int n = read_only ? 0 : argc > 1 ? std::atoi(argv[1]) : 86'400;
  const std::string path = argc > 2 ? argv[2] : "/tmp/dltune_report_soak.db";
  if (!read_only && n < 2) return std::fprintf(stderr, "at least 2 samples\n"), 2;
  if (read_only) return time_reading(path);

  store::RecordingInfo info;
  info.hostname = "gpu-node-17";
  info.started_wall_ns = kStart;
  info.interval_ns = 1'000'000'000;
  info.scope = "tree of python";
  info.command = {"python", "train.py", "--workers", "4"};
  double t0 = now_s();
  auto w = store::RecordingWriter::create(path, info, {.force = true, .batch = 100});
  if (!w) return std::fprintf(stderr, "%s\n", w.error().message().c_str()), 1;
  Day day;
  for (int t = 0; t < n; ++t)
    if (auto r = (*w)->append(day.next(t)); !r)
      return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"time_ns", kStart + 64'500ll * 1'000'000'000},
                    {"kind", "oom_kill"},
                    {"text", "Out of memory: Killed process 4246 (pt_data_worker)"}});
  events.push_back({{"time_ns", kStart + 30'050ll * 1'000'000'000},
                    {"kind", "hung_task"},
                    {"text", "INFO: task pt_data_worker:4244 blocked for more than 120 seconds"}});
  if (auto r = (*w)->put_document("events", events); !r) return 1;
  // This host's facts and findings, as record stores them at the end (the report's top part).
  const host::Root root;
  const auto facts = inventory::collect(root, {});
  if (auto r = (*w)->put_document("env", inventory::to_json(facts)); !r) return 1;
  if (auto profile = settings::load_profile("training", root, settings::validate_key))
    if (auto report = audit::run_check(facts, root, *profile, {}))
      if (auto r = (*w)->put_document("check", audit::to_json(*report, facts)); !r) return 1;
  if (auto r = (*w)->finish(0); !r)
    return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
  std::printf("wrote %d samples to %s in %.1f s (%.1f MB)\n", n, path.c_str(), now_s() - t0,
              static_cast<double>(std::filesystem::file_size(path)) / 1e6);

  return time_reading(path);
}

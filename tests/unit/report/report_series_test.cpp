// extract(): series from recordings of samples with known counters (report_samples.hpp gives the
// hand-worked numbers), the window, markers and sections.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "report/series.hpp"
#include "unit/report/report_samples.hpp"

namespace dltune::report::report_series_test {
namespace {

using dltune::testing::KnownOptions;
using dltune::testing::kT0;
using dltune::testing::TempDir;
using dltune::testing::write_recording;
using ::testing::HasSubstr;

constexpr std::int64_t kSecond = 1'000'000'000;

std::unique_ptr<store::Recording> open(const std::string& path) {
  auto r = store::Recording::open(path);
  EXPECT_TRUE(r) << r.error().message();
  return r ? std::move(*r) : nullptr;
}

ReportData extract_ok(const std::string& path, Window w = {}) {
  auto rec = open(path);
  auto d = extract(*rec, w);
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : ReportData{};
}

const Series& series(const ReportData& d, const std::string& id) {
  static const Series kNone;
  const Series* s = d.find(id);
  EXPECT_NE(s, nullptr) << "no series " << id;
  return s ? *s : kNone;
}

std::vector<std::string> chart_ids(const ReportData& d) {
  std::vector<std::string> ids;
  for (const auto& s : d.sections)
    for (const auto& c : s.charts) ids.push_back(c.id);
  return ids;
}

const Section& section(const ReportData& d, const std::string& id) {
  for (const auto& s : d.sections)
    if (s.id == id) return s;
  ADD_FAILURE() << "no section " << id;
  return d.sections.front();
}

TEST(ReportSeries, HostRatesAreTheHandWorkedOnesAndTheFirstSampleHasNone) {
  TempDir dir;
  write_recording(dir.file("run.db"), 6);
  const auto d = extract_ok(dir.file("run.db"));
  ASSERT_EQ(d.time_ms.size(), 6u);
  EXPECT_EQ(d.time_ms[0], kT0 / 1'000'000);
  EXPECT_EQ(d.time_ms[5] - d.time_ms[0], 5000);

  const auto& user = series(d, "cpu.user_pct");
  EXPECT_EQ(user.unit, "percent");
  ASSERT_EQ(user.values.size(), 6u);
  EXPECT_TRUE(std::isnan(user.values[0])) << "a rate needs a previous sample: null, not 0";
  for (std::size_t k = 1; k < 6; ++k) {
    EXPECT_DOUBLE_EQ(user.values[k], 30.0);
    EXPECT_DOUBLE_EQ(series(d, "cpu.system_pct").values[k], 15.0);
    EXPECT_DOUBLE_EQ(series(d, "cpu.iowait_pct").values[k], 5.0);
    EXPECT_DOUBLE_EQ(series(d, "cpu.steal_pct").values[k], 0.0);  // a real zero stays 0
    EXPECT_DOUBLE_EQ(series(d, "swap.in_bytes_s").values[k], 25.0 * 4096);
    EXPECT_DOUBLE_EQ(series(d, "swap.out_bytes_s").values[k], 0.0);
    EXPECT_DOUBLE_EQ(series(d, "memory.major_faults_s").values[k], 7.0);
    EXPECT_DOUBLE_EQ(series(d, "disk.vda.read_bytes_s").values[k], 2048.0 * 512);
    EXPECT_DOUBLE_EQ(series(d, "disk.read_bytes_s").values[k], 2048.0 * 512);
    EXPECT_DOUBLE_EQ(series(d, "net.rx_bytes_s").values[k], 1000.0);
    EXPECT_DOUBLE_EQ(series(d, "net.tx_bytes_s").values[k], 500.0);
  }
  EXPECT_TRUE(std::isnan(series(d, "swap.in_bytes_s").values[0]));
  // Levels need no previous sample.
  EXPECT_DOUBLE_EQ(series(d, "memory.used_bytes").values[0], 2.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(series(d, "memory.cache_bytes").values[0], (1ull << 30) + 100.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(series(d, "swap.used_bytes").values[0], 100.0 * (1 << 20));
}

TEST(ReportSeries, JobCgroupAndGpuSeries) {
  TempDir dir;
  write_recording(dir.file("run.db"), 4);
  const auto d = extract_ok(dir.file("run.db"));
  for (std::size_t k = 1; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(series(d, "job.main.cpu_pct").values[k], 50.0);
    EXPECT_DOUBLE_EQ(series(d, "job.workers.cpu_pct").values[k], 40.0);
    EXPECT_DOUBLE_EQ(series(d, "cgroup.cpu_pct").values[k], 50.0);
  }
  EXPECT_TRUE(std::isnan(series(d, "job.main.cpu_pct").values[0]));
  EXPECT_EQ(d.find("job.children.cpu_pct"), nullptr) << "no child process: no series";
  EXPECT_DOUBLE_EQ(series(d, "job.workers.count").values[0], 2.0);
  EXPECT_DOUBLE_EQ(series(d, "job.workers.rss_bytes").values[0], 512.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(series(d, "cgroup.quota_pct").values[0], 200.0);
  EXPECT_DOUBLE_EQ(series(d, "cgroup.memory_limit_bytes").values[0], 2.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(series(d, "gpu.0.util_pct").values[2], 70.0);
  EXPECT_DOUBLE_EQ(series(d, "gpu.0.power_w").values[2], 250.5);
  EXPECT_EQ(series(d, "gpu.0.power_w").unit, "watts");
  // The clock event reasons as GPUs held per kind (GpuIdle counts in none), and PCIe in bytes/s.
  for (std::size_t k = 0; k < 4; ++k) {
    const double odd = k % 2 == 1 ? 1.0 : 0.0;
    EXPECT_DOUBLE_EQ(series(d, "gpu.held.power_cap").values[k], odd) << k;
    EXPECT_DOUBLE_EQ(series(d, "gpu.held.thermal").values[k], odd) << k;
    EXPECT_DOUBLE_EQ(series(d, "gpu.held.hw_slowdown").values[k], 0.0) << k;
    EXPECT_DOUBLE_EQ(series(d, "gpu.held.settings").values[k], 0.0) << k;
  }
  EXPECT_EQ(series(d, "gpu.held.power_cap").unit, "count");
  EXPECT_DOUBLE_EQ(series(d, "gpu.0.pcie_rx_bytes_s").values[1], 1000.0 * 1024);
  EXPECT_DOUBLE_EQ(series(d, "gpu.0.pcie_tx_bytes_s").values[1], 250.0 * 1024);
  EXPECT_EQ(series(d, "gpu.0.pcie_tx_bytes_s").unit, "bytes/s");
  // NVML gave no SM clock: no series at all, rather than a line at 0.
  EXPECT_EQ(d.find("gpu.0.sm_clock_mhz"), nullptr);
  EXPECT_THAT(
      chart_ids(d),
      ::testing::ElementsAre("cpu", "memory", "paging", "disk", "net", "gpu_util", "gpu_memory",
                             "gpu_power", "gpu_temperature", "gpu_clocks", "gpu_held", "gpu_pcie",
                             "job_cpu", "job_memory", "cgroup_cpu", "cgroup_memory"));
}

TEST(ReportSeries, AbsentSourcesLeaveSectionsOutWithAReason) {
  TempDir dir;
  KnownOptions bare;
  bare.gpu = bare.job = bare.cgroup = false;
  store::RecordingInfo info;
  info.scope = "testhost  host";  // as record writes it
  write_recording(dir.file("run.db"), 3, bare, info);
  const auto d = extract_ok(dir.file("run.db"));
  EXPECT_EQ(d.find("pressure.cpu.some_pct"), nullptr);
  EXPECT_THAT(section(d, "pressure").absent, HasSubstr("/proc/pressure"));
  EXPECT_TRUE(section(d, "gpu").charts.empty());
  EXPECT_THAT(section(d, "gpu").absent, HasSubstr("no GPU"));
  EXPECT_THAT(section(d, "job").absent, HasSubstr("host only"));
  EXPECT_THAT(section(d, "cgroup").absent, HasSubstr("no cgroup"));
  EXPECT_THAT(chart_ids(d), ::testing::ElementsAre("cpu", "memory", "paging", "disk", "net"));
}

TEST(ReportSeries, PressureFromTheTotalsAndANullFullLineForCpu) {
  TempDir dir;
  KnownOptions with_pressure;
  with_pressure.pressure = true;
  write_recording(dir.file("run.db"), 3, with_pressure);
  const auto d = extract_ok(dir.file("run.db"));
  EXPECT_DOUBLE_EQ(series(d, "pressure.memory.some_pct").values[1], 10.0);
  EXPECT_DOUBLE_EQ(series(d, "pressure.io.full_pct").values[2], 2.0);
  EXPECT_DOUBLE_EQ(series(d, "pressure.cpu.some_pct").values[1], 10.0);
  EXPECT_EQ(d.find("pressure.cpu.full_pct"), nullptr);
}

TEST(ReportSeries, TheWindowTakesItsFirstRatesFromTheSampleBeforeIt) {
  TempDir dir;
  write_recording(dir.file("run.db"), 10);
  const auto d = extract_ok(dir.file("run.db"), Window{kT0 + 2 * kSecond, kT0 + 5 * kSecond});
  ASSERT_EQ(d.time_ms.size(), 4u);
  EXPECT_EQ(d.time_ms.front(), (kT0 + 2 * kSecond) / 1'000'000);
  EXPECT_EQ(d.window_samples, 4u);
  EXPECT_EQ(d.recording_samples, 10u);
  EXPECT_DOUBLE_EQ(series(d, "cpu.user_pct").values[0], 30.0) << "sample 1 gives sample 2 rates";
  EXPECT_EQ(d.from_ms, (kT0 + 2 * kSecond) / 1'000'000);
  EXPECT_EQ(d.to_ms, (kT0 + 5 * kSecond) / 1'000'000);
}

TEST(ReportSeries, AnEmptyOrBackwardsWindowIsAnError) {
  TempDir dir;
  write_recording(dir.file("run.db"), 5);
  auto rec = open(dir.file("run.db"));
  auto backwards = extract(*rec, Window{kT0 + 3 * kSecond, kT0 + kSecond});
  ASSERT_FALSE(backwards);
  EXPECT_THAT(backwards.error().message(), HasSubstr("starts after it ends"));
  auto after = extract(*rec, Window{kT0 + 100 * kSecond, std::nullopt});
  ASSERT_FALSE(after);
  EXPECT_THAT(after.error().message(), HasSubstr("no sample between"));
}

TEST(ReportSeries, FromAndToAreReadAgainstTheRecordingAndCheckedNamingTheOption) {
  TempDir dir;
  write_recording(dir.file("run.db"), 10);
  auto rec = open(dir.file("run.db"));
  auto all = window_of(*rec, "", "");
  ASSERT_TRUE(all) << all.error().message();
  EXPECT_FALSE(all->from_ns);
  EXPECT_FALSE(all->to_ns);
  auto part = window_of(*rec, "+2s", "+5s");
  ASSERT_TRUE(part) << part.error().message();
  EXPECT_EQ(part->to_ns.value_or(0) - part->from_ns.value_or(0), 3 * kSecond);
  auto backwards = window_of(*rec, "+5s", "+2s");
  ASSERT_FALSE(backwards);
  EXPECT_THAT(backwards.error().message(), HasSubstr("--from +5s is after --to +2s"));
  auto bad = window_of(*rec, "", "yesterday");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("--to"));
  auto empty = window_of(*rec, "+1h", "");
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message(), HasSubstr("no sample between"));
}

TEST(ReportSeries, MarkersForOomKillsTheJobAndKernelEvents) {
  TempDir dir;
  store::RecordingInfo info;
  info.command = {"python", "train.py"};
  const nlohmann::json events = nlohmann::json::array(
      {{{"time_ns", kT0 + 2 * kSecond}, {"kind", "xid"}, {"text", "Xid 79 on GPU 0"}},
       {{"time_ns", kT0 + 100 * kSecond}, {"kind", "hung_task"}, {"text", "outside the window"}}});
  write_recording(dir.file("run.db"), 6, {}, info, {{"events", events}});
  const auto d = extract_ok(dir.file("run.db"));
  std::vector<std::string> kinds;
  for (const auto& m : d.markers) kinds.push_back(m.kind);
  EXPECT_THAT(kinds, ::testing::ElementsAre("job_start", "xid", "oom_kill", "cgroup_oom_kill"));
  EXPECT_EQ(d.markers[0].time_ms, kT0 / 1'000'000);
  EXPECT_EQ(d.markers[0].text, "started: python train.py");
  EXPECT_EQ(d.markers[2].time_ms, (kT0 + 3 * kSecond) / 1'000'000);
  EXPECT_THAT(d.markers[2].text, HasSubstr("1 OOM kill on the host"));
  EXPECT_EQ(d.markers[3].time_ms, (kT0 + 4 * kSecond) / 1'000'000);
  EXPECT_THAT(d.markers[3].text, HasSubstr("/dltune/job-1"));
  EXPECT_DOUBLE_EQ(series(d, "cgroup.oom_kills").values[4], 1.0);
  EXPECT_DOUBLE_EQ(series(d, "cgroup.oom_kills").values[5], 0.0);
}

TEST(ReportSeries, AMalformedEventsDocumentIsAnErrorNamingIt) {
  TempDir dir;
  write_recording(dir.file("run.db"), 3, {}, {},
                  {{"events", nlohmann::json::array({{{"kind", "xid"}}})}});
  auto rec = open(dir.file("run.db"));
  auto d = extract(*rec, {});
  ASSERT_FALSE(d);
  EXPECT_THAT(d.error().message(), HasSubstr("document \"events\": event 0"));
}

TEST(ReportSeries, TheDocumentsComeAlong) {
  TempDir dir;
  write_recording(dir.file("run.db"), 3, {}, {},
                  {{"env", {{"os", {{"kernel_release", "6.1.0"}}}}},
                   {"profile", {{"verdict", "input-bound"}}}});
  const auto d = extract_ok(dir.file("run.db"));
  ASSERT_TRUE(d.env);
  EXPECT_EQ((*d.env)["os"]["kernel_release"], "6.1.0");
  EXPECT_FALSE(d.check);
  ASSERT_TRUE(d.profile);
}

TEST(ReportTime, OffsetsAndAbsoluteTimes) {
  const std::int64_t start = kT0, end = kT0 + 3600 * kSecond;
  EXPECT_EQ(*parse_time("+10m", start, end, "--from"), start + 600 * kSecond);
  EXPECT_EQ(*parse_time("-1h", start, end, "--from"), start);
  EXPECT_EQ(*parse_time("-90s", start, end, "--from"), end - 90 * kSecond);
  EXPECT_EQ(*parse_time("2025-11-30T10:53:20Z", start, end, "--from"), kT0);
  EXPECT_EQ(*parse_time("2025-11-30T11:53:20+01:00", start, end, "--from"), kT0);
  EXPECT_EQ(*parse_time("2025-11-30T10:53:20.25Z", start, end, "--from"), kT0 + kSecond / 4);
  EXPECT_EQ(*parse_time("2025-11-30T10:53Z", start, end, "--from"), kT0 - 20 * kSecond);
  for (const char* bad :
       {"", "10m", "+", "+ten", "2025-13-30T10:53:20Z", "2025-11-30T10:53:20+1", "yesterday"}) {
    auto r = parse_time(bad, start, end, "--to");
    ASSERT_FALSE(r) << bad;
    EXPECT_THAT(r.error().message(), HasSubstr("--to")) << bad;
  }
}

}  // namespace
}  // namespace dltune::report::report_series_test

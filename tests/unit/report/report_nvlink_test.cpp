// The report's NVLink chart: each GPU's bytes/s from NVML's cumulative counters (the Model's,
// between two readings of the GPU), no point after a counter went down, the rate kept while the
// samples repeat the reading it came from, and no chart without the counters.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/series.hpp"
#include "store/recording.hpp"
#include "unit/report/report_samples.hpp"

namespace dltune::report::report_nvlink_test {
namespace {

using dltune::testing::known;
using dltune::testing::TempDir;

constexpr double kMiB = 1024.0 * 1024;

// known(0..n-1) (1 Hz) with GPU 0's NVLink counters and reading time set by `edit`.
template <class Edit>
void write(const std::string& path, int n, Edit edit) {
  store::RecordingInfo info;
  info.started_wall_ns = dltune::testing::kT0;
  info.interval_ns = 1'000'000'000;
  info.hostname = "testhost";
  info.scope = "tree of python";
  auto w = store::RecordingWriter::create(path, info, {.force = true});
  ASSERT_TRUE(w) << w.error().message();
  for (int t = 0; t < n; ++t) {
    auto s = known(t);
    ASSERT_EQ(s.gpus.size(), 1u);
    edit(t, s.gpus[0]);
    ASSERT_TRUE((*w)->append(s));
  }
  ASSERT_TRUE((*w)->finish(0));
}

ReportData extract_ok(const std::string& path) {
  auto r = store::Recording::open(path);
  EXPECT_TRUE(r) << r.error().message();
  if (!r) return {};
  auto d = extract(**r, Window{});
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : ReportData{};
}

std::vector<double> values(const ReportData& d, const std::string& id) {
  const Series* s = d.find(id);
  EXPECT_NE(s, nullptr) << "no series " << id;
  return s != nullptr ? s->values : std::vector<double>{};
}

std::vector<std::string> gpu_chart_ids(const ReportData& d) {
  std::vector<std::string> ids;
  for (const auto& s : d.sections)
    if (s.id == "gpu")
      for (const auto& c : s.charts) ids.push_back(c.id);
  return ids;
}

TEST(ReportNvLink, ACounterGoingUpGivesBytesPerSecondAndAResetNone) {
  TempDir dir;
  // TX 2 MiB/s throughout; RX 512 KiB/s, started again at second 4 (the driver reloaded).
  write(dir.file("run.db"), 7, [](int t, monitor::Gpu& g) {
    g.nvlink_tx_kib = 1'000'000 + 2048 * static_cast<std::uint64_t>(t);
    g.nvlink_rx_kib = t < 4 ? 9000 + 512 * static_cast<std::uint64_t>(t)
                            : 5 + 512 * static_cast<std::uint64_t>(t - 4);
  });
  const auto d = extract_ok(dir.file("run.db"));
  const auto tx = values(d, "gpu.0.nvlink_tx_bytes_s");
  const auto rx = values(d, "gpu.0.nvlink_rx_bytes_s");
  ASSERT_EQ(tx.size(), 7u);
  ASSERT_EQ(rx.size(), 7u);
  EXPECT_TRUE(std::isnan(tx[0])) << "a rate needs a previous reading";
  EXPECT_TRUE(std::isnan(rx[0]));
  for (std::size_t k = 1; k < 7; ++k) {
    EXPECT_DOUBLE_EQ(tx[k], 2 * kMiB) << k;
    if (k == 4) {
      EXPECT_TRUE(std::isnan(rx[k])) << "the counter went down: no point, not 0 or a spike";
    } else {
      EXPECT_DOUBLE_EQ(rx[k], 0.5 * kMiB) << k;
    }
  }
  EXPECT_EQ(d.find("gpu.0.nvlink_tx_bytes_s")->unit, "bytes/s");
  EXPECT_THAT(gpu_chart_ids(d),
              ::testing::ElementsAre("gpu_util", "gpu_memory", "gpu_power", "gpu_temperature",
                                     "gpu_clocks", "gpu_held", "gpu_pcie", "gpu_nvlink"));
  for (const auto& s : d.sections)
    for (const auto& c : s.charts)
      if (c.id == "gpu_nvlink") {
        EXPECT_THAT(c.series,
                    ::testing::ElementsAre("gpu.0.nvlink_rx_bytes_s", "gpu.0.nvlink_tx_bytes_s"));
      }
}

TEST(ReportNvLink, ARateIsKeptWhileTheSamplesRepeatItsReading) {
  TempDir dir;
  // NVML read every 2 s, sampled every second: samples 2r and 2r+1 carry reading r, which has
  // sent 4 MiB more than the one before (2 MiB/s over its 2 s).
  write(dir.file("run.db"), 6, [](int t, monitor::Gpu& g) {
    const int r = t / 2;
    g.sampled_at_ns = 7'000'000'000'000 + std::int64_t{2'000'000'000} * r;
    g.nvlink_tx_kib = 4096 * static_cast<std::uint64_t>(r);
    g.nvlink_rx_kib = 0;
  });
  const auto d = extract_ok(dir.file("run.db"));
  const auto tx = values(d, "gpu.0.nvlink_tx_bytes_s");
  ASSERT_EQ(tx.size(), 6u);
  EXPECT_TRUE(std::isnan(tx[0]));
  EXPECT_TRUE(std::isnan(tx[1])) << "the first reading again: nothing to keep yet";
  for (std::size_t k = 2; k < 6; ++k) EXPECT_DOUBLE_EQ(tx[k], 2 * kMiB) << k;
  EXPECT_DOUBLE_EQ(values(d, "gpu.0.nvlink_rx_bytes_s")[3], 0.0);  // idle links: a real 0
}

TEST(ReportNvLink, NoChartWithoutTheCounters) {
  TempDir dir;
  write(dir.file("run.db"), 4, [](int, monitor::Gpu&) {});
  const auto d = extract_ok(dir.file("run.db"));
  EXPECT_EQ(d.find("gpu.0.nvlink_tx_bytes_s"), nullptr);
  EXPECT_EQ(d.find("gpu.0.nvlink_rx_bytes_s"), nullptr);
  EXPECT_THAT(gpu_chart_ids(d), ::testing::Not(::testing::Contains("gpu_nvlink")));
}

}  // namespace
}  // namespace dltune::report::report_nvlink_test

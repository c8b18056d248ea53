// Model's NVLink rates from NVML's cumulative KiB counters (model_process.cpp): over the time
// between the GPU's two readings, none for a repeated reading, a counter that went down, another
// GPU or a first sample.
#include <gtest/gtest.h>

#include "monitor/model.hpp"

namespace model_nvlink_test {

using namespace dltune::monitor;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

Gpu nvlink_gpu(std::uint64_t tx_kib, std::uint64_t rx_kib, std::optional<std::int64_t> read_at) {
  Gpu g;
  g.index = 0;
  g.uuid = "GPU-0";
  g.nvlink_tx_kib = tx_kib;
  g.nvlink_rx_kib = rx_kib;
  g.sampled_at_ns = read_at;
  return g;
}

Sample with(const Gpu& g, std::int64_t at_ns) {
  Sample s;
  s.monotonic_ns = at_ns;
  s.gpus = {g};
  return s;
}

}  // namespace

TEST(ModelNvLink, BytesPerSecondOverTheReadingsOwnInterval) {
  // Samples 1 s apart, the GPU's readings 2 s apart: 8192 KiB sent in 2 s is 4 MiB/s, not 8.
  const auto before = with(nvlink_gpu(1000, 5000, 10 * kSecond), 11 * kSecond);
  const auto now = with(nvlink_gpu(1000 + 8192, 5000 + 1024, 12 * kSecond), 12 * kSecond);
  const auto m = Model::from(now, &before);
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(m.gpus[0].nvlink_tx_bytes_s.value(), 8192.0 * 1024 / 2);
  EXPECT_DOUBLE_EQ(m.gpus[0].nvlink_rx_bytes_s.value(), 1024.0 * 1024 / 2);
  // No previous sample: no rate.
  EXPECT_FALSE(Model::from(now, nullptr).gpus[0].nvlink_tx_bytes_s);
}

TEST(ModelNvLink, ReadingsWithoutTheirTimeTakeTheSamplesInterval) {
  const auto before = with(nvlink_gpu(0, 0, std::nullopt), 1 * kSecond);
  const auto now = with(nvlink_gpu(4096, 0, std::nullopt), 3 * kSecond);
  const auto m = Model::from(now, &before);
  EXPECT_DOUBLE_EQ(m.gpus[0].nvlink_tx_bytes_s.value(), 4096.0 * 1024 / 2);
  EXPECT_DOUBLE_EQ(m.gpus[0].nvlink_rx_bytes_s.value(), 0.0);  // idle: a real 0
}

TEST(ModelNvLink, NoneForARepeatedReadingAResetOrAnotherGpu) {
  const auto before = with(nvlink_gpu(1000, 5000, 10 * kSecond), 10 * kSecond);
  // The sample repeats the reading before it (NVML is read more slowly than the samples).
  auto m = Model::from(with(nvlink_gpu(1000, 5000, 10 * kSecond), 11 * kSecond), &before);
  EXPECT_FALSE(m.gpus[0].nvlink_tx_bytes_s);
  EXPECT_FALSE(m.gpus[0].nvlink_rx_bytes_s);
  // The driver reloaded: TX started again from 0 and has no rate; RX grew and has one.
  m = Model::from(with(nvlink_gpu(3, 6024, 11 * kSecond), 11 * kSecond), &before);
  EXPECT_FALSE(m.gpus[0].nvlink_tx_bytes_s);
  EXPECT_DOUBLE_EQ(m.gpus[0].nvlink_rx_bytes_s.value(), 1024.0 * 1024);
  // Index 0 is another GPU now (another UUID): no rate.
  auto other = nvlink_gpu(2000, 6000, 11 * kSecond);
  other.uuid = "GPU-1";
  m = Model::from(with(other, 11 * kSecond), &before);
  EXPECT_FALSE(m.gpus[0].nvlink_tx_bytes_s);
  // A GPU without the counters (no NVLink) has none, and the other fields are still copied.
  Gpu plain;
  plain.index = 0;
  plain.pcie_tx_kib_s = 1;
  m = Model::from(with(plain, 11 * kSecond), &before);
  EXPECT_FALSE(m.gpus[0].nvlink_tx_bytes_s);
  EXPECT_DOUBLE_EQ(m.gpus[0].pcie_tx_bytes_s.value(), 1024.0);
}

}  // namespace model_nvlink_test

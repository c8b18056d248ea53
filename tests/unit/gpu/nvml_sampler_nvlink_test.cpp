// NvmlSampler's NVLink data counters against the fake libnvidia-ml.so: the two fields read in one
// nvmlDeviceGetFieldValues call per GPU and reading, growing as the fake's counters grow; a GPU
// that says NOT_SUPPORTED (for the call, or for both fields) left without them and not asked
// again; another failure said and asked again; a driver without the call.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_nvml_config.hpp"
#include "gpu/nvml_sampler.hpp"
#include "support/build_paths.hpp"

namespace dltune::gpu::nvml_sampler_nvlink_test {
namespace {

TEST(NvmlSamplerNvLink, CountersArriveGrowAndAGpuWithoutThemIsAskedOnce) {
  auto config = testing::fake_hgx(4);
  auto& gpus = config["gpus"];
  gpus[0]["nvlink_throughput_kib"] = {{"tx", 1000}, {"rx", 2000}};
  gpus[0]["nvlink_throughput_kib_step"] = {{"tx", 4096}, {"rx", 1024}};
  // gpus[1]: no NVLink counters; each field NOT_SUPPORTED, the call itself succeeds.
  gpus[2]["nvlink_throughput_kib"] = {{"tx", 1}, {"rx", 1}};
  gpus[2]["fail"] = {{"nvmlDeviceGetFieldValues", 3}};  // the call NOT_SUPPORTED
  gpus[3]["nvlink_throughput_kib"] = {{"tx", 7}};       // RX not supported, TX is
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].nvlink_tx_kib, 1000u);
  EXPECT_EQ(out[0].nvlink_rx_kib, 2000u);
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_FALSE(out[i].nvlink_tx_kib) << i;
    EXPECT_FALSE(out[i].nvlink_rx_kib) << i;
  }
  EXPECT_EQ(out[3].nvlink_tx_kib, 7u);
  EXPECT_FALSE(out[3].nvlink_rx_kib);
  s->read(out, failed);
  s->read(out, failed);
  EXPECT_TRUE(failed.empty()) << ::testing::PrintToString(failed);
  // Two readings later: two steps more (one call per GPU and reading, both fields in it).
  EXPECT_EQ(out[0].nvlink_tx_kib, 1000u + 2 * 4096);
  EXPECT_EQ(out[0].nvlink_rx_kib, 2000u + 2 * 1024);
  EXPECT_FALSE(out[1].nvlink_tx_kib);
  EXPECT_FALSE(out[2].nvlink_rx_kib);
  EXPECT_EQ(out[3].nvlink_tx_kib, 7u);
  // GPU 0 and GPU 3 three times each; GPUs 1 and 2, which said NOT_SUPPORTED, once each.
  EXPECT_EQ(testing::fake_nvml_calls("nvmlDeviceGetFieldValues"), 3u + 3u + 1u + 1u);
}

TEST(NvmlSamplerNvLink, AFailingCallIsSaidLeavesThemOutAndIsAskedAgain) {
  auto config = testing::fake_hgx(1);
  config["gpus"][0]["nvlink_throughput_kib"] = {{"tx", 1}, {"rx", 2}};
  config["gpus"][0]["fail"] = {{"nvmlDeviceGetFieldValues", 15}};  // NVML_ERROR_GPU_IS_LOST
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  s->read(out, failed);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].nvlink_tx_kib);
  EXPECT_FALSE(out[0].nvlink_rx_kib);
  ASSERT_EQ(failed.size(), 1u) << ::testing::PrintToString(failed);
  EXPECT_EQ(failed.begin()->rfind("nvmlDeviceGetFieldValues: NVML_ERROR_GPU_IS_LOST", 0), 0u)
      << *failed.begin();
  EXPECT_EQ(testing::fake_nvml_calls("nvmlDeviceGetFieldValues"), 2u);
  EXPECT_TRUE(out[0].memory_total_bytes) << "the rest is read";
}

TEST(NvmlSamplerNvLink, ADriverWithoutTheCallLeavesThemAbsent) {
  auto config = testing::fake_hgx(1);
  config["gpus"][0]["nvlink_throughput_kib"] = {{"tx", 1}, {"rx", 2}};
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML_OLD);  // no nvmlDeviceGetFieldValues
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].nvlink_tx_kib);
  EXPECT_FALSE(out[0].nvlink_rx_kib);
  EXPECT_TRUE(failed.empty()) << ::testing::PrintToString(failed);
  EXPECT_TRUE(out[0].memory_total_bytes);
}

}  // namespace
}  // namespace dltune::gpu::nvml_sampler_nvlink_test

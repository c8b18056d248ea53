// NvmlSampler's GPU Performance Monitoring against the fake libnvidia-ml.so: SM activity and
// occupancy, tensor and DRAM activity from a GPU's second reading on (two samples make an
// interval), as ratios; a metric NVML does not compute left out alone; a GPU without GPM (before
// Hopper) and a driver without the calls give none; two samples per GPU for the sampler's life
// (LeakSanitizer fails the test program when they are not freed); a failing sample starts the
// interval again.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_nvml_config.hpp"
#include "gpu/nvml_sampler.hpp"
#include "support/build_paths.hpp"

namespace dltune::gpu::nvml_sampler_gpm_test {
namespace {

TEST(NvmlSamplerGpm, RatiosFromTheSecondReadingAndNoneWithoutGpm) {
  auto config = testing::fake_hgx(3);
  config["gpus"][0]["gpm"] = {
      {"sm_util", 15.5}, {"sm_occupancy", 8.25}, {"any_tensor_util", 3}, {"dram_bw_util", 100}};
  config["gpus"][2]["gpm"] = {{"sm_util", 250}, {"sm_occupancy", -1}};  // nonsense: left out
  // gpus[1]: no GPM (an A100).
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[0].sm_active_ratio) << "one sample is no interval yet";
  s->read(out, failed);
  ASSERT_TRUE(out[0].sm_active_ratio);
  EXPECT_DOUBLE_EQ(*out[0].sm_active_ratio, 0.155);
  ASSERT_TRUE(out[0].sm_occupancy_ratio);
  EXPECT_DOUBLE_EQ(*out[0].sm_occupancy_ratio, 0.0825);
  ASSERT_TRUE(out[0].tensor_active_ratio);
  EXPECT_DOUBLE_EQ(*out[0].tensor_active_ratio, 0.03);
  EXPECT_EQ(out[0].dram_active_ratio, 1.0);
  EXPECT_FALSE(out[1].sm_active_ratio) << "no GPM on this GPU";
  EXPECT_FALSE(out[2].sm_active_ratio) << "250%";
  EXPECT_FALSE(out[2].sm_occupancy_ratio) << "-1%";
  EXPECT_FALSE(out[2].tensor_active_ratio) << "not computed: left out, not 0";
  s->read(out, failed);
  EXPECT_DOUBLE_EQ(out[0].sm_active_ratio.value_or(0), 0.155);
  EXPECT_TRUE(failed.empty()) << ::testing::PrintToString(failed);
  // Two samples for each GPU with GPM, kept for the sampler's life; GPU 1 asked once.
  EXPECT_EQ(testing::fake_nvml_calls("nvmlGpmSampleAlloc"), 4u);
  EXPECT_EQ(testing::fake_nvml_calls("nvmlGpmQueryDeviceSupport"), 3u);
  EXPECT_EQ(testing::fake_nvml_calls("nvmlGpmSampleGet"), 6u);
  EXPECT_EQ(testing::fake_nvml_calls("nvmlGpmMetricsGet"), 4u);
}

TEST(NvmlSamplerGpm, AFailedSampleIsSaidAndStartsTheIntervalAgain) {
  auto config = testing::fake_hgx(1);
  config["gpus"][0]["gpm"] = {{"sm_util", 40}};
  config["gpus"][0]["fail"] = {{"nvmlGpmSampleGet", 999}};  // NVML_ERROR_UNKNOWN
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  for (int i = 0; i < 3; ++i) s->read(out, failed);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].sm_active_ratio);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed.begin()->find("nvmlGpmSampleGet"), std::string::npos) << *failed.begin();
  EXPECT_EQ(testing::fake_nvml_calls("nvmlGpmMetricsGet"), 0u);
}

TEST(NvmlSamplerGpm, ADriverWithoutTheCallsGivesNone) {
  auto config = testing::fake_hgx(1);
  config["gpus"][0]["gpm"] = {{"sm_util", 40}};
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML_OLD);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  for (int i = 0; i < 3; ++i) s->read(out, failed);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].sm_active_ratio);
  EXPECT_TRUE(failed.empty()) << ::testing::PrintToString(failed);
}

}  // namespace
}  // namespace dltune::gpu::nvml_sampler_gpm_test

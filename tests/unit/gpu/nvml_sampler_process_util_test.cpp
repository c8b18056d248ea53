// NvmlSampler's per-process SM utilisation against the fake libnvidia-ml.so
// (nvmlDeviceGetProcessUtilization): each compute process gets its sample's smUtil; a process
// the call does not list, or every process when it finds none (NVML_ERROR_NOT_FOUND), 0; a GPU
// that says NOT_SUPPORTED leaves them absent and is not asked again; a failure is said; a driver
// without the call leaves them absent.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_nvml_config.hpp"
#include "gpu/nvml_sampler.hpp"
#include "support/build_paths.hpp"

namespace dltune::gpu::nvml_sampler_process_util_test {
namespace {

TEST(NvmlSamplerProcessUtil, EachProcessGetsItsShareAndTheUnlistedZero) {
  auto config = testing::fake_hgx(4);
  const nlohmann::json two = {{{"pid", 4242}, {"used_memory_bytes", 1073741824ull}},
                              {{"pid", 4243}, {"used_memory_bytes", 1048576ull}}};
  for (int i = 0; i < 4; ++i) config["gpus"][i]["processes"] = two;
  config["gpus"][0]["process_utilization"] = {{{"pid", 4242}, {"sm", 60}, {"mem", 20}},
                                              {{"pid", 9999}, {"sm", 30}}};  // no compute process
  config["gpus"][1]["process_utilization"] = nlohmann::json::array();        // NOT_FOUND
  // gpus[2]: no list: NOT_SUPPORTED.
  config["gpus"][3]["process_utilization"] = {{{"pid", 4243}, {"sm", 5}}};
  config["gpus"][3]["fail"] = {{"nvmlDeviceGetProcessUtilization", 999}};
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  s->read(out, failed);
  ASSERT_EQ(out.size(), 4u);
  ASSERT_EQ(out[0].processes.size(), 2u);
  EXPECT_EQ(out[0].processes[0].sm_util_pct, 60u);
  EXPECT_EQ(out[0].processes[1].sm_util_pct, 0u) << "not listed: did not use the GPU";
  for (const auto& p : out[1].processes) EXPECT_EQ(p.sm_util_pct, 0u) << "NOT_FOUND: none did";
  for (const auto& p : out[2].processes) EXPECT_FALSE(p.sm_util_pct) << "NOT_SUPPORTED";
  for (const auto& p : out[3].processes) EXPECT_FALSE(p.sm_util_pct) << "failed";
  ASSERT_EQ(failed.size(), 1u) << ::testing::PrintToString(failed);
  EXPECT_NE(failed.begin()->find("nvmlDeviceGetProcessUtilization"), std::string::npos);
  // GPU 0: a count call and a read at each reading; GPU 1: a count call (NOT_FOUND) each; GPU 2
  // once (NOT_SUPPORTED); GPU 3 a count call each (it fails).
  EXPECT_EQ(testing::fake_nvml_calls("nvmlDeviceGetProcessUtilization"), 4u + 2u + 1u + 2u);
}

TEST(NvmlSamplerProcessUtil, ADriverWithoutTheCallLeavesThemOut) {
  auto config = testing::fake_hgx(1);
  config["gpus"][0]["processes"] = {{{"pid", 4242}, {"used_memory_bytes", 1048576ull}}};
  config["gpus"][0]["process_utilization"] = {{{"pid", 4242}, {"sm", 60}}};
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML_OLD);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].processes.size(), 1u);
  EXPECT_FALSE(out[0].processes[0].sm_util_pct);
  EXPECT_TRUE(failed.empty()) << ::testing::PrintToString(failed);
}

}  // namespace
}  // namespace dltune::gpu::nvml_sampler_process_util_test

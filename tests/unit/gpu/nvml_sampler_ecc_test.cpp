// NvmlSampler's ECC counts against the fake libnvidia-ml.so: the volatile counts while ECC is on,
// nothing while it is off or where NVML does not support them, a failing call said and its
// counts left out.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_nvml_config.hpp"
#include "gpu/nvml_sampler.hpp"
#include "support/build_paths.hpp"

namespace dltune::gpu::nvml_sampler_ecc_test {
namespace {

TEST(NvmlSamplerEcc, VolatileCountsOnlyWhileEccIsOn) {
  auto config = testing::fake_hgx(4);
  auto& gpus = config["gpus"];
  gpus[0]["ecc_errors"]["volatile_corrected"] = 17;
  gpus[0]["ecc_errors"]["volatile_uncorrected"] = 2;
  gpus[0]["ecc_errors"]["aggregate_corrected"] = 900;  // lifetime: not what the sampler reads
  gpus[1]["ecc_enabled"] = false;
  gpus[1]["ecc_errors"]["volatile_corrected"] = 5;  // ECC off: not read
  gpus[2].erase("ecc_errors");                      // on, but the counts NOT_SUPPORTED
  gpus[3].erase("ecc_enabled");                     // the mode NOT_SUPPORTED (no ECC)
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(failed.empty()) << ::testing::PrintToString(failed);
  EXPECT_EQ(out[0].ecc_corrected, 17u);
  EXPECT_EQ(out[0].ecc_uncorrected, 2u);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_FALSE(out[i].ecc_corrected) << i;
    EXPECT_FALSE(out[i].ecc_uncorrected) << i;
  }
  // A reading into the same elements again keeps the counts.
  s->read(out, failed);
  EXPECT_EQ(out[0].ecc_corrected, 17u);
}

TEST(NvmlSamplerEcc, AFailingCallIsSaidAndItsCountsLeftOut) {
  auto config = testing::fake_hgx(1);
  config["gpus"][0]["fail"] = {{"nvmlDeviceGetTotalEccErrors", 15}};  // NVML_ERROR_GPU_IS_LOST
  testing::FakeNvmlConfig fake(config);
  auto s = NvmlSampler::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(s) << s.error().message();
  std::vector<GpuReading> out;
  std::set<std::string> failed;
  s->read(out, failed);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].ecc_corrected);
  EXPECT_FALSE(out[0].ecc_uncorrected);
  ASSERT_EQ(failed.size(), 1u) << ::testing::PrintToString(failed);
  EXPECT_EQ(failed.begin()->rfind("nvmlDeviceGetTotalEccErrors: ", 0), 0u) << *failed.begin();
  EXPECT_TRUE(out[0].memory_total_bytes) << "the rest is read";
}

}  // namespace
}  // namespace dltune::gpu::nvml_sampler_ecc_test

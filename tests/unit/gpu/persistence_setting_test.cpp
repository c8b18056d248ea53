// GPU persistence mode read and set through the fake libnvidia-ml, loaded as dltune loads the
// real one (DLTUNE_NVML_LIBRARY): values, errors that name the NVML call and the GPU, and every
// nvmlInit paired with an nvmlShutdown.
#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../gpu/fake_nvml_config.hpp"
#include "core/json.hpp"
#include "gpu/persistence_setting.hpp"
#include "support/build_paths.hpp"

namespace persistence_setting_test {

using dltune::gpu::read_nvml_setting;
using dltune::gpu::write_nvml_setting;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using ::testing::HasSubstr;

namespace {

// Points DLTUNE_NVML_LIBRARY at a library for as long as it lives.
class NvmlLibraryVariable {
 public:
  explicit NvmlLibraryVariable(const char* path) { ::setenv("DLTUNE_NVML_LIBRARY", path, 1); }
  ~NvmlLibraryVariable() { ::unsetenv("DLTUNE_NVML_LIBRARY"); }
  NvmlLibraryVariable(const NvmlLibraryVariable&) = delete;
  NvmlLibraryVariable& operator=(const NvmlLibraryVariable&) = delete;
};

std::string uuid(const nlohmann::json& config, int gpu) {
  return config["gpus"][gpu]["uuid"].get<std::string>();
}

std::string target(const nlohmann::json& config, int gpu) {
  return "nvml:" + uuid(config, gpu) + "/persistence_mode";
}

int count(const std::string& text, const std::string& word) {
  int n = 0;
  for (auto p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(NvmlSetting, ReadsSetsAndReadsBackAcrossInits) {
  const auto config = fake_hgx(2);  // GPU 0 on, GPU 1 off
  FakeNvmlConfig fake(config);
  NvmlLibraryVariable lib(DLTUNE_FAKE_NVML);
  auto now = read_nvml_setting(target(config, 1));
  ASSERT_TRUE(now) << now.error().message();
  EXPECT_EQ(*now, "off");
  EXPECT_EQ(*read_nvml_setting(target(config, 0)), "on");

  auto back = write_nvml_setting(target(config, 1), "on");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, "on");
  // A new nvmlInit (as a later dltune process makes) sees it through FAKE_NVML_STATE.
  EXPECT_EQ(*read_nvml_setting(target(config, 1)), "on");
  EXPECT_EQ(fake.state()[uuid(config, 1)]["persistence_mode"], true);
  ASSERT_TRUE(write_nvml_setting(target(config, 1), "off"));
  EXPECT_EQ(*read_nvml_setting(target(config, 1)), "off");
  EXPECT_EQ(*read_nvml_setting(target(config, 0)), "on");  // the other GPU untouched

  const auto log = fake.log();
  EXPECT_EQ(count(log, "nvmlInit_v2\n"), 7) << log;  // one per call
  EXPECT_EQ(count(log, "nvmlShutdown\n"), 7) << log;
}

TEST(NvmlSetting, TheOldLibraryFindsTheGpuByComparingUuids) {
  const auto config = fake_hgx(4);
  FakeNvmlConfig fake(config);
  NvmlLibraryVariable lib(DLTUNE_FAKE_NVML_OLD);  // no nvmlDeviceGetHandleByUUID
  EXPECT_EQ(*read_nvml_setting(target(config, 3)), "off");
  auto back = write_nvml_setting(target(config, 3), "on");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, "on");
  EXPECT_EQ(*read_nvml_setting(target(config, 3)), "on");
  EXPECT_EQ(*read_nvml_setting(target(config, 2)), "on");
  auto none = read_nvml_setting("nvml:GPU-00000000-0000-0000-0000-000000000000/persistence_mode");
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_FALSE(*none);
}

TEST(NvmlSetting, AnUnknownUuidIsAbsentToReadAndAnErrorToWrite) {
  FakeNvmlConfig fake(fake_hgx(2));
  NvmlLibraryVariable lib(DLTUNE_FAKE_NVML);
  const std::string gone = "GPU-deadbeef-0000-0000-0000-000000000000";
  auto r = read_nvml_setting("nvml:" + gone + "/persistence_mode");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE(*r);
  auto w = write_nvml_setting("nvml:" + gone + "/persistence_mode", "on");
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message(), HasSubstr(gone));
  EXPECT_THAT(w.error().message(), HasSubstr("no GPU"));
}

TEST(NvmlSetting, MalformedTargetsAndValuesAreRefusedBeforeNvmlIsLoaded) {
  const auto config = fake_hgx(1);
  FakeNvmlConfig fake(config);
  NvmlLibraryVariable lib(DLTUNE_FAKE_NVML);
  for (const std::string bad :
       {"nvml:", "nvml:/persistence_mode", "GPU-1/persistence_mode", "nvml:GPU-1/ecc_mode",
        "nvml:GPU-1/x/persistence_mode", "nvml:MIG-1/persistence_mode",
        "nvml:GPU-\x01/persistence_mode", "/proc/sys/vm/swappiness"}) {
    auto r = read_nvml_setting(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_THAT(r.error().message(), HasSubstr(bad));
    auto w = write_nvml_setting(bad, "on");
    ASSERT_FALSE(w) << bad;
    EXPECT_THAT(w.error().message(), HasSubstr(bad));
  }
  for (const std::string bad : {"1", "true", "ON", "", "enabled"}) {
    auto w = write_nvml_setting(target(config, 0), bad);
    ASSERT_FALSE(w) << bad;
    EXPECT_THAT(w.error().message(), HasSubstr("on or off, not '" + bad + "'"));
  }
  EXPECT_EQ(fake.log(), "");  // nothing was loaded for any of them
}

TEST(NvmlSetting, ErrorsNameTheNvmlCallItsErrorAndTheGpu) {
  auto config = fake_hgx(2);
  config["gpus"][1]["fail"]["nvmlDeviceSetPersistenceMode"] = 4;
  config["gpus"][0]["fail"]["nvmlDeviceGetPersistenceMode"] = 15;
  FakeNvmlConfig fake(config);
  NvmlLibraryVariable lib(DLTUNE_FAKE_NVML);
  auto w = write_nvml_setting(target(config, 1), "on");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message(), "nvmlDeviceSetPersistenceMode failed on GPU " + uuid(config, 1) +
                                     ": NVML_ERROR_NO_PERMISSION (4): Insufficient Permissions");
  EXPECT_EQ(*read_nvml_setting(target(config, 1)), "off");  // unchanged
  auto r = read_nvml_setting(target(config, 0));
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("nvmlDeviceGetPersistenceMode failed on GPU " +
                                             uuid(config, 0) + ": NVML_ERROR_GPU_IS_LOST (15)"));
  // A GPU that does not support it (no "persistence_mode" in the config).
  config["gpus"][1].erase("persistence_mode");
  config["gpus"][1].erase("fail");
  FakeNvmlConfig unsupported(config);
  w = write_nvml_setting(target(config, 1), "on");
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message(), HasSubstr("NVML_ERROR_NOT_SUPPORTED (3)"));
  const auto log = unsupported.log();
  EXPECT_EQ(count(log, "nvmlInit_v2\n"), count(log, "nvmlShutdown\n")) << log;
}

TEST(NvmlSetting, AStickyGpuReadsBackItsOldMode) {
  auto config = fake_hgx(2);
  config["gpus"][1]["persistence_mode_sticky"] = true;
  FakeNvmlConfig fake(config);
  NvmlLibraryVariable lib(DLTUNE_FAKE_NVML);
  auto back = write_nvml_setting(target(config, 1), "on");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, "off");
}

TEST(NvmlSetting, NvmlThatDoesNotLoadIsAnError) {
  FakeNvmlConfig fake(fake_hgx(1));
  NvmlLibraryVariable lib("/nonexistent/libnvidia-ml.so.1");
  auto r = read_nvml_setting("nvml:GPU-1/persistence_mode");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("cannot load NVML"));
  auto init = fake_hgx(1);
  init["init_error"] = 9;
  FakeNvmlConfig no_driver(init);
  NvmlLibraryVariable fake_lib(DLTUNE_FAKE_NVML);
  auto w = write_nvml_setting("nvml:GPU-1/persistence_mode", "on");
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message(), HasSubstr("NVML_ERROR_DRIVER_NOT_LOADED"));
}

}  // namespace persistence_setting_test

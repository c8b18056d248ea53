// `dltune env --json` as a user runs it, the NVML library named by DLTUNE_NVML_LIBRARY: the fake
// one (tests/fakes/nvml), and one without NVML's symbols.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "unit/gpu/fake_nvml_config.hpp"

using nlohmann::json;

TEST(EnvCommand, ShowsTheFakeNvmlGpus) {
  dltune::testing::FakeNvmlConfig fake(dltune::testing::fake_hgx(8));
  const std::string cmd = std::string("DLTUNE_NVML_LIBRARY='") + DLTUNE_FAKE_NVML + "' '" +
                          DLTUNE_BINARY + "' env --json";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[65536];
  while (const auto n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0);
  const auto j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out.substr(0, 500);
  const auto& nvml = j["gpu"]["nvml"];
  EXPECT_EQ(nvml["loaded"], true);
  EXPECT_EQ(nvml["library"], DLTUNE_FAKE_NVML);
  EXPECT_EQ(nvml["driver_version"], "550.54.15");
  EXPECT_EQ(nvml["cuda_driver_version"], "12.4");
  ASSERT_EQ(nvml["devices"].size(), 8u);
  EXPECT_EQ(nvml["devices"][7]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(nvml["devices"][7]["pci_bus_id"], "0000:db:00.0");
  EXPECT_EQ(nvml["devices"][7]["nvlinks"].size(), 18u);
  EXPECT_EQ(j["gpu"]["nvml_source"], "live");
  EXPECT_EQ(j["gpu"]["driver"]["user_library_version"], "550.54.15");
  EXPECT_EQ(fake.log(), "nvmlInit_v2\nnvmlShutdown\n");
}

TEST(EnvCommand, ABrokenLibraryLeavesTheErrorAndTheRest) {
  const std::string cmd = std::string("DLTUNE_NVML_LIBRARY='") + DLTUNE_FAKE_NVML_NOSYMS + "' '" +
                          DLTUNE_BINARY + "' env --json";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[65536];
  while (const auto n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0);
  const auto j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out.substr(0, 500);
  EXPECT_EQ(j["gpu"]["nvml"]["loaded"], false);
  EXPECT_NE(j["gpu"]["nvml"]["error"].get<std::string>().find("required NVML symbol not found"),
            std::string::npos);
  EXPECT_TRUE(j["gpu"]["devices"].is_array());
}

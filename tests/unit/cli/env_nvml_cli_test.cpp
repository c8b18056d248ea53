// `dltune env --json` as a user runs it, the NVML library named by DLTUNE_NVML_LIBRARY: the fake
// one (tests/fakes/nvml), and one without NVML's symbols.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run.hpp"
#include "unit/gpu/fake_nvml_config.hpp"

using nlohmann::json;

namespace {

// `dltune env --json` with DLTUNE_NVML_LIBRARY=`library`, the rest of the environment as ours.
dltune::testing::RunResult env_json(const std::string& library) {
  return dltune::testing::run({DLTUNE_BINARY, "env", "--json"}, {{"DLTUNE_NVML_LIBRARY", library}});
}

}  // namespace

TEST(EnvCommand, ShowsTheFakeNvmlGpus) {
  dltune::testing::FakeNvmlConfig fake(dltune::testing::fake_hgx(8));
  const auto r = env_json(DLTUNE_FAKE_NVML);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto& out = r.out;
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
  const auto r = env_json(DLTUNE_FAKE_NVML_NOSYMS);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto& out = r.out;
  const auto j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out.substr(0, 500);
  EXPECT_EQ(j["gpu"]["nvml"]["loaded"], false);
  EXPECT_NE(j["gpu"]["nvml"]["error"].get<std::string>().find("required NVML symbol not found"),
            std::string::npos);
  EXPECT_TRUE(j["gpu"]["devices"].is_array());
}

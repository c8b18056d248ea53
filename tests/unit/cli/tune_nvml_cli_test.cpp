// `dltune tune` setting GPU persistence mode as a user runs it, with the fake libnvidia-ml
// (DLTUNE_NVML_LIBRARY) standing in for the driver's: plan, apply, status (drift) and rollback
// are separate processes, and FAKE_NVML_STATE carries the GPUs' state between them. Only temp
// files change: the host's settings are not in the plan (--only gpu.persistence).
#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../gpu/fake_nvml_config.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace tune_nvml_cli_test {

using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using dltune::testing::run;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

const std::map<std::string, std::string> kEnv = {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}};

struct StateDir {
  fs::path path = fs::path(::testing::TempDir()) /
                  ("tune_nvml_cli_" + std::to_string(::getpid()) + "_" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  StateDir() { fs::remove_all(path); }
  ~StateDir() { fs::remove_all(path); }
};

}  // namespace

TEST(TuneNvmlCli, PlanListsEachGpuThatIsOffByUuid) {
  const auto config = fake_hgx(4);
  FakeNvmlConfig fake(config);
  const auto r = run(
      {DLTUNE_BINARY, "tune", "plan", "--only", "gpu.persistence", "--persist", "--json"}, kEnv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["items"].size(), 1u);
  const auto& item = j["items"][0];
  EXPECT_EQ(item["key"], "gpu.persistence");
  EXPECT_EQ(item["status"], "change");
  EXPECT_EQ(item["summary"],
            "off -> on on GPU 1 (NVIDIA H100 80GB HBM3), GPU 3 (NVIDIA H100 80GB HBM3)");
  ASSERT_EQ(item["changes"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const auto& c = item["changes"][i];
    EXPECT_EQ(c["kind"], "nvml");
    EXPECT_EQ(c["target"],
              "nvml:" + config["gpus"][2 * i + 1]["uuid"].get<std::string>() + "/persistence_mode");
    EXPECT_EQ(c["old"], "off");
    EXPECT_EQ(c["new"], "on");
  }
  EXPECT_THAT(item["notes"][0].get<std::string>(), HasSubstr("nvidia-persistenced"));
  EXPECT_TRUE(fake.state().empty());  // plan changes nothing
}

TEST(TuneNvmlCli, ApplyStatusAndRollbackAcrossProcesses) {
  if (::geteuid() != 0) GTEST_SKIP() << "tune apply needs root (it refuses before changing)";
  const auto config = fake_hgx(2);
  FakeNvmlConfig fake(config);
  StateDir state;
  const std::string uuid1 = config["gpus"][1]["uuid"];
  const std::vector<std::string> tune = {DLTUNE_BINARY, "tune", "--state-dir", state.path.string()};
  auto with = [&](std::vector<std::string> args) {
    auto argv = tune;
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, kEnv);
  };

  auto r = with({"apply", "--only", "gpu.persistence", "--yes", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["changed"], 1);
  EXPECT_EQ(fake.state()[uuid1]["persistence_mode"], true);

  r = with({"status", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["drift"].empty()) << r.out;

  // Applying again changes nothing: the fake now says on for both.
  r = with({"apply", "--only", "gpu.persistence", "--yes"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("nothing to change"));

  fake.set_persistence(uuid1, false);  // someone turned it off again
  r = with({"status", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto drift = nlohmann::json::parse(r.out)["drift"];
  ASSERT_EQ(drift.size(), 1u) << r.out;
  EXPECT_EQ(drift[0]["target"], "nvml:" + uuid1 + "/persistence_mode");
  EXPECT_EQ(drift[0]["actual"], "off");

  fake.set_persistence(uuid1, true);
  r = with({"rollback", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["restored"], 1);
  EXPECT_EQ(fake.state()[uuid1]["persistence_mode"], false);
}

TEST(TuneNvmlCli, ApplyWithoutPermissionFailsNamingTheGpuAndTheNvmlError) {
  if (::geteuid() != 0) GTEST_SKIP() << "tune apply needs root (it refuses before changing)";
  auto config = fake_hgx(4);
  config["gpus"][3]["fail"]["nvmlDeviceSetPersistenceMode"] = 4;
  FakeNvmlConfig fake(config);
  StateDir state;
  const auto r = run({DLTUNE_BINARY, "tune", "apply", "--only", "gpu.persistence", "--yes",
                      "--state-dir", state.path.string()},
                     kEnv);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("rolled back"));
  EXPECT_THAT(r.err, HasSubstr(config["gpus"][3]["uuid"].get<std::string>()));
  EXPECT_THAT(r.err, HasSubstr("NVML_ERROR_NO_PERMISSION"));
  EXPECT_THAT(r.err, Not(HasSubstr("could not restore")));
  // GPU 1 was set before GPU 3 failed, and is off again.
  EXPECT_EQ(fake.state()[config["gpus"][1]["uuid"].get<std::string>()]["persistence_mode"], false);
}

}  // namespace tune_nvml_cli_test

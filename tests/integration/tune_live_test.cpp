// `dltune tune` on this machine's real kernel, as root: apply the training profile, read every
// value back, roll back, and compare with the values before, byte for byte; the same after a
// crash injected after each change in turn. Every value a test touches is restored at the end,
// even when the test fails (HostValues).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/host_values.hpp"
#include "support/run.hpp"

using dltune::testing::HostValues;
using dltune::testing::kSysctlDropin;
using dltune::testing::put;
using dltune::testing::run;
using dltune::testing::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

class TuneLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "tune changes /proc/sys and /sys: needs root";
    state_ = fs::path(::testing::TempDir()) / ("tune_state_" + std::to_string(::getpid()));
    fs::remove_all(state_);
    const auto plan = tune({"plan", "-p", "training", "--persist", "--json"});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    plan_ = json::parse(plan.out);
    std::vector<std::string> paths;
    for (const auto& i : plan_["items"])
      for (const auto& c : i["changes"])
        if (c["kind"] != "file") paths.push_back(c["target"]);
    ASSERT_FALSE(paths.empty()) << "nothing to tune on this host: the test would prove nothing";
    host_ = std::make_unique<HostValues>(paths);
  }
  void TearDown() override {
    host_.reset();
    fs::remove_all(state_);
  }
  dltune::testing::RunResult tune(std::vector<std::string> args,
                                  std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "tune", "--state-dir", state_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, env);
  }
  int live_changes() const {
    int n = 0;
    for (const auto& i : plan_["items"]) n += static_cast<int>(i["changes"].size());
    return n;
  }

  fs::path state_;
  json plan_;
  std::unique_ptr<HostValues> host_;
};

}  // namespace

TEST_F(TuneLive, ApplyVerifiesEveryValueAndRollbackRestoresThemByteForByte) {
  const auto apply = tune({"apply", "-p", "training", "--persist", "--yes", "--json"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  // Every value now reads back as the plan said.
  for (const auto& i : plan_["items"]) {
    for (const auto& c : i["changes"]) {
      if (c["kind"] == "file" || c["implied"] == true) continue;
      std::string now = *slurp(c["target"]);
      std::string norm;
      std::istringstream words(now);
      for (std::string w; words >> w;) norm += (norm.empty() ? "" : " ") + w;
      if (c["kind"] == "sysfs" && now.find('[') != std::string::npos) {
        EXPECT_NE(now.find("[" + c["new"].get<std::string>() + "]"), std::string::npos) << now;
      } else {
        EXPECT_EQ(norm, c["new"]) << c["target"];
      }
    }
  }
  const auto dropin = slurp(kSysctlDropin);
  ASSERT_TRUE(dropin);
  EXPECT_NE(dropin->find("vm.swappiness = 10"), std::string::npos) << *dropin;
  struct stat st {};
  ASSERT_EQ(::stat(kSysctlDropin, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  const auto status = tune({"status", "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_TRUE(json::parse(status.out)["drift"].empty());

  const auto rb = tune({"rollback"});
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  const auto history = json::parse(tune({"history", "--json"}).out);
  EXPECT_EQ(history["transactions"][0]["state"], "rolled_back");
}

TEST_F(TuneLive, ACrashAfterAnyChangeIsFoundAndRolledBackExactly) {
  const int n = live_changes();
  ASSERT_GT(n, 1);
  for (int k = 1; k <= n; ++k) {
    const auto crashed = tune({"apply", "-p", "training", "--persist", "--yes"},
                              {{"DLTUNE_TEST_CRASH_AFTER", std::to_string(k)}});
    // An implied change (the kernel's own) is not counted: past the last real one apply finishes.
    if (crashed.exit_code == 0) {
      ASSERT_EQ(tune({"rollback"}).exit_code, 0);
      break;
    }
    ASSERT_EQ(crashed.exit_code, 99) << "crash after change " << k << ": " << crashed.err;
    const auto status = tune({"status"});
    EXPECT_EQ(status.exit_code, 1);
    EXPECT_NE(status.out.find("UNFINISHED"), std::string::npos) << status.out;
    // Any other command warns too.
    const auto again = tune({"apply", "-p", "training", "--yes"});
    EXPECT_NE(again.exit_code, 0);
    EXPECT_NE(again.err.find("left unfinished"), std::string::npos) << again.err;
    const auto rb = tune({"rollback"});
    ASSERT_EQ(rb.exit_code, 0) << "after a crash at change " << k << ": " << rb.err;
    EXPECT_TRUE(host_->changed().empty())
        << "after a crash at change " << k << ": " << ::testing::PrintToString(host_->changed());
  }
}

TEST_F(TuneLive, DriftIsReportedAndRollbackStillRestoresTheOriginal) {
  ASSERT_EQ(tune({"apply", "-p", "training", "--only", "vm.swappiness", "--yes"}).exit_code, 0);
  put("/proc/sys/vm/swappiness", "42\n");
  const auto status = tune({"status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.out.find("drift       vm.swappiness"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("now 42"), std::string::npos) << status.out;
  ASSERT_EQ(tune({"rollback"}).exit_code, 0);
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
}

TEST_F(TuneLive, AValueTheKernelRefusesStopsTheTransactionAndUndoesWhatWasDone) {
  const auto profile = fs::path(::testing::TempDir()) / "refused.toml";
  put(profile.string(),
      "[profile]\nname = \"refused\"\n"
      "[settings.\"vm.overcommit_memory\"]\nvalue = 1\nreason = \"r\"\nsource = \"s\"\n"
      "[settings.\"vm.swappiness\"]\nvalue = 1000\nreason = \"r\"\nsource = \"s\"\n");
  const auto r = tune({"apply", "-p", profile.string(), "--yes"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("vm.swappiness"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/proc/sys/vm/swappiness"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Invalid argument"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rolled back"), std::string::npos) << r.err;
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  const auto history = json::parse(tune({"history", "--json"}).out);
  EXPECT_EQ(history["transactions"][0]["state"], "failed");
}

TEST_F(TuneLive, NotRootChangesNothing) {
  const auto r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", DLTUNE_BINARY,
                      "tune", "--state-dir", state_.string(), "apply", "-p", "training", "--yes"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("needs root"), std::string::npos) << r.err;
  EXPECT_TRUE(host_->changed().empty());
  EXPECT_FALSE(fs::exists(state_ / "state.db"));
}

// The DLTUNE_TEST_FAULT hook of the real binary (docs/testing.md), on a hand-made host tree
// (--root), so that it runs without root: a bad text is bad input, a fault stops the transaction.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "support/temp_tree.hpp"

namespace tune_fault_cli_test {

using dltune::testing::run;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TuneFaultCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
    fs::remove_all(state_);
    tree_.write("proc/sys/vm/swappiness", "60\n")
        .write("etc/sysctl.d/90-dltune.conf", "kernel.pid_max = 4194304\n");
  }
  void TearDown() override { fs::remove_all(state_); }
  dltune::testing::RunResult tune(std::vector<std::string> args, const std::string& faults) {
    std::vector<std::string> argv = {DLTUNE_BINARY,        "tune",        "--root",
                                     tree_.dir().string(), "--state-dir", state_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, {{"DLTUNE_TEST_FAULT", faults}});
  }
  dltune::testing::TempTree tree_;
  fs::path state_ = fs::path(::testing::TempDir()) /
                    ("tune_fault_cli_" + std::to_string(::getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

}  // namespace

TEST_F(TuneFaultCli, UnparseableHookTextIsBadInputNamingTheVariable) {
  const auto r = tune({"plan", "-p", "training"}, "write_atomic.rename:/etc/x:EWHATEVER");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("DLTUNE_TEST_FAULT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown errno name 'EWHATEVER'"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(TuneFaultCli, ARenameFaultStopsApplyAndLeavesTheTreeAsItWas) {
  const auto r = tune({"apply", "-p", "training", "--only", "vm.swappiness", "--persist", "--yes"},
                      "write_atomic.rename:/etc/sysctl.d/90-dltune.conf:EIO");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("persist.sysctl: cannot replace /etc/sysctl.d/90-dltune.conf: "
                       "Input/output error"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("failed and was rolled back"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(tree_.dir() / "proc/sys/vm/swappiness"), "60\n");
  EXPECT_EQ(read_file(tree_.dir() / "etc/sysctl.d/90-dltune.conf"), "kernel.pid_max = 4194304\n");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tree_.dir() / "etc/sysctl.d"))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"90-dltune.conf"});
  const auto history = tune({"history", "--json"}, "");
  ASSERT_EQ(history.exit_code, 0) << history.err;
  const auto tx = nlohmann::json::parse(history.out)["transactions"][0];
  EXPECT_EQ(tx["state"], "failed");
  for (const auto& c : tx["changes"]) EXPECT_EQ(c["state"], "rolled_back") << c.dump();
}

TEST_F(TuneFaultCli, AnUnreadableSettingFailsThePlanWithExitOne) {
  const auto r = tune({"plan", "-p", "training", "--only", "vm.swappiness"},
                      "read:/proc/sys/vm/swappiness:EIO");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("vm.swappiness: cannot read /proc/sys/vm/swappiness: Input/output error"),
            std::string::npos)
      << r.err;
}

TEST_F(TuneFaultCli, AnEmptyHookIsNoFault) {
  const auto r = tune({"plan", "-p", "training", "--only", "vm.swappiness"}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("60 -> 10"), std::string::npos) << r.out;
}

}  // namespace tune_fault_cli_test

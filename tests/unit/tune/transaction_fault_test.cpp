// Faults on the way a tune transaction writes, injected through host::Root on a
// hand-made host tree: at every stage of the atomic file write, on a /proc/sys write in the
// middle of a plan, during rollback, and while planning. Each test compares the whole tree, byte
// for byte, with what it was before, so a half-applied change or a leftover temporary file fails.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/temp_tree.hpp"
#include "tune/plan.hpp"
#include "tune/transaction.hpp"

namespace transaction_fault_test {

using namespace dltune;
namespace fs = std::filesystem;
using host::FaultOp;

namespace {

constexpr const char* kSysctlDropin = "/etc/sysctl.d/90-dltune.conf";
constexpr const char* kLimitsDropin = "/etc/security/limits.d/90-dltune.conf";

// Every file of a tree (relative path -> content): any difference, a new file included, shows.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out[fs::relative(e.path(), dir).string()] = ss.str();
  }
  return out;
}

std::string differences(const std::map<std::string, std::string>& before,
                        const std::map<std::string, std::string>& after) {
  std::string out;
  for (const auto& [p, v] : before) {
    const auto it = after.find(p);
    if (it == after.end())
      out += p + ": removed\n";
    else if (it->second != v)
      out += p + ": was '" + v + "', now '" + it->second + "'\n";
  }
  for (const auto& [p, v] : after)
    if (!before.count(p)) out += p + ": new file\n";
  return out;
}

class FaultFixture {
 public:
  FaultFixture() {
    fs::remove_all(state_);
    tree_.write("proc/sys/vm/swappiness", "60\n")
        .write("proc/sys/vm/overcommit_memory", "0\n")
        .write("proc/sys/net/ipv4/tcp_wmem",
               "4096 16384 4194304\n")  // as a fixture write leaves it
        .write("sys/kernel/mm/transparent_hugepage/defrag",
               "always defer defer+madvise [madvise] never\n")
        .write("etc/sysctl.d/90-dltune.conf", "# my own note\nkernel.pid_max = 4194304\n")
        .write("etc/security/limits.d/README", "keep me\n");
    auto r = host::Root::at(tree_.dir());
    EXPECT_TRUE(r.has_value());
    root_ = *r;
    auto j = tune::Journal::open(state_.string());
    EXPECT_TRUE(j.has_value()) << j.error().message();
    journal_ = std::move(*j);
  }
  ~FaultFixture() { fs::remove_all(state_); }

  tune::Plan plan(const std::vector<std::string>& only, bool persist) {
    auto profile = settings::load_profile("training", root_, settings::validate_key);
    EXPECT_TRUE(profile.has_value());
    auto p = tune::make_plan(root_, inventory::collect(root_, {}), *profile, only, persist);
    EXPECT_TRUE(p.has_value()) << p.error().message();
    return p ? *p : tune::Plan{};
  }
  // sysctls first, then the sysctl.d drop-in, then the limits.d one.
  tune::Plan full_plan() {
    return plan({"vm.swappiness", "net.ipv4.tcp_wmem", "limits.nofile"}, true);
  }
  tune::TxRecord last_tx() {
    auto h = journal_->history();
    EXPECT_TRUE(h && !h->empty());
    return h && !h->empty() ? h->front() : tune::TxRecord{};
  }
  std::map<std::string, std::string> files() const { return snapshot(tree_.dir()); }
  std::string file(const std::string& path) const { return **root_.read(path); }

  host::Root& root() { return root_; }
  tune::Journal& journal() { return *journal_; }

 private:
  dltune::testing::TempTree tree_;
  fs::path state_ = fs::path(::testing::TempDir()) /
                    ("txfault_state_" + std::to_string(::getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
  host::Root root_;
  std::unique_ptr<tune::Journal> journal_;
};

void expect_failed_and_rolled_back(const tune::TxRecord& tx) {
  EXPECT_EQ(tx.state, tune::TxState::kFailed);
  EXPECT_FALSE(tune::incomplete(tx));
  EXPECT_TRUE(tx.error.has_value());
  for (const auto& c : tx.changes)
    EXPECT_EQ(c.state, tune::ChangeState::kRolledBack) << c.key << " " << c.target;
}

// --- every stage of the atomic write, every errno, on each drop-in ---

using StageCase = std::tuple<FaultOp, int, const char*>;

class AtomicWriteFault : public ::testing::TestWithParam<StageCase> {};

TEST_P(AtomicWriteFault, StopsRollsBackAndNamesSettingFileAndErrno) {
  const auto [op, err, file] = GetParam();
  FaultFixture f;
  const auto plan = f.full_plan();
  const auto changes = plan.changes();
  ASSERT_EQ(changes.size(), 4u) << "sysctl, sysctl, sysctl.d file, limits.d file";
  ASSERT_EQ(changes[2].target, kSysctlDropin);
  ASSERT_EQ(changes[3].target, kLimitsDropin);
  const std::string key = std::string(file) == kSysctlDropin ? "persist.sysctl" : "persist.limits";
  const auto before = f.files();

  f.root().inject_fault({op, file, err});
  auto applied = tune::apply_plan(f.root(), f.journal(), plan, "test");
  ASSERT_FALSE(applied) << "the fault did not stop the transaction";
  EXPECT_GE(f.root().faults_fired(), 1);
  const std::string msg = applied.error().message();
  EXPECT_NE(msg.find(key + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::strerror(err)), std::string::npos) << msg;
  EXPECT_NE(msg.find("failed and was rolled back"), std::string::npos) << msg;
  // Byte for byte as before: the sysctls, both drop-ins, and no temporary file anywhere.
  EXPECT_EQ(differences(before, f.files()), "");
  const auto tx = f.last_tx();
  expect_failed_and_rolled_back(tx);
  EXPECT_NE(tx.error->find(file), std::string::npos) << *tx.error;
}

std::string stage_name(const ::testing::TestParamInfo<StageCase>& info) {
  std::string n = std::string(host::fault_op_name(std::get<0>(info.param))) + "_" +
                  ::strerrorname_np(std::get<1>(info.param)) + "_" +
                  (std::string(std::get<2>(info.param)) == kSysctlDropin ? "sysctl_d" : "limits_d");
  for (auto& c : n)
    if (c == '.') c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(
    EveryStage, AtomicWriteFault,
    ::testing::Combine(::testing::Values(FaultOp::kAtomicOpen, FaultOp::kAtomicWrite,
                                         FaultOp::kAtomicShortWrite, FaultOp::kAtomicFsync,
                                         FaultOp::kAtomicRename),
                       ::testing::Values(EACCES, EROFS, ENOSPC, EIO),
                       ::testing::Values(kSysctlDropin, kLimitsDropin)),
    stage_name);

// --- a /proc/sys write in the middle of the plan ---

using VirtualCase = std::tuple<FaultOp, int>;

class VirtualWriteFault : public ::testing::TestWithParam<VirtualCase> {};

TEST_P(VirtualWriteFault, StopsRollsBackAndNamesSettingFileAndErrno) {
  const auto [op, err] = GetParam();
  FaultFixture f;
  const auto plan =
      f.plan({"vm.swappiness", "vm.overcommit_memory", "net.ipv4.tcp_wmem", "limits.nofile"}, true);
  const auto changes = plan.changes();
  ASSERT_GE(changes.size(), 4u);
  ASSERT_EQ(changes[0].key, "vm.swappiness");
  ASSERT_EQ(changes[1].key, "vm.overcommit_memory") << "the fault must come after a change";
  const auto before = f.files();

  f.root().inject_fault({op, "/proc/sys/vm/overcommit_memory", err});
  auto applied = tune::apply_plan(f.root(), f.journal(), plan, "test");
  ASSERT_FALSE(applied);
  EXPECT_EQ(f.root().faults_fired(), 1);
  const std::string msg = applied.error().message();
  EXPECT_NE(msg.find("vm.overcommit_memory: cannot write '" + changes[1].new_value + "' to"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("/proc/sys/vm/overcommit_memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::strerror(err)), std::string::npos) << msg;
  EXPECT_NE(msg.find("failed and was rolled back"), std::string::npos) << msg;
  EXPECT_EQ(differences(before, f.files()), "");  // vm.swappiness back to 60, nothing persisted
  const auto tx = f.last_tx();
  expect_failed_and_rolled_back(tx);
  EXPECT_EQ(tx.changes.size(), 2u) << "nothing after the failed change was journaled";
}

INSTANTIATE_TEST_SUITE_P(MiddleOfThePlan, VirtualWriteFault,
                         ::testing::Values(VirtualCase{FaultOp::kWriteVirtual, EINVAL},
                                           VirtualCase{FaultOp::kWriteVirtualOpen, EACCES},
                                           VirtualCase{FaultOp::kWriteVirtualOpen, EROFS},
                                           VirtualCase{FaultOp::kWriteVirtual, EACCES}),
                         [](const ::testing::TestParamInfo<VirtualCase>& info) {
                           std::string n =
                               std::string(host::fault_op_name(std::get<0>(info.param))) + "_" +
                               ::strerrorname_np(std::get<1>(info.param));
                           for (auto& c : n)
                             if (c == '.') c = '_';
                           return n;
                         });

// --- faults during rollback ---

}  // namespace

TEST(TransactionFault, ARestoreThatFailsIsReportedAndASecondRollbackCompletes) {
  FaultFixture f;
  const auto before = f.files();
  auto applied = tune::apply_plan(f.root(), f.journal(), f.full_plan(), "test");
  ASSERT_TRUE(applied) << applied.error().message();
  const std::string written = f.file(kSysctlDropin);
  ASSERT_NE(written, before.at("etc/sysctl.d/90-dltune.conf"));

  f.root().inject_fault({FaultOp::kAtomicRename, kSysctlDropin, EIO});
  auto rb = tune::rollback_tx(f.root(), f.journal(), applied->tx);
  ASSERT_TRUE(rb) << rb.error().message();
  ASSERT_EQ(rb->problems.size(), 1u) << ::testing::PrintToString(rb->problems);
  EXPECT_NE(rb->problems[0].find("persist.sysctl"), std::string::npos) << rb->problems[0];
  EXPECT_NE(rb->problems[0].find(kSysctlDropin), std::string::npos) << rb->problems[0];
  EXPECT_NE(rb->problems[0].find(std::strerror(EIO)), std::string::npos) << rb->problems[0];
  EXPECT_EQ(rb->restored, 3);  // the others are restored all the same
  EXPECT_EQ(f.file("/proc/sys/vm/swappiness"), "60\n");
  EXPECT_FALSE(f.root().exists(kLimitsDropin));
  EXPECT_EQ(f.file(kSysctlDropin), written);  // the rename failed: the new file is still there
  auto tx = f.last_tx();
  EXPECT_EQ(tx.state, tune::TxState::kFailed);
  EXPECT_TRUE(tune::incomplete(tx));
  EXPECT_TRUE(tune::needs_rollback(tx));
  ASSERT_TRUE(tx.error);
  EXPECT_NE(tx.error->find(kSysctlDropin), std::string::npos) << *tx.error;

  f.root().clear_faults();
  auto again = tune::rollback_tx(f.root(), f.journal(), applied->tx);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_TRUE(again->problems.empty()) << ::testing::PrintToString(again->problems);
  EXPECT_EQ(again->restored, 1);
  EXPECT_EQ(differences(before, f.files()), "");
  tx = f.last_tx();
  EXPECT_EQ(tx.state, tune::TxState::kRolledBack);
  EXPECT_FALSE(tune::needs_rollback(tx));
  for (const auto& c : tx.changes) EXPECT_EQ(c.state, tune::ChangeState::kRolledBack) << c.key;
}

TEST(TransactionFault, AFailedApplyWhoseRollbackFailsSaysSoAndCanBeRolledBackLater) {
  FaultFixture f;
  const auto before = f.files();
  // The limits.d write fails; undoing the sysctl.d drop-in written before it fails too (its
  // second rename: the first was the apply's).
  f.root().inject_fault({FaultOp::kAtomicRename, kLimitsDropin, EIO});
  f.root().inject_fault({FaultOp::kAtomicRename, kSysctlDropin, EIO, 2});
  auto applied = tune::apply_plan(f.root(), f.journal(), f.full_plan(), "test");
  ASSERT_FALSE(applied);
  const std::string msg = applied.error().message();
  EXPECT_NE(msg.find("NOT fully rolled back"), std::string::npos) << msg;
  EXPECT_NE(msg.find("persist.limits: cannot replace " + std::string(kLimitsDropin)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("could not restore: persist.sysctl"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dltune tune rollback"), std::string::npos) << msg;
  auto tx = f.last_tx();
  EXPECT_EQ(tx.state, tune::TxState::kFailed);
  EXPECT_TRUE(tune::incomplete(tx));
  EXPECT_EQ(f.file("/proc/sys/vm/swappiness"), "60\n");  // what could be restored was

  f.root().clear_faults();
  auto rb = tune::rollback_tx(f.root(), f.journal(), tx.id);
  ASSERT_TRUE(rb) << rb.error().message();
  EXPECT_TRUE(rb->problems.empty()) << ::testing::PrintToString(rb->problems);
  EXPECT_EQ(differences(before, f.files()), "");
  EXPECT_EQ(f.last_tx().state, tune::TxState::kRolledBack);
}

TEST(TransactionFault, RollingBackAFullyUndoneFailedTransactionLeavesItFailed) {
  FaultFixture f;
  f.root().inject_fault({FaultOp::kAtomicFsync, kSysctlDropin, EIO});
  auto applied = tune::apply_plan(f.root(), f.journal(), f.full_plan(), "test");
  ASSERT_FALSE(applied);
  const auto id = f.last_tx().id;
  f.root().clear_faults();
  auto rb = tune::rollback_tx(f.root(), f.journal(), id);
  ASSERT_TRUE(rb) << rb.error().message();
  EXPECT_EQ(rb->restored, 0);
  expect_failed_and_rolled_back(f.last_tx());
}

// --- faults while planning ---

TEST(TransactionFault, ASysctlThatCannotBeReadIsAPlanErrorNotAMissingSetting) {
  FaultFixture f;
  f.root().inject_fault({FaultOp::kRead, "/proc/sys/vm/swappiness", EACCES});
  auto profile = settings::load_profile("training", f.root(), settings::validate_key);
  ASSERT_TRUE(profile);
  auto plan = tune::make_plan(f.root(), inventory::collect(f.root(), {}), *profile,
                              {"vm.swappiness"}, false);
  ASSERT_FALSE(plan) << "planned " << plan->items.at(0).summary;
  const std::string msg = plan.error().message();
  EXPECT_EQ(plan.error().errno_, EACCES);
  EXPECT_NE(msg.find("vm.swappiness: cannot read /proc/sys/vm/swappiness"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find(std::strerror(EACCES)), std::string::npos) << msg;
}

TEST(TransactionFault, ASysctlThatIsAbsentIsNotApplicable) {
  FaultFixture f;
  f.root().inject_fault({FaultOp::kRead, "/proc/sys/vm/swappiness", ENOENT});
  auto profile = settings::load_profile("training", f.root(), settings::validate_key);
  ASSERT_TRUE(profile);
  auto plan = tune::make_plan(f.root(), inventory::collect(f.root(), {}), *profile,
                              {"vm.swappiness"}, false);
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_EQ(plan->items.size(), 1u);
  EXPECT_EQ(plan->items[0].status, tune::PlanItem::Status::kNotApplicable);
  EXPECT_TRUE(plan->changes().empty());
}

TEST(TransactionFault, ADropinThatCannotBeReadIsAPlanErrorNotANewFile) {
  // Taken for absent, it would be replaced, and rollback would then delete it.
  FaultFixture f;
  f.root().inject_fault({FaultOp::kRead, kSysctlDropin, EIO});
  auto profile = settings::load_profile("training", f.root(), settings::validate_key);
  ASSERT_TRUE(profile);
  auto plan = tune::make_plan(f.root(), inventory::collect(f.root(), {}), *profile,
                              {"vm.swappiness"}, true);
  ASSERT_FALSE(plan);
  const std::string msg = plan.error().message();
  EXPECT_NE(msg.find("persist.sysctl: cannot read " + std::string(kSysctlDropin)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(std::strerror(EIO)), std::string::npos) << msg;
}

}  // namespace transaction_fault_test

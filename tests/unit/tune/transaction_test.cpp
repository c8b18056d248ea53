// A tune transaction on a hand-made host tree with a real journal: the files it writes, the
// merge with what is there, and rollback to the byte.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/temp_tree.hpp"
#include "tune/plan.hpp"
#include "tune/transaction.hpp"

namespace transaction_test {

using namespace dltune;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  dltune::testing::TempTree tree;
  fs::path state = fs::path(::testing::TempDir()) /
                   ("tx_state_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Fixture() {
    fs::remove_all(state);
    tree.write("proc/sys/vm/swappiness", "60\n")
        .write("proc/sys/vm/overcommit_memory", "0\n")
        .write("proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t4194304\n")
        .write("sys/kernel/mm/transparent_hugepage/defrag",
               "always defer defer+madvise [madvise] never\n")
        .write("etc/sysctl.d/90-dltune.conf", "# my own note\nkernel.pid_max = 4194304\n")
        .mkdir("etc/security/limits.d");
  }
  ~Fixture() { fs::remove_all(state); }
  tune::Plan plan(std::vector<std::string> only, bool persist) {
    auto root = tree.root();
    auto profile = settings::load_profile("training", root, settings::validate_key);
    auto p = tune::make_plan(root, inventory::collect(root, {}), *profile, only, persist);
    EXPECT_TRUE(p.has_value());
    return *p;
  }
  std::string file(const std::string& rel) { return **tree.root().read("/" + rel); }
};

}  // namespace

TEST(Transaction, AppliesPersistsAndRollsBackToTheByte) {
  Fixture f;
  const std::string before_dropin = f.file("etc/sysctl.d/90-dltune.conf");
  auto root = f.tree.root();
  auto journal = tune::Journal::open(f.state.string());
  ASSERT_TRUE(journal) << journal.error().message();
  const auto plan = f.plan({"vm.swappiness", "net.ipv4.tcp_wmem", "limits.nofile"}, true);
  auto applied = tune::apply_plan(root, **journal, plan, "test");
  ASSERT_TRUE(applied) << applied.error().message();
  EXPECT_EQ(f.file("proc/sys/vm/swappiness"), "10\n");
  EXPECT_EQ(f.file("proc/sys/net/ipv4/tcp_wmem"), "4096 16384 16777216\n");
  const auto dropin = f.file("etc/sysctl.d/90-dltune.conf");
  EXPECT_NE(dropin.find("# my own note\nkernel.pid_max = 4194304\n"), std::string::npos) << dropin;
  EXPECT_NE(dropin.find("vm.swappiness = 10\n"), std::string::npos) << dropin;
  EXPECT_NE(dropin.find("net.ipv4.tcp_wmem = 4096 16384 16777216\n"), std::string::npos) << dropin;
  const auto limits = f.file("etc/security/limits.d/90-dltune.conf");
  EXPECT_NE(limits.find("* soft nofile 65536\n"), std::string::npos) << limits;
  EXPECT_NE(limits.find("* hard nofile 65536\n"), std::string::npos) << limits;
  // The old drop-in is kept byte for byte in the state directory too.
  auto tx = (*journal)->transaction(applied->tx);
  ASSERT_TRUE(tx && *tx);
  bool backed_up = false;
  for (const auto& c : (*tx)->changes) {
    if (c.target == "/etc/sysctl.d/90-dltune.conf") {
      ASSERT_TRUE(c.backup);
      std::ifstream in(*c.backup, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      backed_up = ss.str() == before_dropin;
    }
  }
  EXPECT_TRUE(backed_up);

  auto rb = tune::rollback_tx(root, **journal, applied->tx);
  ASSERT_TRUE(rb) << rb.error().message();
  EXPECT_TRUE(rb->problems.empty());
  EXPECT_EQ(f.file("proc/sys/vm/swappiness"), "60\n");
  EXPECT_EQ(f.file("proc/sys/net/ipv4/tcp_wmem"), "4096 16384 4194304\n");
  EXPECT_EQ(f.file("etc/sysctl.d/90-dltune.conf"), before_dropin);
  EXPECT_FALSE(root.exists("/etc/security/limits.d/90-dltune.conf"));  // did not exist before
  EXPECT_EQ((*(*journal)->transaction(applied->tx))->state, tune::TxState::kRolledBack);
}

TEST(Transaction, AFailedWriteRollsBackWhatWasDoneAndNamesTheFile) {
  Fixture f;
  // limits.d missing: writing the limits drop-in fails after the sysctls were changed.
  fs::remove_all(f.tree.dir() / "etc/security/limits.d");
  auto root = f.tree.root();
  auto journal = tune::Journal::open(f.state.string());
  ASSERT_TRUE(journal);
  const auto plan = f.plan({"vm.swappiness", "limits.nofile"}, true);
  auto applied = tune::apply_plan(root, **journal, plan, "test");
  ASSERT_FALSE(applied);
  EXPECT_NE(applied.error().message().find("/etc/security/limits.d/90-dltune.conf"),
            std::string::npos)
      << applied.error().message();
  EXPECT_NE(applied.error().message().find("rolled back"), std::string::npos);
  EXPECT_EQ(f.file("proc/sys/vm/swappiness"), "60\n");
  EXPECT_EQ(f.file("etc/sysctl.d/90-dltune.conf"), "# my own note\nkernel.pid_max = 4194304\n");
  auto history = (*journal)->history();
  ASSERT_TRUE(history && !history->empty());
  EXPECT_EQ(history->front().state, tune::TxState::kFailed);
}

TEST(Transaction, DriftIsWhatChangedSinceTheTransaction) {
  Fixture f;
  auto root = f.tree.root();
  auto journal = tune::Journal::open(f.state.string());
  ASSERT_TRUE(journal);
  auto applied =
      tune::apply_plan(root, **journal, f.plan({"vm.swappiness", "thp.defrag"}, false), "t");
  ASSERT_TRUE(applied) << applied.error().message();
  EXPECT_TRUE(tune::find_drift(root, *(*journal)->history()).empty());
  f.tree.write("proc/sys/vm/swappiness", "30\n");
  const auto drift = tune::find_drift(root, *(*journal)->history());
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_EQ(drift[0].key, "vm.swappiness");
  EXPECT_EQ(drift[0].expected, "10");
  EXPECT_EQ(drift[0].actual, "30");
}

}  // namespace transaction_test

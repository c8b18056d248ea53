// tune status, history and rollback's choice, on a real journal (SQLite in a temporary state
// directory) and a fixture host tree for drift: what `dltune tune status|history|rollback` show.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "host/root.hpp"
#include "tune/journal.hpp"
#include "tune/render.hpp"

namespace dltune::tune::status_test {
namespace {

namespace fs = std::filesystem;

class StatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "dltune_status_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    tmp_ = tmpl;
    fs::create_directories(tmp_ / "host/proc/sys/vm");
    std::ofstream(tmp_ / "host/proc/sys/vm/swappiness") << "10\n";
    std::ofstream(tmp_ / "host/proc/sys/vm/overcommit_memory") << "0\n";
    auto j = Journal::open((tmp_ / "state").string());
    ASSERT_TRUE(j) << j.error().message();
    journal_ = std::move(*j);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // A transaction with one sysctl change, left in `state`.
  std::int64_t tx(const std::string& command, const std::string& key, const std::string& old_value,
                  const std::string& new_value, TxState state) {
    auto id = journal_->begin(command, "training");
    EXPECT_TRUE(id);
    ChangeRecord c;
    c.key = key;
    c.kind = "sysctl";
    c.target = "/proc/sys/" + key;
    for (auto& ch : c.target)
      if (ch == '.') ch = '/';
    c.old_value = old_value;
    c.new_value = new_value;
    auto change = journal_->journal_change(*id, c);
    EXPECT_TRUE(change);
    EXPECT_TRUE(journal_->set_change_state(*change, ChangeState::kVerified));
    if (state != TxState::kPending) {
      EXPECT_TRUE(journal_->finish(*id, state, std::nullopt));
    }
    return *id;
  }

  fs::path tmp_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(StatusTest, AnEmptyJournalIsCleanAndSaysSo) {
  auto root = host::Root::at((tmp_ / "host").string());
  ASSERT_TRUE(root);
  auto s = read_status(*root, *journal_);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_TRUE(s->clean());
  EXPECT_EQ(render_text(*s), "no applied transactions\n");
  EXPECT_EQ(render_history(s->history), "no transactions\n");
  EXPECT_EQ(to_json(*s, "/state")["schema"], "dltune.tune.status/1");
  EXPECT_EQ(rollback_target(*journal_), 0);
  EXPECT_FALSE(unfinished_refusal(*journal_));
}

TEST_F(StatusTest, DriftAndAnUnfinishedTransactionAreNamedAndRollbackTakesTheCrashFirst) {
  auto root = host::Root::at((tmp_ / "host").string());
  ASSERT_TRUE(root);
  // Applied 60 -> 10 (still 10: no drift), then 0 -> 1 that someone undid (drift), then a crash.
  const auto kept = tx("tune apply -p training", "vm.swappiness", "60", "10", TxState::kApplied);
  const auto drifted =
      tx("tune apply -p training", "vm.overcommit_memory", "0", "1", TxState::kApplied);
  auto s = read_status(*root, *journal_);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->clean());
  ASSERT_EQ(s->drift.size(), 1u);
  EXPECT_EQ(s->drift[0].tx, drifted);
  EXPECT_EQ(rollback_target(*journal_), drifted);  // the newest that holds changes
  const auto text = render_text(*s);
  EXPECT_NE(text.find("drift       vm.overcommit_memory: transaction " + std::to_string(drifted) +
                      " wrote 1, now 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("applied     transaction " + std::to_string(kept)), std::string::npos);

  const auto crashed = tx("tune apply -p training", "vm.swappiness", "10", "1", TxState::kPending);
  s = read_status(*root, *journal_);
  ASSERT_TRUE(s);
  EXPECT_NE(render_text(*s).find("UNFINISHED  transaction " + std::to_string(crashed)),
            std::string::npos);
  EXPECT_EQ(to_json(*s, "/state")["unfinished"].size(), 1u);
  EXPECT_EQ(rollback_target(*journal_), crashed);
  const auto refusal = unfinished_refusal(*journal_);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(*refusal, "transaction " + std::to_string(crashed) +
                          " was left unfinished (a crash?): run `dltune tune rollback " +
                          std::to_string(crashed) + "` first; nothing was changed");
  const auto history = render_history(s->history);
  EXPECT_NE(history.find("vm.swappiness"), std::string::npos) << history;
  EXPECT_NE(history.find("10 -> 1"), std::string::npos) << history;
  EXPECT_EQ(history_json(s->history)["transactions"].size(), 3u);
}

}  // namespace
}  // namespace dltune::tune::status_test

namespace dltune::tune::status_test {
namespace {

TEST(TuneResultText, ApplyAndRollbackSayWhatWasDoneAndWhatIsLeft) {
  const ApplyResult applied{7, 3};
  EXPECT_EQ(render_text(applied),
            "transaction 7: 3 change(s) applied and verified; undo with `dltune tune rollback 7`");
  EXPECT_EQ(to_json(applied), (inventory::Json{{"tx", 7}, {"changed", 3}}));

  RollbackResult whole{7, 3, {}};
  EXPECT_EQ(render_text(whole), "transaction 7: 3 value(s) restored");
  EXPECT_TRUE(problem_lines(whole).empty());
  RollbackResult part{8, 1, {"vm.swappiness: /proc/sys/vm/swappiness: Permission denied"}};
  EXPECT_EQ(render_text(part), "transaction 8: 1 value(s) restored, 1 could not be");
  const auto lines = problem_lines(part);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "rollback: vm.swappiness: /proc/sys/vm/swappiness: Permission denied");
  EXPECT_NE(lines[1].find("transaction 8 is not wholly rolled back"), std::string::npos);
  EXPECT_EQ(to_json(part)["problems"].size(), 1u);
}

}  // namespace
}  // namespace dltune::tune::status_test

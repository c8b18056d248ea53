// tune's requests as library calls: what is bad input (nothing read or changed), what the journal
// keeps of the command, and a rollback with nothing to undo.
#include "tune/request.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/temp_tree.hpp"

namespace request_test {

using namespace dltune;
using ::testing::HasSubstr;

TEST(TuneRequest, BadInputIsRefusedBeforeTheHostIsRead) {
  dltune::testing::TempTree t;
  t.write("proc/sys/vm/swappiness", "60\n");
  tune::PlanRequest r;
  r.profile = "no-such-profile";
  auto bad = tune::plan_for(t.root(), r);
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().bad_input);
  EXPECT_THAT(bad.error().error.message(), HasSubstr("profile: "));
  r.profile = "training";
  r.data = {"/data", "relative/path"};
  bad = tune::plan_for(t.root(), r);
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().bad_input);
  EXPECT_EQ(bad.error().error.message(), "--data relative/path: expected an absolute path");
  r.data = {"/data"};
  r.only = {"vm.swappiness"};
  auto plan = tune::plan_for(t.root(), r);
  ASSERT_TRUE(plan) << plan.error().error.message();
  ASSERT_EQ(plan->changes().size(), 1u);
  EXPECT_EQ(plan->changes()[0].new_value, "10");
}

TEST(TuneRequest, TheJournalKeepsTheCommandAsItWouldBeTypedAgain) {
  tune::PlanRequest r;
  r.profile = "distributed";
  r.only = {"vm.swappiness", "thp.enabled"};
  r.data = {"/data"};
  r.persist = true;
  r.cgroups = true;
  EXPECT_EQ(r.command_line(),
            "tune apply -p distributed --only vm.swappiness --only thp.enabled --data /data "
            "--cgroups --persist");
}

TEST(TuneRequest, ARollbackWithNothingToUndoIsBadInput) {
  dltune::testing::TempTree t;
  const auto state = (t.dir() / "state").string();
  auto r = tune::rollback(t.root(), state, 0);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().bad_input);
  EXPECT_EQ(r.error().error.message(), "no transaction to roll back");
  auto journal = tune::journal_for_apply(state);
  EXPECT_TRUE(journal) << journal.error().message();
}

}  // namespace request_test

// The tune plan on hand-made trees: what would change, old -> new, and what is left alone.
#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"
#include "tune/plan.hpp"

namespace plan_test {

using namespace dltune;
using settings::Expected;
using tune::PlanItem;

namespace {

const PlanItem* item(const tune::Plan& p, const std::string& key) {
  for (const auto& i : p.items)
    if (i.key == key) return &i;
  return nullptr;
}

tune::Plan plan_for(const host::Root& root, const std::string& profile,
                    std::vector<std::string> only = {}, bool persist = false) {
  auto prof = settings::load_profile(profile, root, settings::validate_key);
  EXPECT_TRUE(prof.has_value());
  const auto facts = inventory::collect(root, {});
  auto plan = tune::make_plan(root, facts, *prof, only, persist);
  EXPECT_TRUE(plan.has_value()) << plan.error().message();
  return *plan;
}

}  // namespace

TEST(TargetValue, ExactMinimumOneOfAndFields) {
  const Expected exact{Expected::Kind::kExact, {"10"}};
  EXPECT_EQ(tune::target_value(exact, "60", std::nullopt), "10");
  EXPECT_FALSE(tune::target_value(exact, "10\n", std::nullopt));
  const Expected min{Expected::Kind::kAtLeast, {"16777216"}};
  EXPECT_EQ(tune::target_value(min, "212992", std::nullopt), "16777216");
  EXPECT_FALSE(tune::target_value(min, "33554432", std::nullopt));  // never lowered
  EXPECT_EQ(tune::target_value(min, "4096\t16384\t4194304", 3), "4096 16384 16777216");
  EXPECT_FALSE(tune::target_value(min, "4096 131072 33554432", 3));
  EXPECT_FALSE(tune::target_value(min, "4096 131072", 3));  // not the expected shape: left alone
  const Expected set{Expected::Kind::kOneOf, {"always", "madvise"}};
  EXPECT_FALSE(tune::target_value(set, "madvise", std::nullopt));
  EXPECT_EQ(tune::target_value(set, "never", std::nullopt), "always");
}

TEST(Plan, SysctlsThpAndTheImpliedBytesValue) {
  dltune::testing::TempTree t;
  t.write("proc/sys/vm/swappiness", "60\n")
      .write("proc/sys/vm/dirty_ratio", "0\n")
      .write("proc/sys/vm/dirty_bytes", "33554432\n")  // bytes mode
      .write("proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t4194304\n")
      .write("sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
  auto root = t.root();
  const auto plan = plan_for(root, "training");
  const auto* sw = item(plan, "vm.swappiness");
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(sw->status, PlanItem::Status::kChange);
  EXPECT_EQ(sw->summary, "60 -> 10");
  ASSERT_EQ(sw->changes.size(), 1u);
  EXPECT_EQ(sw->changes[0].target, "/proc/sys/vm/swappiness");
  EXPECT_EQ(sw->changes[0].old_value, "60");
  EXPECT_FALSE(sw->reason.empty());
  const auto* dr = item(plan, "vm.dirty_ratio");
  ASSERT_EQ(dr->changes.size(), 2u);
  EXPECT_TRUE(dr->changes[0].implied);
  EXPECT_EQ(dr->changes[0].key, "vm.dirty_bytes");
  EXPECT_EQ(dr->changes[0].old_value, "33554432");
  EXPECT_EQ(dr->changes[1].new_value, "10");
  EXPECT_EQ(item(plan, "net.ipv4.tcp_wmem")->changes[0].new_value, "4096 16384 16777216");
  EXPECT_EQ(item(plan, "thp.enabled")->changes[0].new_value, "always");
  EXPECT_EQ(item(plan, "vm.overcommit_memory")->status, PlanItem::Status::kNotApplicable);
  EXPECT_EQ(item(plan, "gpu.nouveau")->status, PlanItem::Status::kNotTunable);
  EXPECT_EQ(item(plan, "limits.nofile")->status, PlanItem::Status::kNotTunable);
  EXPECT_EQ(item(plan, "persist.sysctl"), nullptr);  // live only
}

TEST(Plan, OnlyOneSettingAndUnknownIds) {
  dltune::testing::TempTree t;
  t.write("proc/sys/vm/swappiness", "60\n").write("proc/sys/vm/overcommit_memory", "0\n");
  auto root = t.root();
  const auto plan = plan_for(root, "training", {"vm.swappiness"});
  ASSERT_EQ(plan.items.size(), 1u);
  EXPECT_EQ(plan.changes().size(), 1u);
  auto prof = settings::load_profile("training", root, settings::validate_key);
  auto bad = tune::make_plan(root, inventory::collect(root, {}), *prof, {"vm.nope"}, false);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("vm.nope"), std::string::npos);
}

TEST(Plan, PersistWritesDropinsAndNamesFilesThatWouldOverride) {
  dltune::testing::TempTree t;
  t.write("proc/sys/vm/swappiness", "60\n")
      .write("proc/sys/net/core/rmem_max", "33554432\n")  // already fine: persisted as it is
      .write("etc/sysctl.d/99-cloud.conf", "vm.swappiness = 30\n");
  auto root = t.root();
  const auto plan =
      plan_for(root, "training", {"vm.swappiness", "net.core.rmem_max", "limits.nofile"}, true);
  const auto* p = item(plan, "persist.sysctl");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->changes.size(), 1u);
  EXPECT_EQ(p->changes[0].target, "/etc/sysctl.d/90-dltune.conf");
  EXPECT_FALSE(p->changes[0].old_value);  // a new file
  ASSERT_FALSE(p->notes.empty());
  EXPECT_NE(p->notes[0].find("/etc/sysctl.d/99-cloud.conf:1"), std::string::npos);
  const auto* l = item(plan, "persist.limits");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->changes[0].target, "/etc/security/limits.d/90-dltune.conf");
  EXPECT_EQ(item(plan, "limits.nofile")->status, PlanItem::Status::kChange);
}

TEST(Plan, MixedGovernorsChangeOnlyTheCpusThatNeedIt) {
  auto root = *host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2");
  const auto plan = plan_for(root, "training", {"cpu.governor"});
  const auto* g = item(plan, "cpu.governor");
  ASSERT_EQ(g->status, PlanItem::Status::kChange);
  ASSERT_EQ(g->changes.size(), 16u);  // CPUs 16-31 are on powersave
  EXPECT_EQ(g->changes[0].target, "/sys/devices/system/cpu/cpu16/cpufreq/scaling_governor");
  EXPECT_EQ(g->changes[0].old_value, "powersave");
  EXPECT_EQ(g->changes[0].new_value, "performance");
}

// tune writes only what the kernel's own list offers: a governor or THP mode missing from it is
// refused before anything is planned, naming the setting, the value, the file and what it allows;
// of several the profile accepts, the first the host offers is the one written.
TEST(Plan, OnlyWhatTheKernelsListOffers) {
  dltune::testing::TempTree t;
  t.write("sys/devices/system/cpu/online", "0\n")
      .write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n")
      .write("sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors",
             "powersave schedutil\n")
      .write("sys/kernel/mm/transparent_hugepage/enabled", "[always] never\n")
      .write("etc/dltune/profiles/mine.toml",
             "[settings.\"cpu.governor\"]\nvalue = [\"performance\", \"schedutil\"]\n"
             "reason = \"r\"\nsource = \"s\"\n"
             "[settings.\"thp.enabled\"]\nvalue = \"madvise\"\nreason = \"r\"\nsource = \"s\"\n");
  auto root = t.root();
  const auto facts = inventory::collect(root, {});
  auto training = settings::load_profile("training", root, settings::validate_key);
  ASSERT_TRUE(training);
  auto refused = tune::make_plan(root, facts, *training, {"cpu.governor"}, false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(),
            "cpu.governor = performance (profile training): this host does not offer it; "
            "/sys/devices/system/cpu/cpu*/cpufreq/scaling_available_governors allows powersave, "
            "schedutil");
  auto mine = settings::load_profile("mine", root, settings::validate_key);
  ASSERT_TRUE(mine) << mine.error().message();
  auto gov = tune::make_plan(root, facts, *mine, {"cpu.governor"}, false);
  ASSERT_TRUE(gov) << gov.error().message();
  const auto* g = item(*gov, "cpu.governor");
  ASSERT_EQ(g->status, PlanItem::Status::kChange);
  EXPECT_EQ(g->changes.at(0).new_value, "schedutil");
  auto thp = tune::make_plan(root, facts, *mine, {"thp.enabled"}, false);
  ASSERT_FALSE(thp);
  EXPECT_NE(thp.error().message().find(
                "thp.enabled = madvise (profile mine): this host does not offer it; "
                "/sys/kernel/mm/transparent_hugepage/enabled allows always, never"),
            std::string::npos)
      << thp.error().message();
}

}  // namespace plan_test

// The settings catalog: every key listed once, audit and tune both built on it, and every change
// a plan makes read and written by a registered change kind.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/build_paths.hpp"
#include "tune/plan.hpp"

namespace catalog_test {

using namespace dltune;

namespace {

std::string fixture(const char* name) {
  return std::string(DLTUNE_FIXTURES) + "/roots/" + name;
}

}  // namespace

TEST(SettingsCatalog, EveryKeyHasExactlyOneJudgeItsKindsOrAnAuditCheck) {
  std::set<std::string> catalog, judged_by_kind, checks;
  for (const auto& s : settings::catalog()) {
    EXPECT_TRUE(catalog.insert(s.key).second) << s.key << " is listed twice";
    if (s.check != nullptr) judged_by_kind.insert(s.key);
    ASSERT_NE(audit::rule_for(s.family() ? std::string(s.key) + "x" : std::string(s.key)), nullptr)
        << "nothing judges " << s.key;
  }
  for (const auto& r : audit::rules()) {
    EXPECT_TRUE(checks.insert(r.key).second) << r.key << " has two audit checks";
    EXPECT_EQ(judged_by_kind.count(r.key), 0u) << r.key << " is judged by its kind and by audit";
    EXPECT_EQ(catalog.count(r.key), 1u) << r.key << " is not a catalog key";
  }
  EXPECT_EQ(judged_by_kind.size() + checks.size(), catalog.size());
  // A kind that tune can change judges its own keys: one file holds the kind.
  for (const auto& s : settings::catalog()) {
    if (s.plan != nullptr) {
      EXPECT_NE(s.check, nullptr) << s.key << " is planned by its kind but judged elsewhere";
    }
  }
}

TEST(SettingsCatalog, ExactKeysComeBeforeTheFamiliesAndKeysResolveToTheirSpec) {
  bool family_seen = false;
  for (const auto& s : settings::catalog()) {
    if (s.family())
      family_seen = true;
    else
      EXPECT_FALSE(family_seen) << s.key << " comes after a family: it would never be reached";
  }
  EXPECT_STREQ(settings::spec_for("vm.swappiness")->key, "vm.");
  EXPECT_STREQ(settings::spec_for("thp.enabled")->area, "memory");
  EXPECT_EQ(settings::spec_for("vm."), nullptr);  // a family's prefix alone names nothing
  EXPECT_EQ(settings::spec_for("bogus.key"), nullptr);
  EXPECT_STREQ(settings::area_of("net.core.somaxconn"), "network");
  EXPECT_STREQ(settings::area_of("gpu.ecc"), "gpu");
}

TEST(SettingsCatalog, ChangeKindsByNameAndUnknownOnesRefused) {
  for (const char* name : {"sysctl", "sysfs", "cgroup", "file", "mount", "nvml"}) {
    const auto* k = settings::change_kind(name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_STREQ(k->name, name);
    EXPECT_EQ(k->whole_file, std::string(name) == "file") << name;
  }
  EXPECT_EQ(settings::change_kind("shell"), nullptr);
  EXPECT_EQ(settings::change_kind(""), nullptr);
}

// Every change that a plan of every built-in profile makes on every fixture host, persistent
// files included, has a registered change kind: a transaction can journal, write and restore it.
TEST(SettingsCatalog, EveryPlannedChangeHasAChangeKind) {
  std::size_t changes = 0;
  for (const char* host : {"gpu8-numa2-cgv2", "container-cgv2", "this-vm"}) {
    auto root = host::Root::at(fixture(host));
    ASSERT_TRUE(root) << root.error().message();
    const auto facts = inventory::collect(*root, {});
    for (const auto& name : settings::builtin_profiles()) {
      auto profile = settings::load_profile(name, *root, settings::validate_key);
      ASSERT_TRUE(profile) << profile.error().message();
      tune::PlanOptions options;
      options.cgroups = true;
      auto plan = tune::make_plan(*root, facts, *profile, {}, true, options);
      ASSERT_TRUE(plan) << host << " " << name << ": " << plan.error().message();
      for (const auto& c : plan->changes()) {
        ++changes;
        EXPECT_NE(settings::change_kind(c.kind), nullptr)
            << host << " " << name << ": " << c.key << " plans a change of kind " << c.kind;
      }
      // A key no planner handles is "not tunable", never dropped.
      EXPECT_GE(plan->items.size(), profile->entries.size()) << host << " " << name;
    }
  }
  EXPECT_GT(changes, 10u);  // the fixtures are misconfigured on purpose: there is work to plan
}

}  // namespace catalog_test

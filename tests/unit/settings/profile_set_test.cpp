// Profiles people write: values alone, `include` with origins, errors at FILE:LINE,
// `--set KEY=VALUE`, and a resolved profile written back as TOML that loads as the same profile.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "settings/profile_listing.hpp"
#include "support/temp_tree.hpp"

namespace profile_set_test {

using dltune::Result;
using dltune::settings::apply_sets;
using dltune::settings::Expected;
using dltune::settings::load_profile;
using dltune::settings::parse_set;
using dltune::settings::Profile;
using dltune::settings::ProfileEntry;

namespace {

const dltune::settings::KeyValidator kValidate = [](const std::string& key) {
  return dltune::settings::validate_key(key);
};

std::string error_of(const Result<Profile>& r) {
  EXPECT_FALSE(r.has_value());
  return r ? std::string() : r.error().message();
}

std::vector<std::string> keys(const Profile& p) {
  std::vector<std::string> out;
  for (const auto& e : p.entries) out.push_back(e.key);
  return out;
}

class ProfileSet : public ::testing::Test {
 protected:
  void profile(const std::string& name, const std::string& text) {
    tree_.write("etc/dltune/profiles/" + name + ".toml", text);
  }
  Result<Profile> load(const std::string& name) {
    return load_profile(name, tree_.root(), kValidate);
  }
  dltune::testing::TempTree tree_;
};

}  // namespace

TEST_F(ProfileSet, AUserProfileWithOnlyValuesLoads) {
  profile("thp-never", "[settings.\"thp.enabled\"]\nvalue = \"never\"\n");
  const auto p = load("thp-never");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  ASSERT_EQ(p->entries.size(), 1u);
  EXPECT_EQ(p->entries[0].key, "thp.enabled");
  EXPECT_EQ(p->entries[0].expected.text(), "never");
  EXPECT_TRUE(p->entries[0].reason.empty());
  EXPECT_TRUE(p->entries[0].source.empty());
  EXPECT_EQ(p->entries[0].origin_text(), "/etc/dltune/profiles/thp-never.toml");
}

TEST_F(ProfileSet, IncludeOfOneNameResolvesAndReportsOrigins) {
  // Five lines, as docs/profiles.md shows: tuned's `include=` is one name.
  profile("site",
          "[profile]\ninclude = \"training\"\n\n[settings.\"thp.enabled\"]\nvalue = \"always\"\n");
  const auto p = load("site");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->chain, (std::vector<std::string>{"training", "site"}));
  const auto* thp = p->find("thp.enabled");
  ASSERT_NE(thp, nullptr);
  EXPECT_EQ(thp->expected.text(), "always");
  EXPECT_EQ(thp->origin, "site");
  EXPECT_EQ(thp->origin_text(), "/etc/dltune/profiles/site.toml");
  const auto* swappiness = p->find("vm.swappiness");
  ASSERT_NE(swappiness, nullptr);
  EXPECT_EQ(swappiness->origin_text(), "training");
  EXPECT_EQ(swappiness->origin_file, "<built-in>/training.toml");
  EXPECT_FALSE(swappiness->reason.empty());  // the parent's reason is kept
}

TEST_F(ProfileSet, ALoopAndAMissingParentAreErrorsAtFileAndLine) {
  profile("a", "[profile]\nname = \"a\"\ninclude = [\"b\"]\n");
  profile("b", "# b\n[profile]\ninclude = \"a\"\n");
  const auto loop = error_of(load("a"));
  EXPECT_NE(loop.find("/etc/dltune/profiles/b.toml:3: include cycle"), std::string::npos) << loop;
  EXPECT_NE(loop.find("a -> b -> a"), std::string::npos) << loop;

  profile("orphan", "[profile]\ndescription = \"x\"\ninclude = [\n  \"training\",\n  \"nope\"]\n");
  const auto missing = error_of(load("orphan"));
  EXPECT_NE(missing.find("/etc/dltune/profiles/orphan.toml:5: include \"nope\""), std::string::npos)
      << missing;
  EXPECT_NE(missing.find("no such profile"), std::string::npos) << missing;

  profile("dropper",
          "[profile]\ninclude = \"defaults\"\n\n[settings.\"vm.swapiness\"]\ndrop = true\n");
  const auto drop = error_of(load("dropper"));
  EXPECT_NE(drop.find("/etc/dltune/profiles/dropper.toml:4: setting \"vm.swapiness\""),
            std::string::npos)
      << drop;
}

TEST_F(ProfileSet, SetOverridesInPlaceAndAdds) {
  auto p = load_profile("training", tree_.root(), kValidate);
  ASSERT_TRUE(p.has_value());
  const auto before = keys(*p);
  ASSERT_TRUE(apply_sets(*p, {"vm.swappiness=30", "vm/max_map_count = 262144"}, kValidate));
  auto after = keys(*p);
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_EQ(after.back(), "vm.max_map_count");  // the slash form is the dotted key
  after.pop_back();
  EXPECT_EQ(after, before);  // vm.swappiness kept its place
  const auto* s = p->find("vm.swappiness");
  EXPECT_EQ(s->expected.text(), "30");
  EXPECT_EQ(s->origin_text(), "--set");
  EXPECT_TRUE(s->reason.empty());  // training's reason was for its own value
  EXPECT_EQ(p->find("vm.max_map_count")->expected.text(), "262144");
  EXPECT_EQ(p->chain.back(), "--set");

  const auto minimum = parse_set("net.core.rmem_max=>= 33554432", kValidate);
  ASSERT_TRUE(minimum.has_value()) << minimum.error().message();
  EXPECT_EQ(minimum->expected.kind, Expected::Kind::kAtLeast);
}

TEST_F(ProfileSet, SetAloneIsAProfileOfItsValues) {
  tree_.write("proc/sys/vm/swappiness", "60\n");
  const auto p = load_profile("", {"vm.swappiness=30"}, tree_.root(), kValidate);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->name, "--set");
  EXPECT_EQ(keys(*p), (std::vector<std::string>{"vm.swappiness"}));
}

TEST_F(ProfileSet, ABadSetNamesTheKeyTheValueAndWhatIsExpected) {
  const auto message = [](const std::string& kv) {
    const auto r = parse_set(kv, kValidate);
    EXPECT_FALSE(r.has_value()) << kv;
    return r ? std::string() : r.error().message();
  };
  auto e = message("vm.swappiness=ten");
  EXPECT_NE(e.find("--set vm.swappiness=ten"), std::string::npos) << e;
  EXPECT_NE(e.find("\"ten\""), std::string::npos) << e;
  EXPECT_NE(e.find("0 to 200"), std::string::npos) << e;
  e = message("vm.swappiness=500");
  EXPECT_NE(e.find("0 to 200"), std::string::npos) << e;
  e = message("thp.enabled=sometimes");
  EXPECT_NE(e.find("thp.enabled"), std::string::npos) << e;
  EXPECT_NE(e.find("always, madvise or never"), std::string::npos) << e;
  e = message("thp.enable=never");
  EXPECT_NE(e.find("setting \"thp.enable\": unknown setting"), std::string::npos) << e;
  e = message("vm.swappiness");
  EXPECT_NE(e.find("expected KEY=VALUE"), std::string::npos) << e;
  e = message("vm.swappiness=");
  EXPECT_NE(e.find("empty value"), std::string::npos) << e;

  // On the command line a sysctl must exist on the host: a typo is named as one.
  tree_.write("proc/sys/vm/swappiness", "60\n");
  const auto root = tree_.root();
  const auto on_host = dltune::settings::set_key_validator(root, kValidate);
  EXPECT_TRUE(parse_set("vm.swappiness=10", on_host).has_value());
  const auto typo = parse_set("vm.swapiness=10", on_host);
  ASSERT_FALSE(typo.has_value());
  EXPECT_NE(typo.error().message().find("no such sysctl on this host"), std::string::npos)
      << typo.error().message();
  EXPECT_NE(typo.error().message().find("vm.swapiness=10"), std::string::npos);
  EXPECT_TRUE(parse_set("thp.enabled=never", on_host).has_value());  // not a sysctl
}

// `dltune profiles show NAME` prints to_toml: saved and loaded again, the same profile.
TEST_F(ProfileSet, ShowPrintsTomlThatLoadsAsTheSameProfile) {
  for (const auto& name : dltune::settings::builtin_profiles()) {
    const auto p = load_profile(name, tree_.root(), kValidate);
    ASSERT_TRUE(p.has_value()) << name;
    const auto file = tree_.dir() / (name + ".toml");
    std::ofstream(file) << to_toml(*p);
    const auto again = load_profile(file.string(), tree_.root(), kValidate);
    ASSERT_TRUE(again.has_value()) << name << ": " << again.error().message();
    EXPECT_EQ(again->name, p->name);
    EXPECT_EQ(again->description, p->description);
    EXPECT_TRUE(again->includes.empty()) << name;
    ASSERT_EQ(keys(*again), keys(*p)) << name;
    for (std::size_t i = 0; i < p->entries.size(); ++i) {
      const ProfileEntry& a = p->entries[i];
      const ProfileEntry& b = again->entries[i];
      EXPECT_EQ(b.expected.kind, a.expected.kind) << a.key;
      EXPECT_EQ(b.expected.values, a.expected.values) << a.key;
      EXPECT_EQ(b.severity, a.severity) << a.key;
      EXPECT_EQ(b.field, a.field) << a.key;
      EXPECT_EQ(b.critical.has_value(), a.critical.has_value()) << a.key;
      if (a.critical && b.critical) EXPECT_EQ(b.critical->values, a.critical->values) << a.key;
      EXPECT_EQ(b.reason, a.reason) << a.key;
      EXPECT_EQ(b.source, a.source) << a.key;
    }
    // And written again, the same text but for where it was read from.
    EXPECT_EQ(to_toml(*again).size() > 0, true);
  }
}

TEST_F(ProfileSet, ListingNamesBuiltInAndInstalledProfilesAndTheSettings) {
  profile("site", "[profile]\ndescription = \"our nodes\"\ninclude = \"training\"\n");
  profile("broken", "[settings.\"vm.swappiness\"]\nvalue = \"ten\"\n");
  const auto list = dltune::settings::list_profiles(tree_.root());
  ASSERT_TRUE(list.has_value()) << list.error().message();
  std::vector<std::string> names;
  for (const auto& p : *list) names.push_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"defaults", "distributed", "training", "broken", "site"}));
  const auto& site = list->back();
  EXPECT_EQ(site.description, "our nodes");
  EXPECT_EQ(site.includes, (std::vector<std::string>{"training"}));
  EXPECT_TRUE(site.problem.empty()) << site.problem;
  EXPECT_NE((*list)[3].problem.find("broken.toml:2"), std::string::npos) << (*list)[3].problem;

  const auto settings = dltune::settings::list_settings();
  const auto find = [&](const std::string& id) {
    return std::find_if(settings.begin(), settings.end(),
                        [&](const dltune::settings::SettingInfo& s) { return s.id == id; });
  };
  const auto swappiness = find("vm.swappiness");
  ASSERT_NE(swappiness, settings.end());
  EXPECT_EQ(swappiness->kind, "sysctl");
  EXPECT_TRUE(swappiness->tunable);
  EXPECT_NE(swappiness->takes.find("0 to 200"), std::string::npos) << swappiness->takes;
  ASSERT_FALSE(swappiness->defaults.empty());
  const auto shm = find("shm.size");
  ASSERT_NE(shm, settings.end());
  EXPECT_EQ(shm->kind, "check");
  EXPECT_FALSE(shm->tunable);
  EXPECT_NE(find("vm.*"), settings.end());
  EXPECT_EQ(find("thp.enabled")->kind, "sysfs");
}

}  // namespace profile_set_test

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "support/temp_tree.hpp"

namespace profile_load_test {

using dltune::Result;
using dltune::settings::load_profile;
using dltune::settings::Profile;
using dltune::settings::ProfileEntry;

namespace {

const dltune::settings::KeyValidator kValidate = [](const std::string& key) {
  return dltune::settings::validate_key(key);
};

std::string setting(const std::string& key, const std::string& value) {
  return "[settings.\"" + key + "\"]\nvalue = " + value + "\nreason = \"r\"\nsource = \"s\"\n";
}

std::vector<std::string> keys(const Profile& p) {
  std::vector<std::string> out;
  for (const auto& e : p.entries) out.push_back(e.key);
  return out;
}

// User profiles in /etc/dltune/profiles of a temporary host tree.
class ProfileLoad : public ::testing::Test {
 protected:
  void profile(const std::string& name, const std::string& text) {
    tree_.write("etc/dltune/profiles/" + name + ".toml", text);
  }
  Result<Profile> load(const std::string& name) {
    return load_profile(name, tree_.root(), kValidate);
  }
  std::string error_of(const std::string& name) {
    const auto r = load(name);
    EXPECT_FALSE(r.has_value()) << name;
    return r ? std::string() : r.error().message();
  }
  dltune::testing::TempTree tree_;
};

}  // namespace

TEST_F(ProfileLoad, ChildOverridesInPlaceDropsAndAdds) {
  profile("base", "[profile]\ndescription = \"base\"\n" + setting("vm.swappiness", "60") +
                      setting("vm.dirty_ratio", "20") + setting("vm.dirty_background_ratio", "10"));
  profile("child", "[profile]\nname = \"child\"\ndescription = \"mine\"\ninclude = [\"base\"]\n" +
                       setting("kernel.numa_balancing", "0") + setting("vm.dirty_ratio", "5") +
                       "[settings.\"vm.swappiness\"]\ndrop = true\n");
  const auto p = load("child");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->name, "child");
  EXPECT_EQ(p->description, "mine");
  EXPECT_EQ(p->chain, (std::vector<std::string>{"base", "child"}));
  EXPECT_EQ(p->includes, std::vector<std::string>{"base"});
  EXPECT_EQ(p->drops, std::vector<std::string>{"vm.swappiness"});
  // vm.dirty_ratio keeps the place of its first definition; the new key comes last.
  EXPECT_EQ(keys(*p), (std::vector<std::string>{"vm.dirty_ratio", "vm.dirty_background_ratio",
                                                "kernel.numa_balancing"}));
  EXPECT_EQ(p->find("vm.dirty_ratio")->expected.text(), "5");
  EXPECT_EQ(p->find("vm.dirty_ratio")->origin, "child");
  EXPECT_EQ(p->find("vm.dirty_background_ratio")->origin, "base");
  EXPECT_EQ(p->find("kernel.numa_balancing")->origin, "child");
  EXPECT_EQ(p->find("vm.swappiness"), nullptr);
}

TEST_F(ProfileLoad, IncludesMergeInOrder) {
  profile("a", setting("vm.swappiness", "1") + setting("vm.dirty_ratio", "1"));
  profile("b", setting("vm.swappiness", "2") + setting("kernel.numa_balancing", "2"));
  profile("c", "[profile]\ninclude = [\"a\", \"b\"]\n" + setting("vm.dirty_ratio", "3"));
  const auto p = load("c");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->chain, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(keys(*p),
            (std::vector<std::string>{"vm.swappiness", "vm.dirty_ratio", "kernel.numa_balancing"}));
  EXPECT_EQ(p->find("vm.swappiness")->expected.text(), "2");  // b after a
  EXPECT_EQ(p->find("vm.swappiness")->origin, "b");
  EXPECT_EQ(p->find("vm.dirty_ratio")->origin, "c");
}

TEST_F(ProfileLoad, DiamondMergesTheSharedBaseOnce) {
  profile("base", setting("vm.swappiness", "60"));
  profile("left", "[profile]\ninclude = [\"base\"]\n" + setting("vm.swappiness", "10"));
  profile("right", "[profile]\ninclude = [\"base\"]\n" + setting("vm.dirty_ratio", "10"));
  profile("top", "[profile]\ninclude = [\"left\", \"right\"]\n");
  const auto p = load("top");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  // right's include of base does not undo left's override.
  EXPECT_EQ(p->find("vm.swappiness")->expected.text(), "10");
  EXPECT_EQ(p->chain, (std::vector<std::string>{"base", "left", "right", "top"}));
}

TEST_F(ProfileLoad, UserProfileIncludesABuiltIn) {
  profile("site", "[profile]\ninclude = [\"training\"]\n" +
                      setting("shm.size", "\">= 4294967296\"") +
                      "[settings.\"vm.swappiness\"]\ndrop = true\n");
  const auto training = load("training");
  const auto p = load("site");
  ASSERT_TRUE(training.has_value()) << training.error().message();
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->chain, (std::vector<std::string>{"training", "site"}));
  EXPECT_EQ(p->entries.size(), training->entries.size() - 1);
  EXPECT_EQ(p->find("vm.swappiness"), nullptr);
  // shm.size overridden where training has it.
  auto index = [](const Profile& prof, const std::string& key) {
    for (std::size_t i = 0; i < prof.entries.size(); ++i)
      if (prof.entries[i].key == key) return static_cast<int>(i);
    return -1;
  };
  EXPECT_EQ(index(*p, "shm.size"), index(*training, "shm.size") - 1);  // one dropped before it
  EXPECT_EQ(p->find("shm.size")->expected.text(), ">= 4294967296");
  EXPECT_EQ(p->find("shm.size")->origin, "site");
  EXPECT_FALSE(p->find("shm.size")->critical.has_value());  // the whole entry is replaced
  EXPECT_EQ(p->find("gpu.ecc")->origin, "training");
}

TEST_F(ProfileLoad, CyclesAreErrorsNamingTheChain) {
  profile("a", "[profile]\ninclude = [\"b\"]\n");
  profile("b", "[profile]\ninclude = [\"c\"]\n");
  profile("c", "[profile]\ninclude = [\"a\"]\n");
  const auto e = error_of("a");
  EXPECT_NE(e.find("include cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("a -> b -> c -> a"), std::string::npos) << e;
  EXPECT_NE(e.find("/etc/dltune/profiles/c.toml"), std::string::npos) << e;

  profile("self", "[profile]\ninclude = [\"self\"]\n");
  EXPECT_NE(error_of("self").find("self -> self"), std::string::npos);
}

TEST_F(ProfileLoad, MissingIncludeNamesItAndTheFile) {
  profile("site", "[profile]\ninclude = [\"trainig\"]\n");
  const auto e = error_of("site");
  EXPECT_NE(e.find("/etc/dltune/profiles/site.toml"), std::string::npos) << e;
  EXPECT_NE(e.find("\"trainig\""), std::string::npos) << e;
  EXPECT_NE(e.find("no such profile"), std::string::npos) << e;

  profile("slash", "[profile]\ninclude = [\"../etc/passwd\"]\n");
  EXPECT_NE(error_of("slash").find("not a profile name"), std::string::npos);
}

TEST_F(ProfileLoad, DropOfAKeyNoIncludeSetsIsAnError) {
  profile("site",
          "[profile]\ninclude = [\"defaults\"]\n[settings.\"vm.swapiness\"]\ndrop = true\n");
  const auto e = error_of("site");
  EXPECT_NE(e.find("vm.swapiness"), std::string::npos) << e;
  EXPECT_NE(e.find("no included profile sets it"), std::string::npos) << e;
}

TEST_F(ProfileLoad, ErrorsInAnIncludedFileNameThatFile) {
  profile("broken", "[settings.\"vm.swappiness\"]\nvalue = \n");
  profile("site", "[profile]\ninclude = [\"broken\"]\n");
  const auto e = error_of("site");
  EXPECT_NE(e.find("/etc/dltune/profiles/broken.toml:2:"), std::string::npos) << e;

  profile("unknown", setting("vm.swappiness", "10") + setting("nonsense.key", "1"));
  const auto u = error_of("unknown");
  EXPECT_NE(u.find("/etc/dltune/profiles/unknown.toml:"), std::string::npos) << u;
  EXPECT_NE(u.find("nonsense.key"), std::string::npos) << u;
}

TEST_F(ProfileLoad, UnknownNames) {
  const auto e = error_of("nosuch");
  EXPECT_NE(e.find("no such profile"), std::string::npos) << e;
  EXPECT_NE(e.find("training"), std::string::npos) << e;  // lists the built-ins
  EXPECT_NE(error_of("site.toml").find("./site.toml"), std::string::npos);
  EXPECT_NE(error_of("").find("not a profile name"), std::string::npos);
  EXPECT_NE(error_of("..").find("not a profile name"), std::string::npos);
}

TEST_F(ProfileLoad, BuiltInsComeBeforeUserProfiles) {
  profile("training", setting("vm.swappiness", "99"));
  const auto p = load("training");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->find("vm.swappiness")->expected.text(), "10");
}

TEST_F(ProfileLoad, UnreadableUserProfileIsAnError) {
  tree_.unreadable("etc/dltune/profiles/fifo.toml");
  EXPECT_FALSE(load("fifo").has_value());
}

TEST_F(ProfileLoad, FileFromThisMachine) {
  // `-p FILE`: the user's own file, read directly (not through the host root); its includes are
  // resolved as names: built-ins and the host's /etc/dltune/profiles.
  profile("site", setting("kernel.numa_balancing", "0"));
  const auto dir = tree_.dir() / "home-of-user";
  std::filesystem::create_directories(dir);
  const auto file = dir / "my-nodes.toml";
  std::ofstream(file) << "[profile]\ninclude = [\"training\", \"site\"]\n"
                      << setting("vm.swappiness", "1");
  const auto p = load_profile(file.string(), tree_.root(), kValidate);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->name, "my-nodes");
  EXPECT_EQ(p->chain, (std::vector<std::string>{"training", "site", "my-nodes"}));
  EXPECT_EQ(p->find("vm.swappiness")->origin, "my-nodes");
  EXPECT_EQ(p->find("kernel.numa_balancing")->origin, "site");

  const auto missing = load_profile((dir / "nope.toml").string(), tree_.root(), kValidate);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("nope.toml"), std::string::npos);
  EXPECT_TRUE(missing.error().not_found());

  EXPECT_FALSE(load_profile(dir.string() + "/", tree_.root(), kValidate).has_value());

  std::ofstream(dir / "bad.toml") << "[profile]\nname = 5\n";
  const auto bad = load_profile((dir / "bad.toml").string(), tree_.root(), kValidate);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find((dir / "bad.toml").string() + ":2:"), std::string::npos)
      << bad.error().message();
}

TEST_F(ProfileLoad, RelativeFilePath) {
  const auto dir = tree_.dir() / "cwd";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "mine.toml") << setting("vm.swappiness", "1");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const auto p = load_profile("./mine.toml", tree_.root(), kValidate);
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->name, "mine");
}

// A user's profile that is wrong must not look fine: a key one edit from a sysctl this host has
// is a typo (a sysctl of another kernel, near none here, still loads and is judged n/a), an
// unknown key gets the nearest known one, a file that sets nothing is refused, and a mistyped
// profile name gets the nearest profile.
TEST_F(ProfileLoad, TyposAndEmptyProfilesAreRefusedWithTheNearestName) {
  tree_.write("proc/sys/vm/swappiness", "60\n").write("proc/sys/vm/dirty_ratio", "20\n");
  profile("typo", "# mine\n" + setting("vm.swapiness", "10"));
  const auto typo = error_of("typo");
  EXPECT_NE(typo.find("typo.toml:2:"), std::string::npos) << typo;
  EXPECT_NE(typo.find("no such sysctl on this host"), std::string::npos) << typo;
  EXPECT_NE(typo.find("did you mean vm.swappiness?"), std::string::npos) << typo;
  profile("other-kernel", setting("vm.a_knob_of_another_kernel", "1"));
  const auto other = load("other-kernel");
  ASSERT_TRUE(other.has_value()) << other.error().message();
  EXPECT_EQ(keys(*other), std::vector<std::string>{"vm.a_knob_of_another_kernel"});
  profile("unknown", setting("thp.enabeld", "\"never\""));
  const auto unknown = error_of("unknown");
  EXPECT_NE(unknown.find("unknown setting"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean thp.enabled?"), std::string::npos) << unknown;
  profile("empty", "");
  EXPECT_NE(error_of("empty").find("the profile sets nothing"), std::string::npos);
  profile("named-only", "[profile]\nname = \"named-only\"\n");
  EXPECT_NE(error_of("named-only").find("the profile sets nothing"), std::string::npos);
  EXPECT_NE(error_of("traning").find("traning; did you mean training?"), std::string::npos)
      << error_of("traning");
  // --set says the same of a key typed on the command line.
  const auto set =
      dltune::settings::load_profile("training", {"vm.dirty_ration=10"}, tree_.root(), kValidate);
  ASSERT_FALSE(set.has_value());
  EXPECT_NE(set.error().message().find("did you mean vm.dirty_ratio?"), std::string::npos)
      << set.error().message();
}

}  // namespace profile_load_test

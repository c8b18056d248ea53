// `dltune profiles` and `--set` as a user runs them: the listing, `profiles show`
// whose TOML loads as the same profile, `--set` on check and tune with its errors, and where
// each setting comes from.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace profiles_cli_test {

using dltune::testing::run;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string fixture(const char* name) {
  return std::string(DLTUNE_FIXTURES) + "/roots/" + name;
}

// The settings of `profiles show --json`, without where they were read from.
json settings_of(const json& shown) {
  json out = shown["settings"];
  for (auto& s : out) {
    s.erase("origin");
    s.erase("origin_file");
  }
  return out;
}

}  // namespace

TEST(ProfilesCli, ListsTheBuiltInProfilesWithDescriptions) {
  const auto r = run({DLTUNE_BINARY, "profiles"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("training (built-in)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("distributed (built-in), includes training"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("One host training with PyTorch"), std::string::npos) << r.out;
  const auto j = run({DLTUNE_BINARY, "profiles", "list", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = json::parse(j.out);
  EXPECT_EQ(doc["schema"], "dltune.profiles/1");
  EXPECT_EQ(doc["profiles"].size(), 3u);
}

TEST(ProfilesCli, ShowTrainingPrintsTomlThatSavedAndLoadedAgainIsTheSameProfile) {
  const auto shown = run({DLTUNE_BINARY, "profiles", "show", "training"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out.rfind("# The profile \"training\"", 0), 0u) << shown.out.substr(0, 200);
  const auto file = fs::path(::testing::TempDir()) / "training-copy.toml";
  std::ofstream(file) << shown.out;

  const auto a = run({DLTUNE_BINARY, "profiles", "show", "training", "--json"});
  const auto b = run({DLTUNE_BINARY, "profiles", "show", file.string(), "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = json::parse(a.out), jb = json::parse(b.out);
  EXPECT_EQ(jb["name"], ja["name"]);
  EXPECT_EQ(jb["description"], ja["description"]);
  EXPECT_EQ(settings_of(jb), settings_of(ja));
  EXPECT_GT(ja["settings"].size(), 10u);

  // check judges the host the same under the copy as under the built-in.
  const auto ca = run(
      {DLTUNE_BINARY, "check", "--json", "-p", "training", "--root", fixture("gpu8-numa2-cgv2")});
  const auto cb = run({DLTUNE_BINARY, "check", "--json", "-p", file.string(), "--root",
                       fixture("gpu8-numa2-cgv2")});
  EXPECT_EQ(cb.exit_code, ca.exit_code);
  EXPECT_EQ(json::parse(cb.out)["summary"], json::parse(ca.out)["summary"]);
}

TEST(ProfilesCli, ShowResolvesIncludesAndSaysWhereEachSettingComesFrom) {
  const auto r = run({DLTUNE_BINARY, "profiles", "show", "distributed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# from training"), std::string::npos);
  EXPECT_NE(r.out.find("# from distributed"), std::string::npos);
  EXPECT_EQ(r.out.find("include"), r.out.find("include = [\"distributed\"]"))
      << "no include line: the chain is resolved";
  const auto bad = run({DLTUNE_BINARY, "profiles", "show", "no-such-profile"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("no such profile"), std::string::npos) << bad.err;
}

TEST(ProfilesCli, SettingsListsIdsWithKindAndValues) {
  const auto r = run({DLTUNE_BINARY, "profiles", "settings"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("vm.swappiness"), std::string::npos);
  EXPECT_NE(r.out.find("0 to 200"), std::string::npos);
  const auto j = run({DLTUNE_BINARY, "profiles", "settings", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = json::parse(j.out);
  EXPECT_EQ(doc["schema"], "dltune.profiles.settings/1");
  bool thp = false;
  for (const auto& s : doc["settings"])
    if (s["id"] == "thp.enabled") {
      thp = true;
      EXPECT_EQ(s["kind"], "sysfs");
      EXPECT_EQ(s["tunable"], true);
    }
  EXPECT_TRUE(thp);
}

TEST(ProfilesCli, SetWithABadKeyOrValueIsExit2NamingBoth) {
  const auto root = fixture("gpu8-numa2-cgv2");
  struct Case {
    std::vector<std::string> argv;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"check", "--root", root, "--set", "vm.swappiness=ten"},
       "--set vm.swappiness=ten: setting \"vm.swappiness\": value \"ten\": expected a whole "
       "number from 0 to 200"},
      {{"check", "--root", root, "--set", "vm.swapiness=10"},
       "--set vm.swapiness=10: setting \"vm.swapiness\": no such sysctl on this host"},
      {{"tune", "--root", root, "plan", "--set", "thp.enabled=sometimes"},
       "setting \"thp.enabled\": value \"sometimes\": expected one of always, madvise or never"},
      {{"tune", "--root", root, "plan", "--set", "no.such=1"}, "setting \"no.such\""},
      {{"tune", "--root", root, "plan", "--set", "vm.swappiness"}, "expected KEY=VALUE"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv{DLTUNE_BINARY};
    argv.insert(argv.end(), c.argv.begin(), c.argv.end());
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

TEST(ProfilesCli, SetOverridesTheProfileAndSaysSo) {
  const auto root = fixture("gpu8-numa2-cgv2");
  const auto c = run({DLTUNE_BINARY, "check", "--json", "--root", root, "--set", "vm.swappiness=33",
                      "--only", "vm.swappiness"});
  ASSERT_LE(c.exit_code, 1) << c.err;
  const auto doc = json::parse(c.out);
  EXPECT_EQ(doc["profile_chain"], json::array({"training", "--set"}));
  ASSERT_EQ(doc["findings"].size(), 1u);
  EXPECT_EQ(doc["findings"][0]["expected"], "33");
  EXPECT_EQ(doc["findings"][0]["origin"], "--set");
  // Its fix applies the --set value, not training's.
  if (doc["findings"][0].contains("fix"))
    EXPECT_NE(
        doc["findings"][0]["fix"]["command"].get<std::string>().find("--set vm.swappiness=33"),
        std::string::npos);

  const auto p = run({DLTUNE_BINARY, "tune", "--root", root, "plan", "--set", "vm.swappiness=33",
                      "--set", "thp.enabled=never"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("from --set"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("from training"), std::string::npos) << p.out;
  const auto pj = run({DLTUNE_BINARY, "tune", "--root", root, "plan", "--json", "-p", "defaults",
                       "--set", "vm.swappiness=33"});
  ASSERT_EQ(pj.exit_code, 0) << pj.err;
  const auto plan = json::parse(pj.out);
  for (const auto& i : plan["items"])
    if (i["key"] == "vm.swappiness") EXPECT_EQ(i["origin"], "--set");
}

TEST(ProfilesCli, CheckAndTuneSayWhichProfileEachSettingComesFrom) {
  const auto file = fs::path(::testing::TempDir()) / "thp-always.toml";
  std::ofstream(file) << "[profile]\ninclude = \"training\"\n\n[settings.\"thp.enabled\"]\n"
                         "value = \"always\"\n";
  const auto root = fixture("gpu8-numa2-cgv2");
  const auto c = run({DLTUNE_BINARY, "check", "--json", "-p", file.string(), "--root", root});
  ASSERT_LE(c.exit_code, 2) << c.err;
  const auto doc = json::parse(c.out);
  EXPECT_EQ(doc["profile_chain"], json::array({"training", "thp-always"}));
  int own = 0, inherited = 0;
  for (const auto& f : doc["findings"]) {
    if (f["id"] == "thp.enabled") {
      EXPECT_EQ(f["origin"], file.string());
      ++own;
    } else if (f["id"] == "vm.swappiness") {
      EXPECT_EQ(f["origin"], "training");
      ++inherited;
    }
  }
  EXPECT_EQ(own, 1);
  EXPECT_EQ(inherited, 1);
  const auto text = run({DLTUNE_BINARY, "check", "-v", "-p", file.string(), "--root", root,
                         "--only", "thp.enabled,vm.swappiness"});
  EXPECT_NE(text.out.find("from: " + file.string()), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("from: training"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("why: (no reason given)"), std::string::npos) << text.out;

  const auto plan = run({DLTUNE_BINARY, "tune", "--root", root, "plan", "-p", file.string()});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("from " + file.string()), std::string::npos) << plan.out;
}

}  // namespace profiles_cli_test

// Advice that runs as printed: every `dltune tune apply` command check prints, on every fixture
// host and built-in profile, is run (as `tune plan`, on the same tree) and plans the setting it
// names; container advice gives the whole value; no fix sends the user to tune for an id tune
// cannot change.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace advice_cli_test {

namespace {

namespace fs = std::filesystem;
using dltune::testing::run;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> fixture_roots() {
  std::vector<std::string> roots;
  for (const auto& e : fs::directory_iterator(std::string(DLTUNE_FIXTURES) + "/roots"))
    if (e.is_directory()) roots.push_back(e.path().string());
  std::sort(roots.begin(), roots.end());
  return roots;
}

json check(const std::string& root, const std::string& profile) {
  const auto r = run({DLTUNE_BINARY, "check", "--json", "-p", profile, "--root", root});
  // Exit 2 is also a critical finding: the report on stdout is what counts.
  const auto j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << root << " " << profile << ": " << r.err;
  return j.is_discarded() ? json::object() : j;
}

// One test per built-in profile: each runs tune plan for every fix on every fixture host, and
// three tests spread over the unit shards where one held a shard for half a minute.
class AdviceCliProfile : public ::testing::TestWithParam<const char*> {};

TEST_P(AdviceCliProfile, EveryTuneCommandCheckPrintsRunsAndPlansItsSetting) {
  const std::string profile = GetParam();
  int tried = 0;
  for (const auto& root : fixture_roots()) {
    const json report = check(root, profile);
    for (const auto& f : report["findings"]) {
      if (!f.contains("fix") || !f["fix"]["by_dltune"].get<bool>()) continue;
      const auto command = f["fix"]["command"].get<std::string>();
      const auto id = f["id"].get<std::string>();
      // The profile it came from is named, so that the setting and its value are that one's.
      EXPECT_THAT(command, HasSubstr("dltune tune apply -p " + profile + " ")) << command;
      std::vector<std::string> argv{DLTUNE_BINARY};
      const auto words = dltune::text::fields(command);
      for (std::size_t i = 1; i < words.size(); ++i)
        argv.emplace_back(words[i] == "apply" ? "plan" : std::string(words[i]));
      argv.insert(argv.end(), {"--root", root, "--json"});
      const auto r = run(argv);
      ++tried;
      ASSERT_EQ(r.exit_code, 0) << command << " on " << root << ":\n" << r.err;
      const auto plan = json::parse(r.out, nullptr, false);
      ASSERT_FALSE(plan.is_discarded()) << r.out;
      bool planned = false;
      for (const auto& item : plan["items"]) planned = planned || item["key"] == id;
      EXPECT_TRUE(planned) << command << " on " << root << " does not plan " << id;
    }
  }
  EXPECT_GT(tried, 3);  // the fixtures do hold settings to change
}
INSTANTIATE_TEST_SUITE_P(BuiltIn, AdviceCliProfile,
                         ::testing::Values("training", "distributed", "defaults"),
                         [](const auto& info) { return std::string(info.param); });

TEST(AdviceCli, NoFixSendsTheUserToTuneForAnIdTuneCannotChange) {
  for (const auto& root : fixture_roots())
    for (const std::string profile : {"training", "distributed", "defaults"}) {
      const json report = check(root, profile);
      for (const auto& f : report["findings"]) {
        if (!f.contains("fix")) continue;
        const auto command = f["fix"]["command"].get<std::string>();
        for (const char* not_tunable :
             {"swap.consistency", "iommu.mode", "pci.acs", "rdma.ports", "shm.size"})
          EXPECT_THAT(command, Not(HasSubstr("--only " + std::string(not_tunable))))
              << f["id"] << " on " << root;
      }
    }
}

TEST(AdviceCli, AContainersSysctlFlagCarriesTheWholeValue) {
  const std::string root = std::string(DLTUNE_FIXTURES) + "/roots/container-cgv2";
  bool seen = false;
  const json report = check(root, "training");
  for (const auto& f : report["findings"]) {
    if (f["id"] != "net.ipv4.tcp_rmem" || !f.contains("fix")) continue;
    seen = true;
    const auto command = f["fix"]["command"].get<std::string>();
    // Three fields, as tune writes them: the minimum and default kept, the maximum raised.
    EXPECT_THAT(command, ::testing::MatchesRegex(
                             "docker run --sysctl 'net.ipv4.tcp_rmem=[0-9]+ [0-9]+ 16777216'"))
        << command;
  }
  EXPECT_TRUE(seen) << "the container fixture's tcp_rmem is below the training profile's";
}

}  // namespace

}  // namespace advice_cli_test

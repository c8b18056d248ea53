// `dltune check` as a user runs it: exit codes, errors for bad input, the report.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run.hpp"

using dltune::testing::run;
namespace fs = std::filesystem;

namespace {

std::string fixture(const char* name) {
  return std::string(DLTUNE_FIXTURES) + "/roots/" + name;
}

fs::path temp_file(const std::string& name, const std::string& content) {
  const auto p = fs::path(::testing::TempDir()) / name;
  std::ofstream(p) << content;
  return p;
}

}  // namespace

TEST(CheckCli, ProfileWithASyntaxErrorNamesFileLineAndColumn) {
  const auto p = temp_file("bad-syntax.toml",
                           "[profile]\nname = \"x\"\n[settings.\"vm.swappiness\"\nvalue = 1\n");
  const auto r =
      run({DLTUNE_BINARY, "check", "-p", p.string(), "--root", fixture("container-cgv2")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(p.string() + ":3:"), std::string::npos) << r.err;
}

TEST(CheckCli, ProfileWithAnUnknownOrEscapingKeyIsRefusedNamingTheKey) {
  for (const char* key : {"vm.no_such_thing_at_all", "../../etc/shadow", "bogus"}) {
    const auto p =
        temp_file("bad-key.toml", std::string("[profile]\nname = \"x\"\n[settings.\"") + key +
                                      "\"]\nvalue = 1\nreason = \"r\"\nsource = \"s\"\n");
    const auto r =
        run({DLTUNE_BINARY, "check", "-p", p.string(), "--root", fixture("container-cgv2")});
    if (std::string(key) == "vm.no_such_thing_at_all") {
      // A well-formed sysctl this kernel lacks is not an error: it is not applicable.
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_NE(r.out.find("n/a"), std::string::npos) << r.out;
      continue;
    }
    EXPECT_EQ(r.exit_code, 2) << key;
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
  }
}

TEST(CheckCli, UnknownIdInOnlyIsBadInput) {
  const auto r =
      run({DLTUNE_BINARY, "check", "--only", "vm.nope", "--root", fixture("container-cgv2")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("vm.nope"), std::string::npos);
  EXPECT_NE(r.err.find("vm.swappiness"), std::string::npos);  // the ids it does have
}

TEST(CheckCli, UnknownProfileAndBadRootAreBadInput) {
  auto r =
      run({DLTUNE_BINARY, "check", "-p", "no-such-profile", "--root", fixture("container-cgv2")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no-such-profile"), std::string::npos);
  r = run({DLTUNE_BINARY, "check", "--root", "/nonexistent/tree"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/tree"), std::string::npos);
}

TEST(CheckCli, TheReportIsGroupedWithASummaryAndTheExitCodeFollowsTheWorstFinding) {
  const auto r = run({DLTUNE_BINARY, "check", "--root", fixture("container-cgv2")});
  EXPECT_EQ(r.exit_code, 2) << r.out;  // /dev/shm of 64 MiB is critical
  for (const char* s : {"Memory\n", "Limits\n", "critical", "ok, ", "fix: docker run --shm-size"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const auto only =
      run({DLTUNE_BINARY, "check", "--only", "thp.enabled", "--root", fixture("container-cgv2")});
  EXPECT_EQ(only.exit_code, 0) << only.out;  // THP "always" is what training wants
  const auto skip = run({DLTUNE_BINARY, "check", "--json", "--skip", "shm.size", "--root",
                         fixture("container-cgv2")});
  const auto doc = nlohmann::json::parse(skip.out);
  for (const auto& f : doc["findings"]) EXPECT_NE(f["id"], "shm.size");
}

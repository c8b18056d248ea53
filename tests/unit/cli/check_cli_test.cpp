// `dltune check` as a user runs it: exit codes, errors for bad input, the report.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace check_cli_test {

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

TEST(CheckCli, TheTextRespectsTheReader) {
  const auto vm = run({DLTUNE_BINARY, "check", "--root", fixture("this-vm")}, {{"COLUMNS", "80"}});
  // An area that does not apply for one reason is one line, with its ids.
  EXPECT_NE(vm.out.find("GPUs\n  n/a       no NVIDIA GPU on this host\n"), std::string::npos)
      << vm.out;
  std::size_t count = 0;
  for (auto at = vm.out.find("no NVIDIA GPU"); at != std::string::npos;
       at = vm.out.find("no NVIDIA GPU", at + 1))
    ++count;
  EXPECT_EQ(count, 1u) << vm.out;
  EXPECT_NE(vm.out.find("gpu.persistence"), std::string::npos);
  // Piped: no colour. Each finding names its id; the reasons are wrapped to the width.
  EXPECT_EQ(vm.out.find('\x1b'), std::string::npos);
  const auto c =
      run({DLTUNE_BINARY, "check", "--root", fixture("container-cgv2")}, {{"COLUMNS", "80"}});
  EXPECT_NE(c.out.find("[shm.size]"), std::string::npos) << c.out;
  bool in_why = false;
  for (const auto line : dltune::text::lines(c.out)) {
    if (line.rfind("            why: ", 0) == 0)
      in_why = true;
    else if (line.rfind("                 ", 0) != 0)  // not a wrapped line of the reason
      in_why = false;
    if (in_why) {
      EXPECT_LE(line.size(), 80u) << line;
    }
  }
  // Colour when asked, whatever the output is; never with --color never.
  const auto always =
      run({DLTUNE_BINARY, "check", "--color", "always", "--root", fixture("container-cgv2")});
  EXPECT_NE(always.out.find("\x1b[1;31mcritical\x1b[0m"), std::string::npos) << always.out;
  const auto never =
      run({DLTUNE_BINARY, "check", "--color", "never", "--root", fixture("container-cgv2")});
  EXPECT_EQ(never.out.find('\x1b'), std::string::npos);
}

// A user's profile of values alone: check judges it and says no reason was given.
TEST(CheckCli, AProfileOfValuesAloneIsJudgedWithNoReasonGiven) {
  const auto p = temp_file("values-only.toml", "[settings.\"vm.swappiness\"]\nvalue = 1\n");
  const auto r = run({DLTUNE_BINARY, "check", "-p", p.string(), "--root", fixture("container-cgv2"),
                      "--color", "never"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the fixture's swappiness is not 1: a warning
  EXPECT_NE(r.out.find("vm.swappiness is"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("why: (no reason given)"), std::string::npos) << r.out;
}

}  // namespace check_cli_test

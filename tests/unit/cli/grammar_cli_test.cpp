// One grammar for every command (README, "What every command keeps to"): durations, numbers,
// choices and lists checked while parsing with one wording; errors that start with "dltune
// COMMAND:"; help that fits a screen and states each command's own exit statuses.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "options/command_text.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace grammar_cli_test {

namespace {

namespace fs = std::filesystem;
using dltune::testing::run;
using dltune::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

struct Case {
  std::vector<std::string> args;  // FILE: a path in the test's directory
  std::string says;
};

// Each bad input: exit 2, the message (which starts with "dltune COMMAND:"), nothing on stdout and
// no file made.
void expect_refused(const std::vector<Case>& cases) {
  TempDir dir;
  for (const auto& c : cases) {
    std::vector<std::string> argv{DLTUNE_BINARY};
    for (const auto& a : c.args) argv.push_back(a == "FILE" ? dir.file("out.db") : a);
    const auto r = run(argv);
    const auto line = ::testing::PrintToString(c.args);
    EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << line;
    EXPECT_THAT(r.err, Not(HasSubstr("Run with --help"))) << line;
    EXPECT_TRUE(r.out.empty()) << line << "\n" << r.out;
    EXPECT_TRUE(fs::is_empty(dir.file(""))) << line;
  }
}

TEST(GrammarCli, EveryDurationOptionSaysWhatIsWrongWithItsRange) {
  expect_refused({
      {{"profile", "--pid", "1", "--interval", "5ms"},
       "dltune profile: --interval 5ms: too short (at least 50ms)"},
      {{"profile", "--pid", "1", "--interval", "11s"},
       "dltune profile: --interval 11s: too long (at most 10s)"},
      {{"profile", "--pid", "1", "--duration", "soon"},
       "dltune profile: --duration soon: expected a duration such as 500ms, 90s, 15m or 1h30m"},
      {{"profile", "FILE", "--skip", "2h"}, "dltune profile: --skip 2h: too long (at most 1h)"},
      {{"top", "--interval", "5ms"}, "dltune top: --interval 5ms: too short (at least 10ms)"},
      {{"record", "-o", "FILE", "--interval", "1h1s"},
       "dltune record: --interval 1h1s: too long (at most 1h)"},
      {{"record", "-o", "FILE", "--duration", "1y"},
       "dltune record: --duration 1y: expected a duration"},
      {{"record", "--replay", "FILE", "--at", "-5s"},
       "dltune record: --at -5s: expected a duration"},
      {{"serve", "--interval", "10ms"},
       "dltune serve: --interval 10ms: too short (at least 100ms)"},
      {{"serve", "--check-interval", "2d"},
       "dltune serve: --check-interval 2d: too long (at most 1d)"},
      {{"run", "--record", "FILE", "--record-interval", "5ms", "--", "true"},
       "dltune run: --record-interval 5ms: too short (at least 10ms)"},
      {{"bench", "--interval", "1ms", "--", "true"},
       "dltune bench: --interval 1ms: too short (at least 10ms)"},
      {{"doctor", "--since", "0s"}, "dltune doctor: --since 0s: too short (at least 1s)"},
      {{"doctor", "--since", "yesterday"}, "dltune doctor: --since yesterday: expected a duration"},
      {{"doctor", "--since", "30m1h"}, "--since 30m1h: expected a duration"},  // largest unit first
  });
}

TEST(GrammarCli, NumbersHaveAHumanRangeAndNeverWrapAround) {
  expect_refused({
      {{"report", "FILE", "-o", "-", "--max-points", "-5"},
       "dltune report: --max-points -5: too small (at least 2)"},
      {{"report", "FILE", "-o", "-", "--max-points", "99999999999999999999999"},
       "--max-points 99999999999999999999999: too large (at most 100000000)"},
      {{"record", "--pid", "abc"}, "dltune record: --pid abc: expected a whole number from 1 to"},
      {{"top", "--pid", "0"}, "dltune top: --pid 0: too small (at least 1)"},
      {{"bench", "--runs", "2", "--", "true"}, "dltune bench: --runs 2: too small (at least 3)"},
      {{"bench", "--confidence", "120", "--", "true"},
       "dltune bench: --confidence 120: too large (at most 99.9)"},
      {{"compare", "FILE", "FILE", "--confidence", "x"},
       "dltune compare: --confidence x: expected a number from 50 to 99.9"},
      {{"serve", "--max-connections", "300"},
       "dltune serve: --max-connections 300: too large (at most 256)"},
      {{"run", "--nproc", "0", "--", "true"}, "dltune run: --nproc 0: too small (at least 1)"},
  });
}

TEST(GrammarCli, ChoicesAreNamedAndNothingOfTheLibraryLeaks) {
  expect_refused({
      {{"bench", "--order", "x", "--", "true"}, "dltune bench: --order x: expected abba or ab"},
      {{"top", "--sort", "size"}, "dltune top: --sort size: expected cpu, "},
      {{"record", "--replay", "FILE", "--sort", "size"}, "--sort size: expected cpu, "},
      {{"report", "FILE", "-o", "-", "--format", "pdf"},
       "dltune report: --format pdf: expected html or json"},
  });
}

TEST(GrammarCli, CommandsOptionsAndArgumentsOutOfPlace) {
  expect_refused({
      {{"chek"}, "dltune: unknown command chek; did you mean check?"},
      {{"reprot"}, "did you mean report?"},
      {{"xyzzy"}, "dltune: unknown command xyzzy; dltune --help lists the commands"},
      {{"check", "--frob"}, "dltune check: unknown option --frob (dltune check --help lists"},
      {{"check", "extra", "words"}, "dltune check: unexpected extra words"},
      {{"tune"}, "dltune tune: which command? (dltune tune --help lists them)"},
      {{"tune", "plan", "--frob"}, "dltune tune plan: unknown option --frob"},
      {{"record", "-o", "FILE", "python3"},
       "dltune record: unexpected python3: the job's COMMAND comes after --"},
      {{"record", "-o", "FILE", "--at", "5s"}, "dltune record: --at goes with --replay"},
      {{"run", "--no-such", "--", "true"}, "dltune run: unknown option --no-such"},
      {{"report"}, "dltune report: RECORDING is required"},
      {{"profile", "--pid"}, "dltune profile: --pid needs a value"},
  });
}

TEST(GrammarCli, ACompoundDurationIsTakenAndTheNextProblemIsNamed) {
  // The interval parses; what is refused is the process, which is not running.
  const auto r = run({DLTUNE_BINARY, "top", "--interval", "1m30s", "--pid", "4194303", "--once"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--pid 4194303"));
  EXPECT_THAT(r.err, Not(HasSubstr("--interval")));
}

TEST(GrammarCli, AListIsCommasOrRepeatsAlike) {
  const std::string root = std::string(DLTUNE_FIXTURES) + "/roots/container-cgv2";
  const auto ids = [&](std::vector<std::string> only) {
    std::vector<std::string> argv{DLTUNE_BINARY, "check", "--json", "--root", root};
    argv.insert(argv.end(), only.begin(), only.end());
    const auto r = run(argv);
    EXPECT_NE(r.exit_code, 2) << r.err;
    std::set<std::string> out;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_discarded()) return out;
    for (const auto& f : j["findings"]) out.insert(f["id"].get<std::string>());
    return out;
  };
  const std::set<std::string> both{"vm.swappiness", "thp.enabled"};
  EXPECT_EQ(ids({"--only", "vm.swappiness,thp.enabled"}), both);
  EXPECT_EQ(ids({"--only", "vm.swappiness", "--only", "thp.enabled"}), both);
}

TEST(GrammarCli, TheOverviewFitsAScreenAndEachCommandStatesItsOwnExitStatuses) {
  const auto overview = run({DLTUNE_BINARY, "--help"});
  ASSERT_EQ(overview.exit_code, 0);
  EXPECT_LE(std::count(overview.out.begin(), overview.out.end(), '\n'), 40) << overview.out;
  // The overview lists exactly the commands that have a help file (commands/NAME.toml), each
  // with the file's summary; each command's help holds the file's text.
  auto listed = overview.out.substr(overview.out.find("Commands:\n") + 10);
  listed = listed.substr(0, listed.find("\n\n") + 1);
  EXPECT_EQ(static_cast<std::size_t>(std::count(listed.begin(), listed.end(), '\n')),
            dltune::options::embedded_commands().size())
      << listed;
  for (const auto& file : dltune::options::embedded_commands()) {
    const std::string c(file.name);
    const auto text = dltune::options::command_text(c);
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_THAT(overview.out, HasSubstr("\n  " + c + " ")) << c;
    EXPECT_THAT(overview.out, HasSubstr(text->summary)) << c;
    const auto help = run({DLTUNE_BINARY, c, "--help"});
    ASSERT_EQ(help.exit_code, 0) << c;
    EXPECT_EQ(run({DLTUNE_BINARY, "help", c}).out, help.out) << c;
    EXPECT_THAT(help.out, HasSubstr("Usage: dltune " + c)) << c;
    EXPECT_THAT(help.out, HasSubstr(text->help())) << c;
    // The program's footer is not a command's: each says its own.
    EXPECT_THAT(help.out, Not(HasSubstr("`dltune help COMMAND`"))) << c;
    for (const char* leak : {"REQUIRED", ":POSITIVE", ":{", "Subcommands", "Run with --help"})
      EXPECT_THAT(help.out, Not(HasSubstr(leak))) << c << " shows " << leak;
    const auto version = run({DLTUNE_BINARY, c, "--version"});
    EXPECT_EQ(version.exit_code, 0) << c;
    EXPECT_THAT(version.out, HasSubstr("dltune ")) << c;
  }
  // tune's options are in each subcommand's help.
  const auto plan = run({DLTUNE_BINARY, "help", "tune", "plan"});
  EXPECT_THAT(plan.out, HasSubstr("--state-dir DIR"));
  EXPECT_THAT(plan.out, HasSubstr("default /var/lib/dltune"));
}

}  // namespace

namespace {

// --version names the version and the commit the program was built from (the build runs
// cmake/build_commit.cmake each time); the tests run on the tree they were built from.
TEST(GrammarCli, VersionNamesTheGitCommit) {
  const auto version = run({DLTUNE_BINARY, "--version"});
  ASSERT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, HasSubstr(std::string("dltune ") + DLTUNE_VERSION + " (git "));
  const auto head = run({"git", "-C", DLTUNE_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"});
  if (head.exit_code != 0) GTEST_SKIP() << "not a git checkout: " << head.err;
  std::string hash = head.out;
  while (!hash.empty() && hash.back() == '\n') hash.pop_back();
  EXPECT_THAT(version.out, HasSubstr("(git " + hash));
}

TEST(GrammarCli, AProfileValueOutOfRangeIsRefusedByEveryCommandThatTakesAProfile) {
  TempDir dir;
  const auto profile = dir.file("bad.toml");
  std::ofstream(profile) << "[profile]\nname = \"bad\"\ndescription = \"a test\"\n\n"
                            "[settings.\"vm.swappiness\"]\nvalue = \"ten\"\n"
                            "reason = \"r\"\nsource = \"s\"\n";
  const std::string root = std::string(DLTUNE_FIXTURES) + "/roots/container-cgv2";
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"check", "-p", profile, "--root", root},
           {"tune", "plan", "-p", profile, "--root", root},
           {"tune", "apply", "-p", profile, "--yes", "--state-dir", dir.file("state")},
           {"bench", "-b", profile, "--", "true"},
           {"serve", "--once", "-p", profile}}) {
    std::vector<std::string> full{DLTUNE_BINARY};
    full.insert(full.end(), argv.begin(), argv.end());
    const auto r = run(full);
    EXPECT_EQ(r.exit_code, 2) << argv[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(profile + ":6:9: setting \"vm.swappiness\": value \"ten\": "
                                           "expected a whole number from 0 to 200"))
        << argv[0];
    EXPECT_FALSE(fs::exists(dir.file("state"))) << argv[0];
  }
}

}  // namespace

}  // namespace grammar_cli_test

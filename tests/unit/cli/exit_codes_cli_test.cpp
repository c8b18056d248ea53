// docs/exit-codes.md is the one table of exit statuses: every command is in it, and each is held
// to its rule here: bad input (an unknown option, a --pid that is not running) is 2 and names
// the command, and its --help says what its statuses are.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/in_child.hpp"
#include "support/run.hpp"

namespace exit_codes_cli_test {

using dltune::testing::run;

namespace {

// The first column of the table's rows ("| env | ...").
std::set<std::string> table_commands() {
  std::set<std::string> out;
  std::istringstream in(
      dltune::testing::slurp_file(std::filesystem::path(DLTUNE_SOURCE_DIR) / "docs/exit-codes.md"));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| ") || line.starts_with("| command") || line.starts_with("|---"))
      continue;
    const auto end = line.find(" |", 2);
    out.insert(line.substr(2, end - 2));
  }
  return out;
}

}  // namespace

TEST(ExitCodesCli, EveryCommandIsInTheTableAndBadInputIsTwo) {
  const auto table = table_commands();
  std::set<std::string> commands;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(DLTUNE_SOURCE_DIR) / "commands"))
    if (e.path().extension() == ".toml") commands.insert(e.path().stem().string());
  EXPECT_EQ(table, commands) << "docs/exit-codes.md and commands/*.toml name the same commands";
  for (const auto& c : commands) {
    const auto bad = run({DLTUNE_BINARY, c, "--no-such-option"});
    EXPECT_EQ(bad.exit_code, 2) << c << ": " << bad.err;
    EXPECT_TRUE(bad.err.starts_with("dltune " + c)) << c << ": " << bad.err;
    const auto help = run({DLTUNE_BINARY, c, "--help"});
    EXPECT_EQ(help.exit_code, 0) << c;
    EXPECT_NE(help.out.find("Exit status"), std::string::npos) << c;
    EXPECT_NE(help.out.find("2 "), std::string::npos) << c << ": its help names status 2";
  }
}

// A --pid that is not running is the same bad input to every command that takes one.
TEST(ExitCodesCli, APidThatIsNotRunningIsTwoEverywhere) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"top", "--once"},
        {"stacks"},
        {"profile", "--duration", "1s"},
        {"record", "-o", "/tmp/dltune-exit-codes-never.db"}}) {
    auto argv = std::vector<std::string>{DLTUNE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--pid", "4000000"});
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << r.err;
    EXPECT_NE(r.err.find("4000000"), std::string::npos) << args.front() << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/dltune-exit-codes-never.db"));
}

// A mistyped subcommand or option gets the nearest, as a mistyped command does.
TEST(ExitCodesCli, TyposGetTheNearestName) {
  const auto sub = run({DLTUNE_BINARY, "tune", "plna"});
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_EQ(sub.err, "dltune tune: unknown command plna; did you mean plan?\n");
  const auto option = run({DLTUNE_BINARY, "check", "--jsno"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_EQ(option.err, "dltune check: unknown option --jsno; did you mean --json?\n");
  const auto far = run({DLTUNE_BINARY, "check", "--zzzzzz"});
  EXPECT_EQ(far.err,
            "dltune check: unknown option --zzzzzz (dltune check --help lists the options)\n");
  const auto profile = run({DLTUNE_BINARY, "check", "-p", "traning"});
  EXPECT_EQ(profile.exit_code, 2);
  EXPECT_NE(profile.err.find("did you mean training?"), std::string::npos) << profile.err;
}

}  // namespace exit_codes_cli_test

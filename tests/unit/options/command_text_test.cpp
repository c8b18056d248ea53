// Each command's help text is data (commands/NAME.toml): every file parses, its sections come out
// in the documented order, and a broken file is an error naming the file and what is wrong.
#include "options/command_text.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace command_text_test {

using dltune::options::command_text;
using dltune::options::embedded_commands;
using dltune::options::parse_command_text;
using ::testing::HasSubstr;

TEST(CommandText, EveryCompiledInFileParsesWithAllItsSections) {
  ASSERT_GE(embedded_commands().size(), 13u);
  for (const auto& f : embedded_commands()) {
    const auto t = command_text(f.name);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_FALSE(t->summary.empty()) << f.name;
    EXPECT_LE(t->summary.size(), 70u) << f.name << ": the overview's line";
    // Wrapped by hand to fit a terminal's --help.
    for (const auto& part : {t->description, t->examples.value_or(""), t->exit_status}) {
      std::size_t start = 0;
      while (start < part.size()) {
        const auto end = std::min(part.find('\n', start), part.size());
        EXPECT_LE(end - start, 92u) << f.name << ": " << part.substr(start, end - start);
        start = end + 1;
      }
    }
  }
  EXPECT_FALSE(command_text("chek"));
  EXPECT_THAT(command_text("chek").error().message(), HasSubstr("commands/chek.toml"));
}

TEST(CommandText, TheHelpIsDescriptionEnvironmentExamplesThenExitStatus) {
  const auto t = parse_command_text(
      "summary = \"Do it\"\n"
      "exit_status = '''\n0 done, 2 bad input.\n'''\n"
      "examples = '''\n  dltune x --y\n'''\n"
      "description = '''\nFirst paragraph.\n\nSecond.\n'''\n"
      "environment = '''\nX_Y names the thing.\n'''\n",
      "commands/x.toml");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->help(),
            "First paragraph.\n\nSecond.\n\nEnvironment: X_Y names the thing.\n\n"
            "Examples:\n  dltune x --y\n\nExit status: 0 done, 2 bad input.");
}

TEST(CommandText, EachOptionHasItsHelpAndThePlaceholderOfItsValue) {
  const auto t = parse_command_text(
      "summary = \"s\"\ndescription = \"d\"\nexit_status = \"0\"\n[options]\n"
      "\"--memory\" = { value = \"SIZE\", help = \"Memory limit\" }\n"
      "\"--quiet\" = \"No summary\"\n",
      "commands/x.toml");
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->options.size(), 2u);
  EXPECT_EQ(t->options.at("--memory").help, "Memory limit");
  EXPECT_EQ(t->options.at("--memory").value, "SIZE");
  EXPECT_EQ(t->options.at("--quiet").help, "No summary");
  EXPECT_FALSE(t->options.at("--quiet").value);
}

TEST(CommandText, ABrokenFileNamesItselfAndWhatIsWrong) {
  const std::string kValid = "summary = \"s\"\ndescription = \"d\"\nexit_status = \"0\"\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"summary = \"s\"\ndescription = \"d\"\n", "commands/x.toml: exit_status is missing"},
      {"summary = \"s\"\ndescription = \"d\"\nexit_status = \"0\"\nexmples = \"e\"\n",
       "commands/x.toml: unknown key exmples"},
      {"summary = 5\ndescription = \"d\"\nexit_status = \"0\"\n",
       "commands/x.toml: summary is not a string"},
      {"summary = \"a\\nb\"\ndescription = \"d\"\nexit_status = \"0\"\n",
       "commands/x.toml: summary must be one line"},
      {"summary = \"s\"\ndescription = '''\nunterminated\n", "commands/x.toml:3:"},
      {kValid + "options = 3\n", "commands/x.toml: options is not a table"},
      {kValid + "[options]\n\"--x\" = 3\n",
       "commands/x.toml: options.\"--x\": expected a string or { value = ..., help = ... }"},
      {kValid + "[options]\n\"--x\" = { value = \"N\" }\n",
       "commands/x.toml: options.\"--x\": help is missing"},
      {kValid + "[options]\n\"--x\" = { help = \"h\", vale = \"N\" }\n",
       "commands/x.toml: options.\"--x\": unknown key vale (expected value, help)"},
      {kValid + "[options]\n\"--x\" = { help = \"h\", value = 1 }\n",
       "commands/x.toml: options.\"--x\": value is not a string"},
      {kValid + "[subcommands]\nplan = 3\n",
       "commands/x.toml: subcommands.plan: expected a one-line summary"},
      {kValid + "[subcommands]\nplan = \"a\\nb\"\n",
       "commands/x.toml: subcommands.plan: expected a one-line summary"},
  };
  for (const auto& [text, want] : cases) {
    const auto t = parse_command_text(text, "commands/x.toml");
    ASSERT_FALSE(t) << text;
    EXPECT_THAT(t.error().message(), HasSubstr(want)) << text;
  }
}

}  // namespace command_text_test

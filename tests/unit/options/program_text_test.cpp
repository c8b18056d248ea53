// dltune's own help text and dltune(1)'s files and environment: data, checked as such.
#include "options/program_text.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "options/options.hpp"

namespace program_text_test {

using dltune::options::parse_program_text;
using ::testing::HasSubstr;

TEST(ProgramText, TheCompiledInTextParsesAndNamesItsCommands) {
  const auto& text = dltune::options::program_text();
  EXPECT_THAT(text.description, HasSubstr("PyTorch"));
  EXPECT_THAT(text.exit_status, HasSubstr("2 bad input"));
  EXPECT_EQ(text.description.front() == '\n', false) << "no leading blank line";
  ASSERT_FALSE(text.files.empty());
  ASSERT_FALSE(text.environment.empty());
  // commands_taking resolves against the program: every command whose option shows PROFILE.
  CLI::App program{"test", "dltune"};
  auto* check = program.add_subcommand("check", "x");
  std::string profile;
  check->add_option("-p,--profile", profile)->type_name("PROFILE");
  program.add_subcommand("env", "y");
  const auto extras = text.man_extras(program, "dltune test");
  EXPECT_EQ(extras.source, "dltune test");
  bool found = false;
  for (const auto& f : extras.files)
    if (f.name == "/etc/dltune/profiles/NAME.toml") {
      found = true;
      EXPECT_EQ(f.commands, std::vector<std::string>{"check"});
    }
  EXPECT_TRUE(found);
}

TEST(ProgramText, BadTextIsAnErrorNamingTheKey) {
  const std::string ok = "description = 'd'\nexit_status = 'e'\n";
  ASSERT_TRUE(parse_program_text(ok, "t.toml"));
  struct Case {
    std::string text, expected;
  };
  const Case cases[] = {
      {"description = 'd'\n", "exit_status"},
      {ok + "colour = 'x'\n", "colour"},
      {ok + "[[files]]\nname = '/x'\n", "files[0]"},
      {ok + "[[environment]]\nname = 'X'\ntext = 't'\nwhen = 'y'\n", "environment[0].when"},
      {ok + "[[files]]\nname = '/x'\ntext = 't'\ncommands = [1]\n", "commands"},
      {ok + "files = 'x'\n", "files"},
      {"description = \n", "line 1"},
  };
  for (const auto& c : cases) {
    auto r = parse_program_text(c.text, "t.toml");
    ASSERT_FALSE(r) << c.text;
    EXPECT_THAT(r.error().message(), HasSubstr(c.expected)) << c.text;
    EXPECT_THAT(r.error().message(), HasSubstr("t.toml"));
  }
}

}  // namespace program_text_test

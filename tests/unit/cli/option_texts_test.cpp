// Every option's help is its command's commands/NAME.toml [options] entry, every subcommand's
// summary its [subcommands] entry: each option and subcommand every command declares has one (a
// missing one is a build defect, thrown while the command is made), and no entry is left over
// from one that went.
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "options/command_text.hpp"
#include "options/options.hpp"

namespace option_texts_test {

namespace {

// The key an option's help is filed under: its first long name, else a positional's name,
// else its short name.
std::string key_of(const CLI::Option& o) {
  if (!o.get_lnames().empty()) return "--" + o.get_lnames().front();
  if (!o.get_single_name().empty() && o.get_snames().empty()) return o.get_single_name();
  return "-" + o.get_snames().front();
}

void collect(const CLI::App& app, std::set<std::string>& keys, const std::string& command) {
  for (const auto* o : app.get_options()) {
    const auto key = key_of(*o);
    if (key == "--help" || key == "--version") continue;
    EXPECT_FALSE(o->get_description().empty()) << command << " " << key;
    keys.insert(key);
  }
  for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
    collect(*s, keys, command);
}

}  // namespace

TEST(OptionTexts, EveryOptionOfEveryCommandHasItsEntryAndEveryEntryAnOption) {
  CLI::App app{"dltune"};
  dltune::cli::GlobalOptions global;
  const auto commands = dltune::cli::make_commands(app, global);  // throws on a missing entry
  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  ASSERT_EQ(subs.size(), dltune::options::embedded_commands().size());
  for (const auto* command : subs) {
    const auto name = command->get_name();
    const auto text = dltune::options::command_text(name);
    ASSERT_TRUE(text) << text.error().message();
    std::set<std::string> declared;
    collect(*command, declared, name);
    std::set<std::string> filed;
    for (const auto& [key, option] : text->options) filed.insert(key);
    EXPECT_EQ(declared, filed) << "commands/" << name << ".toml [options] against the options "
                               << name << " declares";
    std::set<std::string> subcommands, summarised;
    for (const auto* s : command->get_subcommands([](const CLI::App*) { return true; })) {
      subcommands.insert(s->get_name());
      EXPECT_EQ(s->get_description(), text->subcommands.count(s->get_name()) != 0
                                          ? text->subcommands.at(s->get_name())
                                          : std::string("(none)"));
    }
    for (const auto& [sub, summary] : text->subcommands) summarised.insert(sub);
    EXPECT_EQ(subcommands, summarised) << "commands/" << name << ".toml [subcommands]";
  }
}

TEST(OptionTexts, AnOptionWithoutAnEntryIsABuildDefectNamingTheFileAndTheOption) {
  CLI::App app{"dltune"};
  auto* run = dltune::options::add_command(app, "run");
  std::string value;
  try {
    dltune::options::add_value(*run, "--no-such-option", value);
    FAIL() << "an option without an entry was added";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("commands/run.toml: [options] has no "
                                               "\"--no-such-option\""));
  }
  try {
    dltune::options::add_subcommand(*run, "sideways");
    FAIL() << "a subcommand without a summary was added";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("commands/run.toml: [subcommands] has no sideways"));
  }
  // A value-taking option's entry must give its placeholder: run's --quiet is a flag's.
  try {
    dltune::options::add_value(*run, "-q,--quiet", value);
    FAIL() << "a value option was added without a placeholder";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("commands/run.toml: options.\"--quiet\" takes a "
                                               "value: it needs value = \"...\""));
  }
  // The entry's help reaches --help, with the range the option states.
  std::int64_t workers = 0;
  auto* o = dltune::options::add_integer(*run, "--workers", workers, 0, 1024);
  EXPECT_EQ(o->get_description(),
            "DataLoader workers per rank: intra-op threads get the CPUs they leave (0 to 1024)");
}

// The program makes only the command its command line names (cli.cpp): each name makes that
// command alone, with the same options as when every command is made.
TEST(OptionTexts, EachCommandMadeAloneIsTheSameAsAmongAll) {
  CLI::App all{"dltune"};
  dltune::cli::GlobalOptions global_all;
  const auto every = dltune::cli::make_commands(all, global_all);
  const auto names = dltune::cli::command_names();
  ASSERT_EQ(names.size(), every.size());
  for (const auto name : names) {
    CLI::App one{"dltune"};
    dltune::cli::GlobalOptions global;
    const auto made = dltune::cli::make_commands(one, global, name);
    ASSERT_EQ(made.size(), 1u) << name;
    const auto subs = one.get_subcommands([](const CLI::App*) { return true; });
    ASSERT_EQ(subs.size(), 1u) << name;
    EXPECT_EQ(subs.front()->get_name(), name);
    std::set<std::string> alone, among;
    collect(*subs.front(), alone, std::string(name));
    collect(*all.get_subcommand(std::string(name)), among, std::string(name));
    EXPECT_EQ(alone, among) << name;
  }
}

TEST(OptionTexts, TheCommandLineSaysWhichCommandsToMake) {
  using dltune::cli::command_to_make;
  using V = std::vector<std::string>;
  EXPECT_EQ(command_to_make(V{"env", "--json"}), std::optional<std::string_view>("env"));
  EXPECT_EQ(command_to_make(V{"help", "tune"}), std::optional<std::string_view>("tune"));
  EXPECT_EQ(command_to_make(V{"--version"}), std::optional<std::string_view>(""));
  // Help for the program, a mistyped command (its nearest name is suggested from all of them),
  // options before the command, and completion (scripts for every command) make them all.
  EXPECT_EQ(command_to_make(V{}), std::nullopt);
  EXPECT_EQ(command_to_make(V{"--help"}), std::nullopt);
  EXPECT_EQ(command_to_make(V{"chek"}), std::nullopt);
  EXPECT_EQ(command_to_make(V{"help"}), std::nullopt);
  EXPECT_EQ(command_to_make(V{"completion", "bash"}), std::nullopt);
  EXPECT_EQ(command_to_make(V{"--version", "env"}), std::nullopt);
}

}  // namespace option_texts_test

#pragma once
// The man pages, made from the program's CLI11 definition and each command's commands/NAME.toml:
// the same definitions as --help, never a second copy. dltune(1) lists the commands, the global
// options, the exit status, the files and the environment; dltune-COMMAND(1) has the command's
// synopsis and every option from CLI11 (flags, value placeholders, positionals), its description,
// subcommands, exit status, environment, examples, files and the pages it mentions.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dltune::options {

// A FILES or ENVIRONMENT entry, in dltune(1) and in the pages of `commands`.
struct ManEntry {
  std::string name;  // "/var/lib/dltune/state.db", "NO_COLOR"
  std::string text;  // what it is, as written for a help text (options/command_text.hpp)
  std::vector<std::string> commands;
};

// What the pages need beyond the command definitions.
struct ManExtras {
  std::string source;       // .TH's source: "dltune 0.1.0"
  std::string exit_status;  // the program's (the footer of `dltune --help`)
  std::vector<ManEntry> files;
  // Variables for every command (dltune(1)); a command's page lists one too when its
  // commands/NAME.toml names it, or it is in `commands`. The variables each command documents
  // in its own environment text are its page's, and dltune(1) names them.
  std::vector<ManEntry> environment;
};

struct ManPage {
  std::string name;  // "dltune", "dltune-check": the file is NAME.1
  std::string text;  // roff (man(7) macros)
};

// dltune(1) and one page per command of `program` (a CLI::App made as `dltune` makes it, with
// every command added through add_command), in the order of `dltune --help`. A command without
// its commands/NAME.toml is a build defect: std::logic_error naming the file.
[[nodiscard]] std::vector<ManPage> man_pages(const CLI::App& program, const ManExtras& extras);

}  // namespace dltune::options

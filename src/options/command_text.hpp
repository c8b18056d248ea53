#pragma once
// Each command's help text is data: commands/NAME.toml, compiled in (cmake/embed.cmake). One
// source for `dltune NAME --help` and its line in `dltune --help` (and the man pages, which are
// made from the same sections).
//
//   summary      one line: the command's line in `dltune --help`
//   description  paragraphs, wrapped by hand at about 90 columns
//   environment  optional: the variables it reads
//   examples     optional: command lines, two spaces in, with any text that explains them
//   exit_status  what each exit status means for this command
//   [options]    each option's help, keyed by its long name ("--memory") or a positional's
//                name ("recording"): a string, or { value = "SIZE", help = "..." } where the
//                option takes a value whose placeholder --help shows
//   [subcommands] each subcommand's one-line summary ("plan" = "What would change ...")
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/embedded.hpp"
#include "core/error.hpp"

namespace dltune::options {

// commands/*.toml, sorted by name.
[[nodiscard]] const std::vector<EmbeddedFile>& embedded_commands();

struct OptionText {
  std::string help;
  std::optional<std::string> value;  // the placeholder of the option's value ("SIZE")
};

struct CommandText {
  std::string summary;
  std::string description;
  std::optional<std::string> environment;
  std::optional<std::string> examples;
  std::string exit_status;
  std::map<std::string, OptionText> options;
  std::map<std::string, std::string> subcommands;

  // The full --help text: the description, then "Environment: ...", "Examples:" and last
  // "Exit status: ...", each a paragraph.
  [[nodiscard]] std::string help() const;
};

// Parses one commands/NAME.toml; `origin` names it in errors ("commands/run.toml").
[[nodiscard]] Result<CommandText> parse_command_text(std::string_view toml_text,
                                                     std::string_view origin);
// The compiled-in text of command `name`; an error naming the file when there is none or it does
// not parse.
[[nodiscard]] Result<CommandText> command_text(std::string_view name);

}  // namespace dltune::options

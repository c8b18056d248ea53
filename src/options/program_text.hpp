#pragma once
// dltune itself as data, beside each command's commands/NAME.toml: commands/program/dltune.toml,
// compiled in (cmake/embed_file.cmake).
//   description   `dltune --help`'s text above the commands
//   exit_status   the program's exit statuses: its help's footer and dltune(1)'s EXIT STATUS
//   [[files]], [[environment]]   dltune(1)'s FILES and ENVIRONMENT: `name` and `text`, and the
//                 commands whose pages list it too: `commands` (their names), or
//                 `commands_taking` (those with an option whose value is shown so: "PROFILE")
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "options/man_page.hpp"

namespace dltune::options {

// commands/program/dltune.toml as compiled in.
[[nodiscard]] std::string_view program_toml();

struct ProgramEntry {
  ManEntry entry;               // its commands from `commands`
  std::string commands_taking;  // or, when set, those taking a value shown so
};

struct ProgramText {
  std::string description;
  std::string exit_status;
  std::vector<ProgramEntry> files, environment;

  // The man pages' extras for `program` (as dltune makes it), .TH's source `source`.
  [[nodiscard]] ManExtras man_extras(const CLI::App& program, std::string source) const;
};

// Parses the text; `origin` names it in errors. Unknown keys, a missing description or exit
// status and an entry without name or text are errors.
[[nodiscard]] Result<ProgramText> parse_program_text(std::string_view toml_text,
                                                     std::string_view origin);
// The compiled-in text, parsed; a build defect (std::logic_error naming the file) when it does
// not parse.
[[nodiscard]] const ProgramText& program_text();

}  // namespace dltune::options

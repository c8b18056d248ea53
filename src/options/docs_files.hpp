#pragma once
// The documents made from a program's CLI11 definition, written as files: its man pages
// (man_page.hpp) and its completion scripts for bash, zsh and fish (completion.hpp).
#include <string>
#include <vector>

#include "core/error.hpp"
#include "options/completion.hpp"
#include "options/man_page.hpp"

namespace CLI {
class App;
}

namespace dltune::options {

// Writes DIR/man/man1/NAME.1 for each page and DIR/completions/dltune.bash, _dltune (zsh) and
// dltune.fish, each whole (a temporary file renamed into place). Error: a directory or file that
// cannot be written, named.
[[nodiscard]] Result<void> write_docs(const CLI::App& program, const ManExtras& extras,
                                      const CompletionWords& words, const std::string& dir);

// The names of `program`'s commands that take an option whose value is shown as `type_name`
// ("PROFILE") anywhere among their subcommands.
[[nodiscard]] std::vector<std::string> commands_taking(const CLI::App& program,
                                                       const std::string& type_name);

}  // namespace dltune::options

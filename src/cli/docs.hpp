#pragma once
// What dltune says about itself beyond --help, made from the same command definitions: the man
// pages and the shell completion scripts, written at build time by the hidden
// `dltune __generate-docs DIR` (CMakeLists.txt), and `dltune completion SHELL`.
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "options/completion.hpp"

namespace CLI {
class App;
}

namespace dltune::cli {

// The hidden command that writes the documents; not a CLI11 command, so no help lists it.
inline constexpr const char* kGenerateDocs = "__generate-docs";

// What the completion scripts offer beyond the commands: the built-in profiles, and every
// setting id they or the catalog name. Compiled in: no file is read.
[[nodiscard]] options::CompletionWords completion_words();

// Writes DIR/man/man1/dltune.1 and DIR/man/man1/dltune-COMMAND.1 for each command, and
// DIR/completions/dltune.bash, _dltune (zsh) and dltune.fish, from `program` as `dltune` makes
// it. Reads no environment and no host file. Exit status 0, or 1 after saying what could not be
// written.
[[nodiscard]] int generate_docs(const CLI::App& program, const std::string& dir);

// `dltune completion bash|zsh|fish`: the script on stdout, from the program `app` (the
// commands are read when it runs, so that all of them are there).
std::unique_ptr<Command> make_completion_command(CLI::App& app, GlobalOptions& global);

}  // namespace dltune::cli

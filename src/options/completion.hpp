#pragma once
// Shell completions (bash, zsh, fish), made from the program's CLI11 definition: the same
// commands, subcommands and options as --help, each option's value completed by what it takes
// (its placeholder in commands/NAME.toml): a closed set of words (--color auto|always|never),
// profile names, setting ids, GPU indexes, recordings (*.db), files or directories. Profile
// names, setting ids and GPU indexes are also looked up when completing (/etc/dltune/profiles,
// /proc/driver/nvidia/gpus or nvidia-smi -L), by the script itself: it never runs dltune.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/error.hpp"

namespace dltune::options {

// What an option's value (or a positional) completes to.
enum class ValueKind {
  kFlag,       // no value
  kAny,        // free text: nothing is offered
  kWords,      // one of `words`
  kProfile,    // a profile name (built-in or /etc/dltune/profiles), or a TOML file
  kSettingId,  // a profile's setting id (--only, --skip)
  kGpu,        // a GPU index
  kRecording,  // a recording (*.db) or a directory with them
  kFile,
  kDirectory
};

struct CompletedOption {
  std::vector<std::string> names;  // "-p", "--profile"; empty for a positional
  std::string help;                // short: its help up to the first clause
  std::string placeholder;         // "PROFILE"
  ValueKind kind = ValueKind::kFlag;
  std::vector<std::string> words;  // kWords
  bool list = false;               // comma-separated values (--only a,b)
  bool repeatable = false;
};

struct CompletedCommand {
  std::string path;  // "" for the program, "check", "tune apply"
  std::string summary;
  std::vector<CompletedOption> options;
  std::optional<CompletedOption> positional;
  std::vector<std::string> subcommands;  // names, in --help's order
  bool job_command = false;              // takes "-- COMMAND..."
};

// What the scripts offer beyond the command definitions, known when they are made.
struct CompletionWords {
  std::vector<std::string> profiles;     // the built-in profiles
  std::vector<std::string> setting_ids;  // every id a built-in profile or the catalog names
};

// The program, then each command and subcommand, depth first; also `help` with the commands.
[[nodiscard]] std::vector<CompletedCommand> completion_model(const CLI::App& program);

// The command whose path is `path` ("tune apply") in `model`; null when there is none.
[[nodiscard]] const CompletedCommand* find_completed(const std::vector<CompletedCommand>& model,
                                                     const std::string& path);

// Option `o` as the scripts complete it: its names, short help, and what its value completes to.
[[nodiscard]] CompletedOption completed_option(const CLI::Option& o);

// The script for `shell` ("bash", "zsh" or "fish"); an error naming the shell otherwise.
[[nodiscard]] Result<std::string> completion_script(std::string_view shell, const CLI::App& program,
                                                    const CompletionWords& words);
[[nodiscard]] std::string bash_completion(const std::vector<CompletedCommand>& model,
                                          const CompletionWords& words);
[[nodiscard]] std::string zsh_completion(const std::vector<CompletedCommand>& model,
                                         const CompletionWords& words);
[[nodiscard]] std::string fish_completion(const std::vector<CompletedCommand>& model,
                                          const CompletionWords& words);

// The shells completion_script knows, in the order `dltune completion --help` names them.
[[nodiscard]] const std::vector<std::string>& completion_shells();

}  // namespace dltune::options

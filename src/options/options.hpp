#pragma once
// The command-line grammar every command shares (README, "What every command keeps to"): typed
// options whose range is stated in --help and checked while parsing, with one wording for every
// error; commands with a one-line summary and a full description; the help layout; and one way
// to report a command line that does not parse ("dltune COMMAND: ...", exit 2).
//
// Durations: 500ms, 90s, 15m, 2h, 1d, 1w and compounds (1h30m), core/text's grammar.
// Lists: --only a,b and --only a --only b alike. Numbers: a human range, never a wrap-around.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "options/command_text.hpp"

namespace dltune::options {

// The command an app belongs to: itself, or for a subcommand ("tune plan") its top command.
[[nodiscard]] std::string command_of(const CLI::App& app);
// "-o,--output" is "--output": the long name where there is one, else the first.
[[nodiscard]] std::string long_name(const std::string& names);

// A command: `summary` is its line in `dltune --help`, `description` its own --help's text (which
// ends with its exit statuses). Every command also takes --version.
CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& summary,
                      const std::string& description);
// The same with the text of commands/NAME.toml (options/command_text.hpp). A command without one
// is a build defect: std::logic_error naming the file.
CLI::App* add_command(CLI::App& parent, const std::string& name);

// A subcommand of `parent` ("tune plan") with its summary from the command's [subcommands]; one
// without is a build defect (std::logic_error naming the file and the subcommand).
CLI::App* add_subcommand(CLI::App& parent, const std::string& name);

// Every option's help, and the placeholder of its value, are its entry in the command's
// commands/NAME.toml [options] (options/command_text.hpp), keyed by its long name ("--memory" of
// "-m,--memory") or a positional's name: one text for --help, man pages and completions. An
// option without an entry is a build defect: std::logic_error naming the file and the option
// (a unit test builds every command). An entry's `value` replaces the placeholder given here.
[[nodiscard]] OptionText option_text(const CLI::App& app, const std::string& name);

// An option of any type CLI11 converts (a string, a list of strings), or a positional; its entry
// must give the placeholder (`value`).
template <class T>
CLI::Option* add_value(CLI::App& app, const std::string& name, T& value) {
  const auto text = option_text(app, name);
  if (!text.value)
    throw std::logic_error("commands/" + command_of(app) + ".toml: options.\"" + long_name(name) +
                           "\" takes a value: it needs value = \"...\"");
  return app.add_option(name, value, text.help)->type_name(*text.value);
}
// A flag (no value): bool, or a count.
template <class T>
CLI::Option* add_flag(CLI::App& app, const std::string& name, T& value) {
  return app.add_flag(name, value, option_text(app, name).help);
}

// A second in the nanoseconds that duration options hold.
inline constexpr std::int64_t kSecond = 1'000'000'000;

// A duration option stored in nanoseconds, refused outside [min_ns, max_ns]; the help gets the
// range appended. The optional form stays empty unless given.
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::int64_t& ns,
                          std::int64_t min_ns, std::int64_t max_ns);
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::optional<std::int64_t>& ns,
                          std::int64_t min_ns, std::int64_t max_ns);

// A whole number within [min, max] ("N", "PID", ...: `type` names it in --help), handed to `set`.
CLI::Option* add_integer_with(CLI::App& app, const std::string& name, std::int64_t min,
                              std::int64_t max, const std::string& type,
                              std::function<void(std::int64_t)> set);
template <class T>
CLI::Option* add_integer(CLI::App& app, const std::string& name, T& value, std::int64_t min,
                         std::int64_t max, const std::string& type = "N") {
  return add_integer_with(app, name, min, max, type,
                          [&value](std::int64_t v) { value = static_cast<T>(v); });
}
template <class T>
CLI::Option* add_integer(CLI::App& app, const std::string& name, std::optional<T>& value,
                         std::int64_t min, std::int64_t max, const std::string& type = "N") {
  return add_integer_with(app, name, min, max, type,
                          [&value](std::int64_t v) { value = static_cast<T>(v); });
}
// The largest process ID a Linux kernel hands out (PID_MAX_LIMIT, include/linux/threads.h).
inline constexpr std::int64_t kMaxPid = 4'194'304;
// A number (decimals allowed) within [min, max].
CLI::Option* add_number(CLI::App& app, const std::string& name, double& value, double min,
                        double max, const std::string& type = "N");

// One of `choices` ("abba" or "ab"), named in --help and in the refusal.
CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& value,
                        const std::vector<std::string>& choices);

// A list: repeated (--only a --only b) or comma-separated (--only a,b), or both.
CLI::Option* add_list(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                      const std::string& type);

// The terminal's width in columns (stdout's, else $COLUMNS, else 100), within 60 to 120.
[[nodiscard]] int terminal_width();
// Whether to colour standard output for --color `choice`: "always", "never", or "auto": when it
// is a terminal and NO_COLOR is unset or empty (no-color.org: "present and not an empty string"
// turns colour off).
[[nodiscard]] bool use_color(const std::string& choice);

// Sets dltune's help layout on `app` (and the commands added after): usage first, the
// description, options with their help wrapped to the terminal, and for the program a
// one-screen list of commands with their summaries.
void use_dltune_help(CLI::App& app);

// Parses `args` (the words after the program's name): nullopt when they parse; otherwise the exit
// status, after printing the help or version asked for (0) or the error as "dltune COMMAND:
// what was wrong" with where to look (2). `dltune help [COMMAND]` is `[COMMAND] --help`; an
// unknown command is named with the nearest known one.
[[nodiscard]] std::optional<int> parse(CLI::App& app, std::vector<std::string> args);

// `run`'s exit status, unless the output could not be written (standard output on a full disk,
// a closed pipe): then 1 after saying so on stderr ("dltune: cannot write the output: ..."),
// never an abort and never 0 with the output lost. fmt::print throws std::system_error
// ("cannot write to file: ...") when a write fails; what is still buffered fails at the flush.
[[nodiscard]] int with_output_checked(const std::function<int()>& run);

// Asks `question` on stdout and reads a line from stdin: true for "y", "Y" or "yes".
[[nodiscard]] bool confirmed(const std::string& question);

// The words after the first "--" of `args`, taken out of it, when a word before that "--" is
// one of `commands` (the job's command line of `run`, `record`, ...: never the program's
// options); nullopt, `args` untouched, otherwise.
[[nodiscard]] std::optional<std::vector<std::string>> take_after_dashdash(
    std::vector<std::string>& args, const std::vector<std::string>& commands);
// The job's command of `command_name` (`run`, `record`, `bench`): the words take_after_dashdash
// took (`after_dashdash`), passed on untouched, else none. Refuses any word CLI11 left
// (`remaining`): an unknown option of the command, or a command without "--" before it.
[[nodiscard]] Result<std::vector<std::string>> job_command(
    const std::vector<std::string>& remaining,
    const std::optional<std::vector<std::string>>& after_dashdash, const char* command_name);

// The command being run as words ("tune apply"): the deepest command parsed.
[[nodiscard]] std::string command_path(const CLI::App& app);

// The nearest of `known` to `word` when it is close enough to be a typing slip, else "".
[[nodiscard]] std::string nearest(const std::string& word, const std::vector<std::string>& known);

}  // namespace dltune::options

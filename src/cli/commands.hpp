#pragma once
// Each command is a small object: CLI11 options bound to its fields, and execute().
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"
#include "core/environment.hpp"
#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "record/run_invocation.hpp"
#include "tui/top.hpp"

namespace CLI {
class App;
}

namespace dltune::cli {

struct GlobalOptions {
  // `dltune run [OPTIONS] -- COMMAND...`: the words after the first "--", taken out before
  // CLI11 parses (they are the job's, never dltune's options).
  std::optional<std::vector<std::string>> after_dashdash;
};

class Command {
 public:
  // The command `name`, added to `parent` with its help from commands/NAME.toml.
  Command(CLI::App& parent, const char* name);
  // Commands on `app`, an App made elsewhere (slurm's per-job subcommands), said as `name`.
  Command(CLI::App* app, std::string name) : sub_(app), name_(std::move(name)) {}
  virtual ~Command() = default;
  // Whether the command line chose this command: by default, that its App was parsed.
  [[nodiscard]] virtual bool selected() const;
  virtual int execute() = 0;

 protected:
  // "dltune NAME: what" on stderr; refuse returns exit status 2 (bad input, nothing done),
  // failure 1 (the command ran and failed).
  void say(const std::string& what) const;
  int refuse(const std::string& why) const;
  int failure(const std::string& why) const;
  // A library's failure that knows whether the input was at fault (its `error` and
  // `bad_input`): said between `prefix` and `suffix`, exit status 2 or 1.
  template <class Failure>
  int failed(const Failure& f, const std::string& prefix = "", const char* suffix = "") const {
    say(prefix + f.error.message() + suffix);
    return f.bad_input ? kExitBadInput : kExitFailure;
  }

  CLI::App* const sub_;  // the command's App, its options bound to the derived class's fields

 private:
  std::string name_;
};

// The host a command reads: this one without --root, else the tree at `dir` and nothing of the
// live host. On an empty or bad tree it prints "dltune COMMAND: --root: ..." and returns nullopt
// (exit 2).
[[nodiscard]] std::optional<host::Root> open_root(const char* command,
                                                  const std::optional<std::string>& dir);
// This host's name (gethostname), empty when it cannot be read.
[[nodiscard]] std::string host_name();
// How facts are collected: DLTUNE_NVML_LIBRARY from this process's environment.
[[nodiscard]] inventory::CollectOptions collect_options();
std::unique_ptr<Command> make_env_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_capture_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_baseline_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_stacks_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_check_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_tune_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_profiles_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_run_command(CLI::App& app, GlobalOptions& global);
// run's options (the words after "run", up to "--") for `command`, parsed and checked as the
// command line would be, before anything is done: profile and bench refuse bad ones up front.
[[nodiscard]] Result<record::RunInvocation> parse_run_options(
    const std::vector<std::string>& options, const std::vector<std::string>& command);
// Runs the job (recorded when asked) in this process and says how it went, each message prefixed
// by `who` ("dltune run"); run's exit status: the job's, 2 refused, 1 the set-up failed.
[[nodiscard]] int run_and_report(record::RunInvocation invocation, const std::string& who);
// A terminal view's end as an exit status: 0, 2 for bad input (no terminal, an empty recording)
// and 1 for a failure, said on stderr prefixed by `who`.
[[nodiscard]] int top_exit_status(const tui::TopResult& result, const char* who);
std::unique_ptr<Command> make_top_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_record_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_serve_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_report_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_profile_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_doctor_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_bench_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_compare_command(CLI::App& app, GlobalOptions& global);
std::unique_ptr<Command> make_slurm_command(CLI::App& app, GlobalOptions& global);
// The per-job subcommands of `slurm` (efficiency, report, prolog, watch, epilog), added to its
// App `slurm` in the order its help lists them.
std::unique_ptr<Command> make_slurm_job_commands(CLI::App& slurm);
// Every command (or, with `only`, the one of that name; none for ""), added to `app` in the order
// `dltune --help` lists them.
[[nodiscard]] std::vector<std::unique_ptr<Command>> make_commands(
    CLI::App& app, GlobalOptions& global, std::optional<std::string_view> only = std::nullopt);
// The names of the commands, in that order.
[[nodiscard]] std::vector<std::string_view> command_names();
// Which command a command line needs made: one name, "" for none (`--version` alone), or
// nullopt for all (help for the program, a name that is no command's, completion).
[[nodiscard]] std::optional<std::optional<std::string_view>> command_to_make(
    const std::vector<std::string>& args);

}  // namespace dltune::cli

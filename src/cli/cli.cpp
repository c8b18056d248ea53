#include "cli/cli.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/docs.hpp"
#include "core/build_info.hpp"
#include "host/fault.hpp"
#include "options/options.hpp"
#include "options/program_text.hpp"
#include "tune/render.hpp"

namespace dltune::cli {

namespace {

using MakeCommand = std::unique_ptr<Command> (*)(CLI::App&, GlobalOptions&);
struct NamedCommand {
  std::string_view name;
  MakeCommand make;
};
// In the order `dltune --help` lists them.
constexpr NamedCommand kCommands[] = {
    {"check", make_check_command},     {"env", make_env_command},
    {"capture", make_capture_command}, {"baseline", make_baseline_command},
    {"tune", make_tune_command},       {"profiles", make_profiles_command},
    {"run", make_run_command},         {"top", make_top_command},
    {"record", make_record_command},   {"serve", make_serve_command},
    {"report", make_report_command},   {"profile", make_profile_command},
    {"doctor", make_doctor_command},   {"bench", make_bench_command},
    {"compare", make_compare_command}, {"slurm", make_slurm_command},
    {"stacks", make_stacks_command},   {"completion", make_completion_command},
};

bool is_command(std::string_view name) {
  return std::any_of(std::begin(kCommands), std::end(kCommands),
                     [&](const NamedCommand& c) { return c.name == name; });
}

}  // namespace

std::vector<std::string_view> command_names() {
  std::vector<std::string_view> names;
  for (const auto& c : kCommands) names.push_back(c.name);
  return names;
}

std::vector<std::unique_ptr<Command>> make_commands(CLI::App& app, GlobalOptions& global,
                                                    std::optional<std::string_view> only) {
  std::vector<std::unique_ptr<Command>> c;
  for (const auto& command : kCommands)
    if (!only || command.name == *only) c.push_back(command.make(app, global));
  return c;
}

std::optional<std::optional<std::string_view>> command_to_make(
    const std::vector<std::string>& args) {
  if (args.size() == 1 && args[0] == "--version") return std::optional<std::string_view>{""};
  std::string_view named;
  if (!args.empty() && is_command(args[0])) named = args[0];
  if (args.size() > 1 && args[0] == "help" && is_command(args[1])) named = args[1];
  // completion writes scripts for every command, so it needs them all.
  if (named.empty() || named == "completion") return std::nullopt;
  return std::optional<std::string_view>{named};
}

int run(int argc, char** argv) {
  const auto& program = options::program_text();  // commands/program/dltune.toml
  CLI::App app{program.description, "dltune"};
  options::use_dltune_help(app);
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       fmt::format("dltune {} (git {})", DLTUNE_VERSION, build_commit()));
  app.footer("Exit status: " + program.exit_status +
             "\n`dltune help COMMAND` (or `dltune COMMAND --help`) shows a command's options.");

#if DLTUNE_TEST_HOOKS
  // The fault-injection test hook (docs/testing.md): a text that does not parse is bad input,
  // never ignored, or a test would pass without its fault.
  if (auto faults = host::faults_from_environment(); !faults) {
    fmt::print(stderr, "dltune: {}\n", faults.error().message());
    return kExitBadInput;
  } else {
    host::set_process_faults(std::move(*faults));
  }
#endif

  GlobalOptions global;
  std::vector<std::string> args(argv + 1, argv + argc);
  // Only the command that runs is made, when the command line names it: making one parses its
  // help text (commands/NAME.toml) and declares its options, and making all seventeen was a
  // quarter of a start once the libraries were loaded lazily (bench/README.md, "Start-up"). Help
  // for the program, a mistyped command (whose nearest name is suggested) and completion need
  // them all; --version alone needs none.
  std::optional<std::optional<std::string_view>> only;
  if (!(argc == 3 && std::string(argv[1]) == kGenerateDocs)) only = command_to_make(args);
  const auto commands = only ? make_commands(app, global, *only) : make_commands(app, global);
  // The man pages and completion scripts, at build time (CMakeLists.txt): hidden, no help lists it.
  if (argc == 3 && std::string(argv[1]) == kGenerateDocs) return generate_docs(app, argv[2]);

  // Everything after the first "--" belongs to the job that `run`, `record`, `profile` or `bench`
  // starts.
  global.after_dashdash = options::take_after_dashdash(args, {"run", "record", "profile", "bench"});
  if (const auto rc = options::parse(app, std::move(args))) return *rc;
  // Every command says so when a tune transaction was left unfinished: the host may be
  // half-changed until it is rolled back.
  for (const auto& w : tune::unfinished_warnings("/var/lib/dltune"))
    fmt::print(stderr, "dltune: {}\n", w);
  for (auto& c : commands)
    if (c->selected()) return options::with_output_checked([&] { return c->execute(); });
  return kExitBadInput;
}

}  // namespace dltune::cli

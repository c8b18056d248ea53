#include "cli/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/docs.hpp"
#include "core/build_info.hpp"
#include "core/json.hpp"
#include "host/fault.hpp"
#include "options/options.hpp"
#include "tune/journal.hpp"

namespace dltune::cli {

namespace {

// The program's exit statuses: its help's footer and dltune(1).
constexpr const char* kExitStatus =
    "0 success, 1 the command failed, 2 bad input (nothing was done); check,\n"
    "doctor, compare and the commands that run a job say their own in their help.";

// Every command says so when a tune transaction was left unfinished: the host may be
// half-changed until it is rolled back.
void warn_about_unfinished_transactions() {
  if (::access("/var/lib/dltune/state.db", F_OK) != 0) return;
  auto journal = tune::Journal::open_read_only("/var/lib/dltune");
  if (!journal) return;
  auto pending = (*journal)->pending();
  if (!pending) return;
  for (const auto& t : *pending)
    fmt::print(
        stderr,
        "dltune: tune transaction {} ({}) was left unfinished: the host may be half-changed; "
        "run `dltune tune rollback {}`\n",
        t.id, t.command, t.id);
}

}  // namespace

std::vector<std::unique_ptr<Command>> make_commands(CLI::App& app, GlobalOptions& global) {
  std::vector<std::unique_ptr<Command>> c;
  for (auto make : {make_check_command, make_env_command, make_capture_command, make_tune_command,
                    make_profiles_command, make_run_command, make_top_command, make_record_command,
                    make_serve_command, make_report_command, make_profile_command,
                    make_doctor_command, make_bench_command, make_compare_command,
                    make_slurm_command, make_stacks_command, make_completion_command})
    c.push_back(make(app, global));
  return c;
}

int run(int argc, char** argv) {
  CLI::App app{
      "Makes a Linux host run PyTorch training well, and proves it. Every command reads the host\n"
      "through its /proc, /sys, /etc and /dev files only (or a host tree's, with --root) and\n"
      "prints text for people or, with --json, a documented schema (docs/json.md) for scripts.",
      "dltune"};
  options::use_dltune_help(app);
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       fmt::format("dltune {} (git {})", DLTUNE_VERSION, build_commit()));
  app.footer(std::string("Exit status: ") + kExitStatus +
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
  const auto commands = make_commands(app, global);
  // The man pages and completion scripts, at build time (CMakeLists.txt): hidden, no help lists it.
  if (argc == 3 && std::string(argv[1]) == kGenerateDocs)
    return generate_docs(app, kExitStatus, argv[2]);

  // Everything after the first "--" belongs to the job that `run`, `record`, `profile` or `bench`
  // starts.
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--") continue;
    const auto before = args.begin() + static_cast<std::ptrdiff_t>(i);
    if (std::none_of(args.begin(), before, [](const std::string& a) {
          return a == "run" || a == "record" || a == "profile" || a == "bench";
        }))
      break;
    global.after_dashdash =
        std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
    args.resize(i);
    break;
  }
  if (const auto rc = options::parse(app, std::move(args))) return *rc;
  warn_about_unfinished_transactions();
  for (auto& c : commands)
    if (c->selected()) return c->execute();
  return kExitBadInput;
}

}  // namespace dltune::cli

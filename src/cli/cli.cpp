#include "cli/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "host/fault.hpp"
#include "tune/journal.hpp"

namespace dltune::cli {

namespace {

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

int run(int argc, char** argv) {
  CLI::App app{
      "dltune: make a Linux host run PyTorch training well, and prove it.\n\n"
      "Every command reads the host only through its /proc, /sys, /etc and /dev files (or those "
      "of\n"
      "a host tree given with --root) and prints text for people or, with --json, a documented\n"
      "schema (docs/json.md) for scripts.",
      "dltune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("dltune ") + DLTUNE_VERSION);
  app.footer(
      "Exit status: 0 success, 1 the command failed, 2 bad input (nothing was done).\n"
      "Run `dltune COMMAND --help` for a command's options.");

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
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_check_command(app, global));
  commands.push_back(make_env_command(app, global));
  commands.push_back(make_capture_command(app, global));
  commands.push_back(make_tune_command(app, global));
  commands.push_back(make_run_command(app, global));
  commands.push_back(make_top_command(app, global));
  commands.push_back(make_record_command(app, global));
  commands.push_back(make_serve_command(app, global));
  commands.push_back(make_report_command(app, global));
  commands.push_back(make_profile_command(app, global));
  commands.push_back(make_doctor_command(app, global));
  commands.push_back(make_bench_command(app, global));
  commands.push_back(make_compare_command(app, global));

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
  if (const auto rc = parse_command_line(app, std::move(args))) return *rc;
  warn_about_unfinished_transactions();
  for (auto& c : commands)
    if (c->selected()) return c->execute();
  return kExitBadInput;
}

std::optional<int> parse_command_line(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace dltune::cli

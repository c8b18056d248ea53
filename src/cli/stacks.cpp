// `dltune stacks --pid PID`: the Python stacks of a running process, read from outside
// (src/pystack, docs/stacks.md).
//   dltune stacks --pid PID [--json]                           each thread's stack, once
//   dltune stacks --pid PID --duration 5s [--rate 100] [--format collapsed|speedscope]
//   dltune stacks --recording FILE [--format collapsed|speedscope]  the stacks a recording kept
#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "options/options.hpp"
#include "pystack/process.hpp"
#include "pystack/render.hpp"
#include "pystack/sample_run.hpp"
#include "store/python_stacks.hpp"
#include "store/recording.hpp"

namespace dltune::cli {

namespace {

using options::kSecond;

class StacksCommand : public Command {
 public:
  explicit StacksCommand(CLI::App& app) : Command(app, "stacks") {
    auto* pid = options::add_integer(*sub_, "--pid", pid_, 1, options::kMaxPid, "PID");
    auto* recording = options::add_value(*sub_, "--recording", recording_);
    pid->excludes(recording);
    recording->excludes(pid);
    options::add_duration(*sub_, "--duration", duration_ns_, 10'000'000, 86'400 * kSecond);
    options::add_integer(*sub_, "--rate", rate_, 1, 1000, "HZ");
    options::add_choice(*sub_, "--format", format_, {"collapsed", "speedscope"});
    options::add_flag(*sub_, "--json", json_);
  }

  int execute() override {
    if (!recording_.empty()) {
      if (duration_ns_ || json_ || sub_->count("--rate") > 0)
        return refuse(
            "--recording prints the stacks the recording kept: no --duration, --rate "
            "or --json (--format collapsed|speedscope)");
      return from_recording();
    }
    if (pid_ == 0) return refuse("--pid PID (a running Python process) or --recording FILE");
    if (json_ && duration_ns_)
      return refuse("--json is for the dump; with --duration use --format");
    if (!duration_ns_ && (sub_->count("--rate") > 0 || sub_->count("--format") > 0))
      return refuse("--rate and --format are for sampling: add --duration");
    auto process = pystack::attach_named(host::Root(), static_cast<pid_t>(pid_));
    if (!process) return failed(process.error());
    if (!duration_ns_) return dump(*process);
    return sample(*process);
  }

 private:
  int dump(pystack::PythonProcess& process) const {
    auto threads = pystack::sample_settled(process);
    if (!threads) return failure(threads.error().message());
    const auto& in = process.interpreter();
    fmt::print("{}", json_ ? pystack::dump_json(in, process.pid(), *threads).dump(2) + "\n"
                           : pystack::dump_text(in, process.pid(), *threads));
    return kExitOk;
  }

  int sample(pystack::PythonProcess& process) const {
    const auto run = pystack::sample_until_stopped(process, {*duration_ns_, rate_, nullptr});
    print(run.counts, fmt::format("dltune stacks --pid {}", pid_));
    say(run.cost_text());
    return run.counts.samples() > 0 || run.ended.empty() ? kExitOk : kExitFailure;
  }

  // The job's main-thread stacks a recording kept (its document "python_stacks"), counted.
  int from_recording() const {
    auto rec = store::Recording::open(recording_);
    if (!rec) return refuse(rec.error().message());
    auto stacks = store::PythonStacks::from_recording(**rec, recording_);
    if (!stacks) return failure(stacks.error().message());
    print(stacks->counts(), fmt::format("dltune stacks --recording {}", recording_));
    say(recording_ + ": " + stacks->summary_text());
    return kExitOk;
  }

  // Counted stacks as --format asks: collapsed lines, or a speedscope document named `name`.
  void print(const pystack::StackCounts& counts, const std::string& name) const {
    if (format_ == "speedscope")
      fmt::print("{}\n", counts.speedscope(name).dump());
    else
      fmt::print("{}", counts.collapsed());
  }

  std::string recording_;
  std::int64_t pid_ = 0;
  std::optional<std::int64_t> duration_ns_;
  std::int64_t rate_ = 100;
  std::string format_ = "collapsed";
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_stacks_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<StacksCommand>(app);
}

}  // namespace dltune::cli

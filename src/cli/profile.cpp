// `dltune profile`: name the bottleneck of a training job from OS signals.
//   dltune profile --pid PID [--duration 30s]      a running job, sampled live
//   dltune profile RECORDING                        a recording (record, run --record)
//   dltune profile [--run ARG]... -- COMMAND...     launch through `dltune run`, then judge it
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "core/json.hpp"
#include "diagnose/profile_evidence.hpp"
#include "launch/spawn.hpp"
#include "monitor/scope.hpp"
#include "options/options.hpp"
#include "record/recorded_run.hpp"

namespace dltune::cli {

namespace {

using options::kSecond;

class ProfileCommand : public Command {
 public:
  ProfileCommand(CLI::App& app, GlobalOptions& global) : Command(app, "profile"), global_(global) {
    options::add_value(*sub_, "recording", recording_);
    options::add_integer(*sub_, "--pid", live_.pid, 1, options::kMaxPid, "PID");
    options::add_value(*sub_, "--slurm-job", live_.slurm_job);
    options::add_duration(*sub_, "--duration", live_.duration_ns, kSecond, 86'400 * kSecond);
    options::add_duration(*sub_, "--interval", live_.interval_ns, 50'000'000, 10 * kSecond);
    options::add_duration(*sub_, "--skip", skip_ns_, 0, 3'600 * kSecond);
    options::add_value(*sub_, "--run", run_args_)->allow_extra_args(false);
    options::add_value(*sub_, "--record", record_);
    options::add_flag(*sub_, "--save", save_);
    options::add_flag(*sub_, "--no-gpus", no_gpus_);
    options::add_flag(*sub_, "--no-stacks", no_stacks_);
    options::add_flag(*sub_, "--json", json_);
  }

  int execute() override {
    const bool command = global_.after_dashdash.has_value();
    const int ways = (live_.pid != 0 ? 1 : 0) + (recording_.empty() ? 0 : 1) + (command ? 1 : 0) +
                     (live_.slurm_job.empty() ? 0 : 1);
    if (ways != 1)
      return refuse(ways == 0 ? "say what to profile: --pid PID, --slurm-job JOB, a RECORDING, "
                                "or -- COMMAND"
                              : "give one of --pid, --slurm-job, RECORDING and -- COMMAND");
    if (command && global_.after_dashdash->empty()) return refuse("no COMMAND after --");
    if (!run_args_.empty() && !command) return refuse("--run is for -- COMMAND");
    if (!record_.empty() && !command) return refuse("--record is for -- COMMAND");
    const bool live_job = live_.pid != 0 || !live_.slurm_job.empty();
    if (live_.duration_ns && !live_job) return refuse("--duration is for --pid and --slurm-job");
    if (save_ && recording_.empty())
      return refuse("--save is for a RECORDING (with -- COMMAND, --record FILE keeps it)");
    if (sub_->count("--interval") > 0 && !recording_.empty())
      return refuse("--interval is for --pid, --slurm-job and -- COMMAND: a recording has its own");
    const auto& rules = diagnose::builtin_rules();
    if (!rules) {
      return failure(rules.error().message());
    }
    rules_ = &*rules;
    if (!recording_.empty()) return from_recording(recording_, recording_, save_);
    if (live_job) return live();
    return launched(*global_.after_dashdash);
  }

 private:
  // The verdict, printed; or the failure said.
  int print(const diagnose::ProfileResult<diagnose::ProfileReport>& report) const {
    if (!report) return failed(report.error());
    fmt::print("{}", json_ ? report->doc.dump(2) + "\n" : diagnose::render_text(*report));
    return kExitOk;
  }

  int from_recording(const std::string& path, const std::string& source_name, bool save,
                     nlohmann::json extra = nlohmann::json::object(),
                     std::vector<std::string> notes = {}) {
    diagnose::JudgeRequest request;
    request.source = source_name.rfind("job ", 0) == 0 ? source_name : "recording " + source_name;
    request.notes = std::move(notes);
    request.extra = std::move(extra);
    if (save) request.save_to = path;
    return print(diagnose::judge_recording(*rules_, path, std::move(request), skip_ns_));
  }

  int live() {
    auto live = live_;
    live.skip_ns = skip_ns_.value_or(0);
    live.gpus = !no_gpus_;
    live.python_stacks = !no_stacks_;
    live.nvml_library = collect_options().nvml_library;
    live.on_start = [&](const std::string& what, std::int64_t duration_ns) {
      if (!json_ || ::isatty(STDERR_FILENO))
        say(fmt::format("sampling {} every {} ms for {:.0f} s (Ctrl-C ends early)", what,
                        live_.interval_ns / 1'000'000, static_cast<double>(duration_ns) / 1e9));
    };
    return print(diagnose::profile_live(host::Root(), *rules_, live));
  }

  int launched(const std::vector<std::string>& command) {
    const auto environment = process_environment();
    if (auto found = launch::find_program(command.front(), environment); !found)
      return refuse(found.error().message());
    auto run = parse_run_options(run_args_, command);
    if (!run) return refuse(run.error().message());
    if (run->recording) return refuse("--run: profile records the job itself (--record FILE)");
    // Without --record FILE, the recording lives in a private directory that goes with it.
    auto place = record::RecordingPlace::make(record_, "dltune-profile");
    if (!place) return refuse(place.error().message());
    const auto& path = place->path();
    // The job run in this process as `dltune run --record` runs it: in its own cgroup, its
    // signals (a terminal's ^C) passed on; profile stays to judge what was recorded.
    run->recording =
        job_recording(path, false, live_.interval_ns, !no_gpus_, run->quiet, "dltune profile");
    if (no_stacks_) run->recording->setup.python_interval_ns = 0;
    // With --json, standard output holds the document alone: the job's goes to stderr.
    run->request.stdout_to_stderr = json_;
    const int code = [&] {
      const launch::DefaultInterruptSignals terminal_signals;
      return run_and_report(std::move(*run), "dltune profile");
    }();
    if (::access(path.c_str(), F_OK) != 0)  // run refused or could not set up: it said why
      return code == kExitBadInput ? kExitBadInput : kExitFailure;
    std::vector<std::string> notes;
    if (code != 0) notes.push_back(fmt::format("the job exited with status {}", code));
    nlohmann::json extra = {{"exit_status", code}};
    if (!record_.empty()) extra["recording"] = record_;
    return from_recording(path, record_.empty() ? "job " + command.front() : record_,
                          !record_.empty(), std::move(extra), std::move(notes));
  }

  GlobalOptions& global_;
  std::string recording_;
  diagnose::LiveProfile live_;  // --pid, --slurm-job, --interval, --duration
  std::vector<std::string> run_args_;
  std::string record_;
  bool save_ = false, no_gpus_ = false, json_ = false, no_stacks_ = false;
  std::optional<std::int64_t> skip_ns_;
  const diagnose::Rules* rules_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> make_profile_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<ProfileCommand>(app, global);
}

}  // namespace dltune::cli

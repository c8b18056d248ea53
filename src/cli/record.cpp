// `dltune record`: samples into a SQLite recording, and `--replay` to look at one.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "launch/spawn.hpp"
#include "options/options.hpp"
#include "record/record_session.hpp"
#include "tui/top.hpp"

namespace dltune::cli {

namespace {

class RecordCommand : public Command {
 public:
  RecordCommand(CLI::App& app, GlobalOptions& global) : Command(app, "record"), global_(global) {
    options::add_value(*sub_, "-o,--output", output_);
    options::add_flag(*sub_, "--force", force_);
    flags_.add_to(*sub_);
    options::add_duration(*sub_, "--duration", duration_ns_, 10'000'000, 3650 * 86'400'000'000'000);
    options::add_value(*sub_, "--replay", replay_);
    options::add_duration(*sub_, "--at", at_ns_, 0, 3650 * 86'400'000'000'000);
    options::add_flag(*sub_, "--once", once_);
    options::add_choice(*sub_, "--sort", sort_, tui::sort_names());
    options::add_flag(*sub_, "-q,--quiet", quiet_);
    options::add_flag(*sub_, "--no-stacks", no_stacks_);
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after -- (or after the last option).");
  }

  int execute() override {
    if (!replay_.empty()) return replay();
    auto job = job_command(sub_->remaining(), global_, "record");
    if (!job) return refuse(job.error().message());
    const std::vector<std::string> command = std::move(*job);
    if (output_.empty()) return refuse("-o FILE: where to write the recording is required");
    if (at_ns_ || once_ || !sort_.empty())
      return refuse(
          fmt::format("{} goes with --replay", at_ns_ ? "--at" : (once_ ? "--once" : "--sort")));
    auto scope = flags_.scope(monitor::Scope::Kind::kNone);
    if (!scope) return refuse(scope.error().message());
    if (!command.empty() && scope->kind != monitor::Scope::Kind::kNone)
      return refuse("give a COMMAND or --pid/--cgroup/--slurm-job, not both");
    const auto target = local_file::output_target(output_, force_);
    if (!target) return refuse("-o: " + target.error().message());
    if (*target == "-") return refuse("-o -: a recording is a SQLite file, not a stream");
    output_ = *target;
    const auto environment = process_environment();
    std::optional<launch::Credentials> as;
    if (!command.empty()) {
      if (auto found = launch::find_program(command.front(), environment); !found)
        return refuse(found.error().message());
      auto who = launch::sudo_user(environment);
      if (!who) return refuse(who.error().message());
      as = *who;
    }

    record::RecordSetup setup;
    setup.path = output_;
    setup.force = force_;
    setup.interval_ns = flags_.interval_ns;
    setup.duration_ns = duration_ns_;
    setup.command = command;
    setup.scope = command.empty() ? monitor::describe(*scope) : "tree of " + command.front();
    setup.collect = collect_options();
    setup.python_interval_ns = no_stacks_ ? 0 : record::kRecordPythonIntervalNs;
    setup.notice = [](const std::string& n) { fmt::print(stderr, "dltune record: {}\n", n); };
    auto session = record::RecordSession::create(setup);
    if (!session) return refuse(session.error().message());
    // Which Slurm job this is, for `dltune slurm efficiency JOB --recording FILE`.
    if (!flags_.slurm_job.empty())
      (*session)->add_document("slurm", {{"job_id", flags_.slurm_job}, {"cgroup", scope->cgroup}});
    host::Root root;
    if (!command.empty()) return record_command(**session, root, command, environment, as);

    monitor::raise_open_file_limit();
    auto done = record::record_until_stopped(
        **session, root, flags_.sampler_options(*scope, flags_.interval_ns), quiet_, [&] {
          if (!quiet_)
            fmt::print(stderr, "dltune record: recording {} to {} every {}; ^C to stop\n",
                       monitor::describe(*scope), output_,
                       text::format_duration_ns(flags_.interval_ns));
        });
    if (!done) return refuse(done.error().message());
    return *done ? kExitOk : kExitFailure;
  }

 private:
  int record_command(record::RecordSession& session, const host::Root& root,
                     const std::vector<std::string>& command,
                     const std::map<std::string, std::string>& environment,
                     const std::optional<launch::Credentials>& as) {
    launch::SpawnRequest req;
    req.argv = command;
    req.env = environment;
    req.as = as;
    auto result =
        record::record_job(session, root, req, flags_.sampler_options({}, flags_.interval_ns));
    if (!result) {
      // The job never started: no recording is left behind (bad input changes nothing).
      session.discard(root);
      return refuse(result.error().message());
    }
    const bool ok = session.finish(root, result->exit_code, quiet_);
    if (!ok && result->exit_code == 0) return kExitFailure;
    return result->exit_code;
  }

  int replay() {
    if (!output_.empty() || global_.after_dashdash || !sub_->remaining().empty())
      return refuse("--replay reads a recording: -o and a COMMAND do not go with it");
    auto recording = store::Recording::open(replay_);
    if (!recording) return refuse(recording.error().message());
    std::size_t index = 0;
    if (at_ns_) {
      auto at = (*recording)->index_after(*at_ns_);
      if (!at) return refuse(at.error().message());
      index = *at;
    }
    tui::TopSettings s;
    s.once = once_;
    s.title = fmt::format("{}  {}  (recorded)", (*recording)->info().hostname,
                          (*recording)->info().scope);
    if (!sort_.empty()) s.sort = *tui::parse_sort(sort_);
    return top_exit_status(tui::top_replay(**recording, index, s), "dltune record --replay");
  }

  GlobalOptions& global_;
  SamplingFlags flags_;
  std::string output_, replay_, sort_;
  std::optional<std::int64_t> duration_ns_, at_ns_;
  bool force_ = false, once_ = false, quiet_ = false, no_stacks_ = false;
};

}  // namespace

std::unique_ptr<Command> make_record_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<RecordCommand>(app, global);
}

}  // namespace dltune::cli

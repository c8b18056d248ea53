// `dltune record`: samples into a SQLite recording, and `--replay` to look at one.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "core/text.hpp"
#include "options/options.hpp"
#include "record/record_command.hpp"
#include "tui/top.hpp"

namespace dltune::cli {

namespace {

class RecordCommand : public Command {
 public:
  RecordCommand(CLI::App& app, GlobalOptions& global) : Command(app, "record"), global_(global) {
    options::add_value(*sub_, "-o,--output", choices_.output);
    options::add_flag(*sub_, "--force", choices_.force);
    flags_.add_to(*sub_);
    options::add_duration(*sub_, "--duration", choices_.duration_ns, 10'000'000,
                          3650 * 86'400'000'000'000);
    options::add_value(*sub_, "--replay", replay_);
    options::add_duration(*sub_, "--at", at_ns_, 0, 3650 * 86'400'000'000'000);
    options::add_flag(*sub_, "--once", once_);
    options::add_choice(*sub_, "--sort", sort_, tui::sort_names());
    options::add_flag(*sub_, "-q,--quiet", choices_.quiet);
    options::add_flag(*sub_, "--no-stacks", no_stacks_);
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after -- (or after the last option).");
  }

  int execute() override {
    if (!replay_.empty()) return replay();
    auto job = options::job_command(sub_->remaining(), global_.after_dashdash, "record");
    if (!job) return refuse(job.error().message());
    if (at_ns_ || once_ || !sort_.empty())
      return refuse(
          fmt::format("{} goes with --replay", at_ns_ ? "--at" : (once_ ? "--once" : "--sort")));
    choices_.command = std::move(*job);
    choices_.pid = flags_.pid;
    choices_.cgroup = flags_.cgroup;
    choices_.slurm_job = flags_.slurm_job;
    choices_.interval_ns = flags_.interval_ns;
    choices_.gpus = !flags_.no_gpus;
    choices_.python_stacks = !no_stacks_;
    record::RecordContext context;
    context.environment = process_environment();
    context.nvml_library = collect_options().nvml_library;
    context.notice = [this](const std::string& n) { say(n); };
    context.started = [this](const std::string& scope) {
      if (!choices_.quiet)
        say(fmt::format("recording {} to {} every {}; ^C to stop", scope, choices_.output,
                        text::format_duration_ns(flags_.interval_ns)));
    };
    auto recorded = record::record_command(host::Root(), choices_, context);
    if (!recorded) return failed(recorded.error());
    return *recorded;
  }

 private:
  int replay() {
    if (!choices_.output.empty() || global_.after_dashdash || !sub_->remaining().empty())
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
  record::RecordChoices choices_;
  std::string replay_, sort_;
  std::optional<std::int64_t> at_ns_;
  bool once_ = false, no_stacks_ = false;
};

}  // namespace

std::unique_ptr<Command> make_record_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<RecordCommand>(app, global);
}

}  // namespace dltune::cli

#include "record/record_command.hpp"

#include "core/local_file.hpp"
#include "inventory/host_facts.hpp"
#include "launch/spawn.hpp"
#include "monitor/scope.hpp"
#include "record/recorded_run.hpp"

namespace dltune::record {

tl::expected<int, Failure> record_command(const host::Root& root, const RecordChoices& choices,
                                          const RecordContext& context) {
  if (choices.output.empty()) return refused("-o FILE: where to write the recording is required");
  auto scope = monitor::scope_for(root, choices.pid, choices.cgroup, choices.slurm_job,
                                  monitor::Scope::Kind::kNone);
  if (!scope) return refused(scope.error());
  const auto& command = choices.command;
  if (!command.empty() && scope->kind != monitor::Scope::Kind::kNone)
    return refused("give a COMMAND or --pid/--cgroup/--slurm-job, not both");
  const auto target = local_file::output_target(choices.output, choices.force);
  if (!target) return refused("-o: " + target.error().message());
  if (*target == "-") return refused("-o -: a recording is a SQLite file, not a stream");
  launch::SpawnRequest job;
  if (!command.empty()) {
    if (auto found = launch::find_program(command.front(), context.environment); !found)
      return refused(found.error());
    auto who = launch::sudo_user(context.environment);
    if (!who) return refused(who.error());
    job.argv = command;
    job.env = context.environment;
    job.as = *who;
  }

  RecordSetup setup;
  setup.path = *target;
  setup.force = choices.force;
  setup.interval_ns = choices.interval_ns;
  setup.duration_ns = choices.duration_ns;
  setup.command = command;
  setup.scope = command.empty() ? monitor::describe(*scope) : "tree of " + command.front();
  setup.collect.nvml_library = context.nvml_library;
  setup.python_interval_ns = choices.python_stacks ? kRecordPythonIntervalNs : 0;
  setup.notice = context.notice;
  auto session = RecordSession::create(setup);
  if (!session) return refused(session.error());
  // Which Slurm job this is, for `dltune slurm efficiency JOB --recording FILE`.
  if (!choices.slurm_job.empty())
    (*session)->add_document("slurm", {{"job_id", choices.slurm_job}, {"cgroup", scope->cgroup}});
  if (!command.empty()) {
    auto result = record_job(
        **session, root, job,
        monitor::sampler_options({}, choices.interval_ns, choices.gpus, context.nvml_library));
    if (!result) {
      // The job never started: no recording is left behind (bad input changes nothing).
      (*session)->discard(root);
      return refused(result.error());
    }
    const bool ok = (*session)->finish(root, result->exit_code, choices.quiet);
    return !ok && result->exit_code == 0 ? 1 : result->exit_code;
  }
  monitor::raise_open_file_limit();
  auto done = record_until_stopped(
      **session, root,
      monitor::sampler_options(*scope, choices.interval_ns, choices.gpus, context.nvml_library),
      choices.quiet, [&] {
        if (context.started) context.started(monitor::describe(*scope));
      });
  if (!done) return refused(done.error());
  return *done ? 0 : 1;
}

}  // namespace dltune::record

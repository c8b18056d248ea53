#include "record/recorded_run.hpp"

#include <unistd.h>

#include "core/json.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::record {

tl::expected<launch::RunSummary, launch::RunFailure> run_recorded(const host::Root& root,
                                                                  const inventory::HostFacts& facts,
                                                                  launch::RunRequest request,
                                                                  const JobRecording& recording,
                                                                  const launch::JobHooks& hooks) {
  std::unique_ptr<RecordSession> session;
  const auto command = request.options.command;
  launch::JobHooks own;
  bool ranks = false;
  own.planned = [&](const launch::JobPlan& plan) -> Result<void> {
    ranks = !plan.ranks.empty();
    RecordSetup setup = recording.setup;
    if (setup.scope.empty()) setup.scope = "run " + plan.name;
    if (setup.command.empty()) setup.command = command;
    auto s = RecordSession::create(setup);
    if (!s) return fail("recording: " + s.error().message(), "");
    session = std::move(*s);
    if (hooks.planned) return hooks.planned(plan);
    return {};
  };
  own.started = [&](pid_t pid) {
    auto options = recording.sampler;
    options.scope = monitor::Scope{};
    options.scope.kind = monitor::Scope::Kind::kTree;
    options.scope.pid = pid;
    // The ranks of `run --nproc N` are dltune's children, not rank 0's: the job is its group,
    // the one above rank 0's ("/dltune/NAME/rank-0"), whose processes are its ranks'.
    if (ranks)
      if (auto group = monitor::CgroupCollector::group_of(root, pid);
          group && group->ends_with("/rank-0")) {
        options.scope.kind = monitor::Scope::Kind::kCgroup;
        options.scope.cgroup = group->substr(0, group->size() - std::string_view("/rank-0").size());
      }
    if (auto ok = session->start(root, options); !ok && recording.setup.notice)
      recording.setup.notice("the recording could not sample the job: " + ok.error().message());
    if (hooks.started) hooks.started(pid);
  };
  own.ended = [&] {
    session->stop();
    if (hooks.ended) hooks.ended();
  };
  auto summary = launch::run_job(root, facts, std::move(request), own);
  if (!summary) {
    // Nothing is left behind when the job could not run: not even the empty recording.
    if (session) {
      if (summary.error().stage == launch::RunFailure::Stage::kStart)
        session->finish(root, std::nullopt, true);
      session.reset();
      ::unlink(recording.setup.path.c_str());
    }
    return summary;
  }
  // With the summary, for compare and report (the job's it/s, OOM kills).
  session->add_document("summary", launch::to_json(*summary));
  add_output_events(*session, summary->result.output_events);
  session->finish(root, summary->result.exit_code, recording.quiet);
  return summary;
}

JobRecording job_recording(const std::string& path, bool force, std::int64_t interval_ns,
                           const inventory::CollectOptions& collect,
                           monitor::SamplerOptions sampler, bool quiet,
                           std::function<void(const std::string&)> notice) {
  JobRecording recording;
  recording.setup.path = path;
  recording.setup.force = force;
  recording.setup.interval_ns = interval_ns;
  recording.setup.collect = collect;
  recording.setup.python_interval_ns = kRecordPythonIntervalNs;
  recording.setup.notice = std::move(notice);
  recording.sampler = std::move(sampler);
  recording.quiet = quiet;
  return recording;
}

tl::expected<launch::RunSummary, launch::RunFailure> run_with_facts(
    launch::RunRequest request, const std::optional<JobRecording>& recording,
    inventory::CollectOptions collect) {
  const host::Root root;
  collect.launch_only = true;
  collect.network = true;
  collect.gpus = request.options.gpus.has_value();
  const auto facts = inventory::collect(root, collect);
  return recording ? run_recorded(root, facts, std::move(request), *recording)
                   : launch::run_job(root, facts, std::move(request));
}

Result<RecordingPlace> RecordingPlace::make(const std::string& file, const std::string& prefix) {
  RecordingPlace place;
  if (file.empty()) {
    auto made = local_file::TempDirectory::make(prefix);
    if (!made) return tl::unexpected(made.error());
    place.temp_.emplace(std::move(*made));
    place.path_ = place.temp_->path() + "/job.db";
    return place;
  }
  auto target = local_file::output_target(file, false);
  if (!target) return fail("--record: " + target.error().message());
  if (*target == "-") return fail("--record -: a recording is a SQLite file, not a stream");
  place.path_ = *target;
  return place;
}

}  // namespace dltune::record

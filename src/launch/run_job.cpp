#include "launch/run_job.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "launch/cgroup.hpp"
#include "launch/kernel_log.hpp"
#include "launch/slurm_step.hpp"
#include "launch/spawn.hpp"

namespace dltune::launch {

namespace {

tl::unexpected<RunFailure> failure(RunFailure::Stage stage, Error error) {
  return tl::unexpected(RunFailure{stage, std::move(error)});
}

}  // namespace

tl::expected<RunSummary, RunFailure> run_job(const host::Root& root,
                                             const inventory::HostFacts& facts, RunRequest request,
                                             const JobHooks& hooks) {
  using Stage = RunFailure::Stage;
  auto plan = plan_job(root, facts, request.options, request.environment,
                       request.profile ? &*request.profile : nullptr, request.unique);
  if (!plan) return failure(Stage::kRefused, plan.error());
  std::optional<Credentials> as;
  if (!request.keep_root) {
    auto who = sudo_user(request.environment);
    if (!who) return failure(Stage::kRefused, who.error());
    as = *who;
  }
  if (::geteuid() != 0)
    return failure(Stage::kRefused,
                   Error{"creating the job's cgroup needs root: run it with sudo (the job itself "
                         "then runs as you); nothing was started",
                         "", 0});
  if (hooks.planned)
    if (auto ok = hooks.planned(*plan); !ok) return failure(Stage::kRefused, ok.error());
  auto layout = host::cgroup_layout(root);
  if (!layout) return failure(Stage::kSetUp, layout.error());
  // Inside a Slurm step the job's groups go inside the step's (docs/slurm.md).
  auto step = find_slurm_step(root, *layout);
  if (!step) return failure(Stage::kSetUp, step.error());
  auto cg = create_job_cgroup(root, *layout, plan->name, plan->limits,
                              *step ? (*step)->place : CgroupPlace{});
  if (!cg) return failure(Stage::kSetUp, cg.error());
  RunSummary summary;
  summary.slurm = *step;
  summary.cgroup_version = layout->version;
  summary.cgroup_dirs = (*cg)->directories();
  if (auto back = (*cg)->read_back()) summary.verified = *back;
  if (as) {
    summary.user = as->user;
    plan->env["HOME"] = as->home;
    plan->env["USER"] = as->user;
    plan->env["LOGNAME"] = as->user;
  }
  SpawnRequest req;
  req.argv = plan->argv;
  req.env = plan->env;
  req.as = as;
  req.cgroup_procs = (*cg)->procs_files();
  req.cpus = plan->cpus;
  req.limits = plan->rlimits;
  req.watch_stdout = request.watch_stdout;
  req.rate_regex = request.rate_regex;
  req.output_fd = request.output_fd;
  req.stdout_to_stderr = request.stdout_to_stderr;
  if (hooks.started) req.on_start = hooks.started;
  OomWatch oom_watch(root);  // opened before the job starts: only its own OOM kills
  auto result = spawn_and_wait(req);
  if (hooks.ended) hooks.ended();  // before the cgroup goes
  summary.stats = (*cg)->stats();
  summary.oom_victims = oom_watch.victims(plan->name);
  auto removed = (*cg)->remove();
  if (!result) return failure(Stage::kStart, result.error());
  summary.plan = std::move(*plan);
  summary.result = *result;
  if (!removed)
    summary.result.warnings.push_back("the cgroup could not be removed: " +
                                      removed.error().message());
  return summary;
}

Result<std::regex> compile_rate_regex(const std::string& pattern) {
  try {
    std::regex rate(pattern, std::regex::ECMAScript);
    if (rate.mark_count() < 1)
      return fail("--rate-regex " + pattern + ": expected a group, e.g. '([0-9.]+) img/s'");
    return rate;
  } catch (const std::regex_error& e) {
    return fail(fmt::format("--rate-regex {}: {}", pattern, e.what()));
  }
}

}  // namespace dltune::launch

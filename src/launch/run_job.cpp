#include "launch/run_job.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "launch/cgroup.hpp"
#include "launch/cpu_latency.hpp"
#include "launch/job_interrupts.hpp"
#include "launch/kernel_log.hpp"
#include "launch/slurm_step.hpp"
#include "launch/spawn.hpp"

namespace dltune::launch {

namespace {

tl::unexpected<RunFailure> failure(RunFailure::Stage stage, Error error) {
  return tl::unexpected(RunFailure{stage, std::move(error)});
}

// A port nothing listens on now, for the ranks' rendezvous (MASTER_PORT): torchrun --standalone
// picks one the same way, binding port 0 and closing it.
Result<std::string> free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("cannot find a free port for MASTER_PORT", "", errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return fail("cannot find a free port for MASTER_PORT", "", err);
  return std::to_string(ntohs(a.sin_port));
}

// The ranks of `run --nproc N`: a group of its own for each inside the job's, started together,
// a failed one stopping the others; `summary` gets the job's end and each rank's.
tl::expected<void, RunFailure> run_ranks(const host::Root& root, const RunRequest& request,
                                         const JobHooks& hooks, JobPlan plan,
                                         std::unique_ptr<JobCgroup> cg,
                                         const std::optional<Credentials>& as,
                                         RunSummary& summary) {
  using Stage = RunFailure::Stage;
  std::vector<std::unique_ptr<JobCgroup>> groups;
  const auto remove_all = [&] {
    std::optional<Error> first;
    for (auto& g : groups)
      if (auto ok = g->remove(); !ok && !first) first = ok.error();
    if (auto ok = cg->remove(); !ok && !first) first = ok.error();
    return first;
  };
  for (const auto& r : plan.ranks) {
    CgroupLimits own;
    own.cpus = text::format_cpu_list(r.cpus);
    if (!r.numa_nodes.empty()) own.mems = text::format_cpu_list(r.numa_nodes);
    auto g = cg->create_child(fmt::format("rank-{}", r.rank), own, {});
    if (!g) {
      (void)remove_all();
      return tl::unexpected(RunFailure{Stage::kSetUp, g.error()});
    }
    groups.push_back(std::move(*g));
  }
  if (!plan.env.count("MASTER_PORT")) {
    auto port = free_port();
    if (!port) {
      (void)remove_all();
      return tl::unexpected(RunFailure{Stage::kSetUp, port.error()});
    }
    plan.env["MASTER_PORT"] = *port;
  }
  summary.master_port = plan.env["MASTER_PORT"];
  std::vector<SpawnRequest> requests;
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
    const auto& r = plan.ranks[i];
    SpawnRequest req;
    req.argv = plan.argv;
    req.env = plan.env;
    for (const auto& [k, v] : r.env) req.env[k] = v;
    req.as = as;
    req.cgroup_procs = groups[i]->procs_files();
    req.cpus = r.cpus;
    req.limits = plan.rlimits;
    req.watch_stdout = request.watch_stdout;
    req.rate_regex = request.rate_regex;
    req.output_fd = request.output_fd;
    req.stdout_to_stderr = request.stdout_to_stderr;
    requests.push_back(std::move(req));
  }
  GroupOptions options;
  if (hooks.started)
    options.on_start = [&](const std::vector<pid_t>& pids) { hooks.started(pids.front()); };
  OomWatch oom_watch(root);
  auto result = spawn_group_and_wait(requests, options);
  if (hooks.ended) hooks.ended();
  summary.stats = cg->stats();
  summary.oom_victims = oom_watch.victims(plan.name);
  if (result) {
    auto& job = summary.result;
    for (std::size_t i = 0; i < result->members.size(); ++i) {
      const auto& m = result->members[i];
      RankSummary rs;
      rs.rank = plan.ranks[i].rank;
      rs.cpus = plan.ranks[i].cpus;
      rs.numa_nodes = plan.ranks[i].numa_nodes;
      rs.gpu = plan.ranks[i].gpu;
      rs.result = m.result;
      rs.stopped = m.stopped;
      rs.stats = groups[i]->stats();
      if (const auto dirs = groups[i]->directories(); !dirs.empty()) rs.cgroup_dir = dirs.front();
      job.user_seconds += m.result.user_seconds;
      job.system_seconds += m.result.system_seconds;
      job.max_rss_bytes = std::max(job.max_rss_bytes, m.result.max_rss_bytes);
      for (const auto& w : m.result.warnings)
        if (std::find(job.warnings.begin(), job.warnings.end(), w) == job.warnings.end())
          job.warnings.push_back(w);
      summary.ranks.push_back(std::move(rs));
    }
    job.pid = result->members.front().result.pid;
    job.progress = result->members.front().result.progress;
    job.wall = result->wall;
    job.forwarded_signals = result->forwarded_signals;
    job.received_signals = result->received_signals;
    job.output_events = result->output_events;
    if (result->first_failure) {
      const auto& failed = result->members[*result->first_failure].result;
      summary.failed_rank = plan.ranks[*result->first_failure].rank;
      job.exit_code = failed.exit_code;
      job.signal = failed.signal;
    }
  }
  const auto removed = remove_all();
  if (!result) return tl::unexpected(RunFailure{Stage::kStart, result.error()});
  summary.plan = std::move(plan);
  if (removed)
    summary.result.warnings.push_back("the cgroup could not be removed: " + removed->message());
  return {};
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
  // The CPU wake-up latency the profile asks for, held until the job (every rank) has ended;
  // one that cannot be held is said in the summary, and the job runs anyway.
  std::optional<CpuLatencyHold> latency;
  std::optional<std::string> latency_failed;
  if (plan->cpu_latency_us && root.live()) {
    auto held = CpuLatencyHold::hold(*plan->cpu_latency_us);
    if (held)
      latency.emplace(std::move(*held));
    else
      latency_failed = fmt::format("cpu.latency_us {} µs was not held: {}", *plan->cpu_latency_us,
                                   held.error().message());
  }
  RunSummary summary;
  {
    // The job's own variables against this host, with the CPUs it was given.
    audit::EnvJob job;
    if (plan->cpus) job.cpus = static_cast<unsigned>(plan->cpus->size());
    summary.environment = audit::judge_environment(plan->env, facts, job);
  }
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
  // The device interrupts the job's CPUs handle while it runs, when it is bound to CPUs.
  std::vector<int> job_cpus = plan->cpus.value_or(std::vector<int>{});
  for (const auto& rank : plan->ranks)
    job_cpus.insert(job_cpus.end(), rank.cpus.begin(), rank.cpus.end());
  std::sort(job_cpus.begin(), job_cpus.end());
  job_cpus.erase(std::unique(job_cpus.begin(), job_cpus.end()), job_cpus.end());
  const InterruptWatch interrupts(root, std::move(job_cpus));
  if (!plan->ranks.empty()) {
    auto ranks = run_ranks(root, request, hooks, std::move(*plan), std::move(*cg), as, summary);
    if (!ranks) return tl::unexpected(ranks.error());
    summary.interrupts = interrupts.finish();
    if (latency_failed) summary.result.warnings.push_back(*latency_failed);
    return summary;
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
  summary.interrupts = interrupts.finish();
  summary.stats = (*cg)->stats();
  summary.oom_victims = oom_watch.victims(plan->name);
  auto removed = (*cg)->remove();
  if (!result) return failure(Stage::kStart, result.error());
  summary.plan = std::move(*plan);
  summary.result = *result;
  if (!removed)
    summary.result.warnings.push_back("the cgroup could not be removed: " +
                                      removed.error().message());
  if (latency_failed) summary.result.warnings.push_back(*latency_failed);
  return summary;
}

Result<RatePattern> compile_rate_regex(const std::string& pattern) {
  auto rate = RatePattern::compile(pattern);
  if (!rate) return fail(fmt::format("--rate-regex {}: {}", pattern, rate.error().message()));
  if (rate->groups() < 1)
    return fail("--rate-regex " + pattern + ": expected a group, e.g. '([0-9.]+) img/s'");
  return rate;
}

}  // namespace dltune::launch

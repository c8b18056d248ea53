#include "monitor/scope.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "host/cgroup.hpp"

namespace dltune::monitor {

Result<Scope> scope_for(const host::Root& root, pid_t pid, const std::string& cgroup,
                        Scope::Kind otherwise) {
  Scope s;
  if (pid > 0 && !cgroup.empty())
    return fail("give one of --pid and --cgroup, not both", "--pid/--cgroup");
  if (pid > 0) {
    if (::kill(pid, 0) != 0 && errno == ESRCH)
      return fail("no such process", fmt::format("--pid {}", pid));
    s.kind = Scope::Kind::kTree;
    s.pid = pid;
    return s;
  }
  if (!cgroup.empty()) {
    if (cgroup[0] != '/' || cgroup.find("..") != std::string::npos)
      return fail("expected an absolute cgroup path as /proc/PID/cgroup shows it (/dltune/run-1)",
                  "--cgroup " + cgroup);
    // Found now, before anything is written or shown.
    if (auto c = CgroupCollector::open(root, cgroup); !c)
      return fail("no such cgroup in any mounted hierarchy", "--cgroup " + cgroup);
    s.kind = Scope::Kind::kCgroup;
    s.cgroup = cgroup;
    return s;
  }
  s.kind = otherwise;
  return s;
}

Result<std::string> slurm_job_cgroup(const host::Root& root, const std::string& job_id) {
  const auto named = "--slurm-job " + job_id;
  if (job_id.empty() || job_id.size() > 18 ||
      !std::all_of(job_id.begin(), job_id.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return fail("expected a job id (a whole number, as squeue shows it)", named);
  auto layout = host::cgroup_layout(root);
  if (!layout) return tl::unexpected(layout.error());
  auto jobs = host::discover_slurm_jobs(root, *layout);
  if (!jobs) return tl::unexpected(jobs.error());
  std::vector<std::string> here;
  for (const auto& j : *jobs) {
    if (j.job_id == job_id) return j.path;
    here.push_back(j.job_id);
  }
  if (here.empty()) return fail("no such job on this node: no Slurm job has a cgroup here", named);
  return fail(fmt::format("no such job on this node (its Slurm jobs: {})", fmt::join(here, ", ")),
              named);
}

std::string describe(const Scope& scope) {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  const std::string hostname = host;
  switch (scope.kind) {
    case Scope::Kind::kTree:
      return fmt::format("{}  pid {} and its tree", hostname, scope.pid);
    case Scope::Kind::kCgroup:
      return fmt::format("{}  cgroup {}", hostname, scope.cgroup);
    case Scope::Kind::kAll:
      return fmt::format("{}  all processes", hostname);
    case Scope::Kind::kNone:
      break;
  }
  return fmt::format("{}  host", hostname);
}

SamplerOptions sampler_options(const Scope& scope, std::int64_t interval_ns, bool gpus,
                               const std::string& nvml_library) {
  SamplerOptions o;
  o.scope = scope;
  o.gpus = gpus;
  o.nvml_library = nvml_library;
  o.gpu_interval_ns = std::max<std::int64_t>(interval_ns, 1'000'000'000);
  // The context switches (/proc/PID/status, a process's costliest file) feed one signal only,
  // the main thread's involuntary switches (diagnose): read for the main process and the ranks.
  o.process_detail.switches_of_main_and_ranks_only = true;
  // A job's threads change rarely; listing each member's task directory is a tenth of a 10 Hz
  // sample's cost (bench/README.md): about once a second, the children of known threads every
  // sample.
  o.process_detail.threads_every = samples_a_second(interval_ns);
  // A process that has not run since its last reading (most of a host's, and a job's idle
  // helpers) keeps it: its schedstat says so, and is cheaper than its stat and io.
  o.process_detail.unchanged_every = samples_a_second(interval_ns);
  // A job's group counted about once a second when it holds many processes: a shared group's
  // list costs in proportion to its size (a host's root group: every process).
  o.group_count_every = samples_a_second(interval_ns);
  return o;
}

Result<Scope> scope_for(const host::Root& root, pid_t pid, const std::string& cgroup,
                        const std::string& slurm_job, Scope::Kind otherwise) {
  if (slurm_job.empty()) return scope_for(root, pid, cgroup, otherwise);
  if (pid > 0 || !cgroup.empty())
    return fail("give one of --pid, --cgroup and --slurm-job", "--slurm-job");
  auto group = slurm_job_cgroup(root, slurm_job);
  if (!group) return tl::unexpected(group.error());
  return scope_for(root, 0, *group, otherwise);
}

void raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

}  // namespace dltune::monitor

// SamplingFlags (cli/sampling_options.hpp).
#include "cli/sampling_options.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "options/options.hpp"

namespace dltune::cli {

void SamplingFlags::add_to(CLI::App& app) {
  options::add_integer(app, "--pid", pid, 1, options::kMaxPid, "PID");
  options::add_value(app, "--cgroup", cgroup);
  options::add_value(app, "--slurm-job", slurm_job);
  options::add_duration(app, "--interval", interval_ns, 10'000'000, 3'600'000'000'000);
  options::add_flag(app, "--no-gpus", no_gpus);
}

Result<monitor::Scope> SamplingFlags::scope(monitor::Scope::Kind otherwise) const {
  const host::Root root;
  if (slurm_job.empty()) return monitor::scope_for(root, pid, cgroup, otherwise);
  if (pid > 0 || !cgroup.empty())
    return fail("give one of --pid, --cgroup and --slurm-job", "--slurm-job");
  auto group = monitor::slurm_job_cgroup(root, slurm_job);
  if (!group) return tl::unexpected(group.error());
  return monitor::scope_for(root, 0, *group, otherwise);
}

monitor::SamplerOptions SamplingFlags::sampler_options(const monitor::Scope& scope,
                                                       std::int64_t interval_ns) const {
  return cli::sampler_options(scope, interval_ns, !no_gpus);
}

monitor::SamplerOptions sampler_options(const monitor::Scope& scope, std::int64_t interval_ns,
                                        bool gpus) {
  auto o = monitor::sampler_options(scope, interval_ns, gpus, collect_options().nvml_library);
  // The context switches (/proc/PID/status, a process's costliest file) feed one signal only,
  // the main thread's involuntary switches (diagnose): read for the main process and the ranks.
  o.process_detail.switches_of_main_and_ranks_only = true;
  // A job's threads change rarely; listing each member's task directory is a tenth of a 10 Hz
  // sample's cost (bench/README.md): about once a second, the children of known threads every
  // sample.
  o.process_detail.threads_every = monitor::samples_a_second(interval_ns);
  // A process that has not run since its last reading (most of a host's, and a job's idle
  // helpers) keeps it: its schedstat says so, and is cheaper than its stat and io.
  o.process_detail.unchanged_every = monitor::samples_a_second(interval_ns);
  // A job's group counted about once a second when it holds many processes: a shared group's
  // list costs in proportion to its size (a host's root group: every process).
  o.group_count_every = monitor::samples_a_second(interval_ns);
  return o;
}

record::JobRecording job_recording(const std::string& path, bool force, std::int64_t interval_ns,
                                   bool gpus, bool quiet, const std::string& who) {
  record::JobRecording recording;
  recording.setup.path = path;
  recording.setup.force = force;
  recording.setup.interval_ns = interval_ns;
  recording.setup.collect = collect_options();
  recording.setup.python_interval_ns = kRecordPythonIntervalNs;
  recording.setup.notice = [who](const std::string& n) { fmt::print(stderr, "{}: {}\n", who, n); };
  recording.sampler = sampler_options({}, interval_ns, gpus);
  recording.quiet = quiet;
  return recording;
}

}  // namespace dltune::cli

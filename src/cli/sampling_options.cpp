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
  return monitor::scope_for(host::Root(), pid, cgroup, slurm_job, otherwise);
}

monitor::SamplerOptions SamplingFlags::sampler_options(const monitor::Scope& scope,
                                                       std::int64_t interval_ns) const {
  return cli::sampler_options(scope, interval_ns, !no_gpus);
}

monitor::SamplerOptions sampler_options(const monitor::Scope& scope, std::int64_t interval_ns,
                                        bool gpus) {
  return monitor::sampler_options(scope, interval_ns, gpus, collect_options().nvml_library);
}

record::JobRecording job_recording(const std::string& path, bool force, std::int64_t interval_ns,
                                   bool gpus, bool quiet, const std::string& who) {
  return record::job_recording(
      path, force, interval_ns, collect_options(), sampler_options({}, interval_ns, gpus), quiet,
      [who](const std::string& n) { fmt::print(stderr, "{}: {}\n", who, n); });
}

}  // namespace dltune::cli

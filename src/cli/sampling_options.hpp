#pragma once
// Options that `top` and `record` share: what to sample and how often.
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "monitor/scope.hpp"
#include "record/recorded_run.hpp"

namespace CLI {
class App;
}

namespace dltune::cli {

struct SamplingFlags {
  pid_t pid = 0;
  std::string cgroup;
  std::string slurm_job;                     // --slurm-job: the job's cgroup on this node
  std::int64_t interval_ns = 1'000'000'000;  // --interval, 10ms to 1h
  bool no_gpus = false;

  // --pid, --cgroup, --slurm-job, --interval and --no-gpus, with the command's own help for
  // each.
  void add_to(CLI::App& app);
  // The scope: --pid, --cgroup, --slurm-job (its cgroup) or `otherwise`, checked
  // (monitor::scope_for).
  [[nodiscard]] Result<monitor::Scope> scope(monitor::Scope::Kind otherwise) const;
  [[nodiscard]] monitor::SamplerOptions sampler_options(const monitor::Scope& scope,
                                                        std::int64_t interval_ns) const;
};

// monitor::sampler_options with DLTUNE_NVML_LIBRARY.
[[nodiscard]] monitor::SamplerOptions sampler_options(const monitor::Scope& scope,
                                                      std::int64_t interval_ns, bool gpus);

// record::job_recording with the host facts env collects, NVML unless !gpus, notices on stderr
// as "WHO: ...".
[[nodiscard]] record::JobRecording job_recording(const std::string& path, bool force,
                                                 std::int64_t interval_ns, bool gpus, bool quiet,
                                                 const std::string& who);

}  // namespace dltune::cli

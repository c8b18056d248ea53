#pragma once
// The training environment's variables judged against the host they run on: NCCL's, CUDA's and
// PyTorch's, and the thread counts. check judges its own shell's (env.training), profile a
// running job's (/proc/PID/environ), run the job's it starts. Each problem says what the
// variable does, why it matters for training, and the fix.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "audit/finding.hpp"
#include "inventory/host_facts_fwd.hpp"

namespace dltune::audit {

struct EnvProblem {
  std::string variable;  // "NCCL_DEBUG"
  std::string value;     // as set
  Severity severity = Severity::kWarn;
  std::string summary;  // "NCCL_DEBUG=INFO is set: every rank logs each connection and call"
  std::string why;      // why it matters for training
  std::string fix;      // "unset NCCL_DEBUG (or NCCL_DEBUG=WARN)"
};

struct EnvJob {
  // Processes of the job on this host that each size their own thread pool (ranks); from
  // LOCAL_WORLD_SIZE when the environment says it, else 1.
  std::optional<unsigned> ranks;
  // The CPUs the job may use (its cpuset); the host's when unknown.
  std::optional<unsigned> cpus;
  // A directory with every link followed (host::Root::resolve), to match LD_LIBRARY_PATH's
  // directories with where inventory found the libraries; unset: compared as written.
  std::function<std::optional<std::string>(const std::string&)> resolve;
};

// The problems of `env` on the host `facts` describes; empty when there is none.
[[nodiscard]] std::vector<EnvProblem> judge_environment(
    const std::map<std::string, std::string>& env, const inventory::HostFacts& facts,
    const EnvJob& job = {});

// {"variable", "value", "severity", "summary", "why", "fix"}.
[[nodiscard]] inventory::Json to_json(const EnvProblem& p);
// "NCCL_DEBUG=INFO is left on: unset NCCL_DEBUG (or ...)": a problem on one line.
[[nodiscard]] std::string one_line(const EnvProblem& p);

// The variables judge_environment reads: those a report shows as "set" beside its problems.
[[nodiscard]] std::vector<std::string> training_variables(
    const std::map<std::string, std::string>& env);

}  // namespace dltune::audit

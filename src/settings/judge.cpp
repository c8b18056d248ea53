#include "settings/judge.hpp"
#include "inventory/host_facts.hpp"

#include <fmt/core.h>

namespace dltune::settings {

Finding judge(const ProfileEntry& entry, const char* area, const std::string& actual,
              std::vector<Evidence> evidence) {
  Finding f;
  f.id = entry.key;
  f.area = area;
  f.expected = entry.expected.text();
  f.actual = actual;
  f.evidence = std::move(evidence);
  f.reason = entry.reason;
  f.source = entry.source;
  if (entry.expected.matches(actual)) {
    f.severity = Severity::kOk;
    f.summary = fmt::format("{} is {}", entry.key, actual);
  } else {
    f.severity = severity_from(entry.severity).value_or(Severity::kWarn);
    if (entry.critical && !entry.critical->matches(actual)) f.severity = Severity::kCritical;
    f.summary = fmt::format("{} is {}, expected {}", entry.key, actual.empty() ? "unknown" : actual,
                            f.expected);
  }
  return f;
}

Finding not_applicable(const ProfileEntry& entry, const char* area, std::string why) {
  Finding f;
  f.id = entry.key;
  f.area = area;
  f.applicable = false;
  f.severity = Severity::kOk;
  f.summary = entry.key + ": not applicable: " + why;
  f.expected = entry.expected.text();
  f.reason = entry.reason;
  f.source = entry.source;
  return f;
}

Fix tune_fix(const std::string& key) {
  return Fix{"dltune tune apply --only " + key, true};
}

std::string apptainer_runtime(const CheckInput& in) {
  const auto& c = in.facts.os.container;
  if (!in.in_container || !c) return {};
  if (*c == "apptainer") return "Apptainer";
  if (*c == "singularity") return "Singularity";
  return {};
}

namespace {

// Apptainer and Singularity give a container the host's /dev (so its /dev/shm), /proc, /sys,
// $HOME and /tmp by default (Apptainer's user guide, "Bind Paths and Mounts"), its network unless
// started with --net ("Network virtualization"), and the limits of the process that started it;
// they have no flag for any of these. The fix is the host's, kept whole (a tune command's
// --persist and --data with it); `docker_flag` says which of Docker's flags it stands for.
void apptainer_advice(const std::string& name, Finding& f, const std::string& docker_flag) {
  const std::string action = f.fix ? f.fix->command : tune_fix(f.id).command;
  f.fix = Fix{"on the host: " + action, false};
  if (docker_flag.starts_with("docker run --shm-size")) {
    f.notes.push_back(name +
                      " binds the host's /dev/shm into its containers and has no --shm-size: the "
                      "host must enlarge it (for every job on the host)");
  } else if (docker_flag.starts_with("docker run --ulimit")) {
    // slurm.conf(5): PropagateResourceLimits (default ALL) gives the job the limits of the
    // shell it was submitted from; the limits it leaves out are slurmd's own.
    f.notes.push_back(name +
                      " sets no limits and has no --ulimit: its containers inherit the limits of "
                      "the shell or job that started them. Raise them on the host "
                      "(/etc/security/limits.d, then log in again); a Slurm job gets those of the "
                      "shell it was submitted from (PropagateResourceLimits in slurm.conf), and "
                      "slurmd's own for the limits that leaves out");
  } else if (docker_flag.starts_with("docker run --sysctl")) {
    f.notes.push_back(name +
                      " shares the host's network namespace unless started with --net, and has "
                      "no --sysctl: the host must set it");
  } else {
    f.notes.push_back("inside a container (" + name +
                      ") this is the host's setting: the host must change it");
  }
}

}  // namespace

void container_advice(const CheckInput& in, Finding& f, const std::string& runtime_flag) {
  if (!in.in_container || f.severity == Severity::kOk || !f.applicable) return;
  if (const auto name = apptainer_runtime(in); !name.empty()) {
    apptainer_advice(name, f, runtime_flag);
    return;
  }
  if (!runtime_flag.empty()) {
    f.fix = Fix{runtime_flag, false};
    f.notes.push_back(
        "inside a container: the container runtime sets it when the container starts");
  } else {
    // The action the host takes: tune's for a setting tune changes, else the finding's own
    // (a shell line, a kernel command line), never a tune command for an id tune cannot change.
    const std::string action = f.fix && !f.fix->by_dltune ? f.fix->command : tune_fix(f.id).command;
    f.fix = Fix{"on the host: " + action, false};
    f.notes.push_back("inside a container this is the host's setting: the host must change it");
  }
}

Severity worse(Severity a, Severity b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

}  // namespace dltune::settings

#pragma once
// Findings: what `dltune check` reports, one per profile key (or one per thing the key covers:
// a GPU, a file system). Each kind of setting judges its own keys (settings/judge.hpp); audit's
// checks judge the rest.
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"

namespace dltune::settings {

enum class Severity { kOk, kInfo, kWarn, kCritical };

[[nodiscard]] const char* severity_name(Severity s);  // "ok", "info", "warn", "critical"
[[nodiscard]] std::optional<Severity> severity_from(std::string_view name);

struct Evidence {
  std::string path;   // the file (or "nvml", "hwloc") the value was read from
  std::string value;  // what it said
};

struct Fix {
  std::string command;     // "dltune tune apply --only vm.swappiness", or a shell line
  bool by_dltune = false;  // `dltune tune` can apply it
};

struct Finding {
  std::string id;    // stable: the profile key ("vm.swappiness", "gpu.persistence")
  std::string area;  // "memory", "cpu", "storage", "network", "gpu", "limits", "kernel"
  Severity severity = Severity::kOk;
  bool applicable = true;  // false: the host has no such setting (reported, never a failure)
  std::string summary;     // one line: "vm.swappiness is 60, expected 10"
  std::string expected;    // Expected::text()
  std::string actual;      // the value found ("" when unknown)
  std::vector<Evidence> evidence;
  std::string reason;  // from the profile
  std::string source;
  std::optional<Fix> fix;
  std::vector<std::string> notes;  // overriding sysctl.d files, container advice, idle links...
  std::string origin;              // the profile setting it: ProfileEntry::origin_text()
  // Could not be judged (NVML did not answer, a file could not be read): the severity says what
  // is known (info), and unknown is never healthy: node-problem-detector is told "unknown", and
  // `slurm health` does not resume a node drained for this id while it stays unknown.
  bool unknown = false;
  // The severity the profile gives this setting when it is not met (its `severity`): what an
  // unknown finding might hide. Set by the audit for every finding.
  Severity stakes = Severity::kWarn;
};

[[nodiscard]] inventory::Json to_json(const Finding& f);

}  // namespace dltune::settings

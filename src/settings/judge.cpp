#include "settings/judge.hpp"

#include <fmt/format.h>

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

void container_advice(const CheckInput& in, Finding& f, const std::string& runtime_flag) {
  if (!in.in_container || f.severity == Severity::kOk || !f.applicable) return;
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

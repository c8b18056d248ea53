#include "settings/finding.hpp"
#include "core/json.hpp"

namespace dltune::settings {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kOk:
      return "ok";
    case Severity::kInfo:
      return "info";
    case Severity::kWarn:
      return "warn";
    case Severity::kCritical:
      return "critical";
  }
  return "?";
}

std::optional<Severity> severity_from(std::string_view name) {
  if (name == "ok") return Severity::kOk;
  if (name == "info") return Severity::kInfo;
  if (name == "warn") return Severity::kWarn;
  if (name == "critical") return Severity::kCritical;
  return std::nullopt;
}

inventory::Json to_json(const Finding& f) {
  inventory::Json j;
  j["id"] = f.id;
  j["area"] = f.area;
  j["severity"] = severity_name(f.severity);
  j["applicable"] = f.applicable;
  j["unknown"] = f.unknown;
  j["summary"] = f.summary;
  j["expected"] = f.expected;
  j["actual"] = f.actual;
  inventory::Json ev = inventory::Json::array();
  for (const auto& e : f.evidence)
    ev.push_back(inventory::Json{{"path", e.path}, {"value", e.value}});
  j["evidence"] = std::move(ev);
  j["reason"] = f.reason;
  j["source"] = f.source;
  if (f.fix)
    j["fix"] = inventory::Json{{"command", f.fix->command}, {"by_dltune", f.fix->by_dltune}};
  j["notes"] = f.notes;
  if (!f.origin.empty()) j["origin"] = f.origin;
  return j;
}

}  // namespace dltune::settings

// The resource limits new logins get (limits.nofile, limits.memlock): only persistent, through
// dltune's limits.d drop-in; `dltune run` gives a job its limits directly.
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"

namespace dltune::settings {

Result<void> plan_limits(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const std::string name = e.key.substr(std::string_view("limits.").size());
  const auto want = e.expected.values.empty() ? std::string() : e.expected.values.front();
  if (!context.persist) {
    item.status = PlanItem::Status::kNotTunable;
    item.summary =
        "limits are set for new logins: use --persist (limits.d), or start jobs with `dltune run`";
    return {};
  }
  context.persisted.limits[name] = want;
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} soft and hard {} for new logins", name, want);
  item.notes.push_back(
      "a running process keeps its limits: log in again (or restart the service) to get them");
  return {};
}

namespace {
// The limits /proc/self/limits gives in bytes (proc(5)).
const std::set<std::string> kByteLimits = {"as",      "core",     "data", "fsize",
                                           "memlock", "msgqueue", "rss",  "stack"};
}  // namespace

std::vector<Finding> check_limits(const CheckInput& in, const ProfileEntry& entry) {
  const std::string name = entry.key.substr(entry.key.find('.') + 1);  // "nofile"
  const auto it = in.facts.memory.limits.find(name);
  if (it == in.facts.memory.limits.end())
    return {not_applicable(entry, "limits", "/proc/self/limits does not say")};
  auto text_of = [](const std::optional<std::uint64_t>& v) {
    return v ? std::to_string(*v) : std::string("unlimited");
  };
  const std::string soft = text_of(it->second.soft), hard = text_of(it->second.hard);
  Finding s = judge(entry, "limits", soft, {});
  Finding h = judge(entry, "limits", hard, {});
  Finding f =
      judge(entry, "limits", soft, {{"/proc/self/limits", "soft " + soft + ", hard " + hard}});
  f.severity = worse(s.severity, h.severity);
  f.actual = "soft " + soft + ", hard " + hard;
  // The limits the kernel counts in bytes read in units ("soft 8 MiB"); actual keeps the numbers.
  const bool bytes = kByteLimits.count(name) > 0;
  auto shown = [&](const std::optional<std::uint64_t>& v) {
    return v && bytes ? text::human_bytes(*v) : text_of(v);
  };
  std::string expected = f.expected;
  if (bytes && entry.expected.kind == Expected::Kind::kAtLeast)
    if (auto n = text::to_uint(entry.expected.values.front()))
      expected = ">= " + text::human_bytes(*n);
  const std::string actual = "soft " + shown(it->second.soft) + ", hard " + shown(it->second.hard);
  f.summary = f.severity == Severity::kOk
                  ? fmt::format("{} is {}", entry.key, actual)
                  : fmt::format("{} is {}, expected {} for both", entry.key, actual, expected);
  if (f.severity != Severity::kOk) {
    f.fix = Fix{"dltune tune apply --persist --only " + entry.key, true};
    f.notes.push_back(
        "these are the limits of the process that ran dltune, which the jobs it "
        "starts inherit; limits.d changes take effect at the next login");
  }
  const std::string want = entry.expected.values.empty() ? "" : entry.expected.values[0];
  const std::string ulimit = want == "unlimited" ? "-1" : want + ":" + want;
  container_advice(in, f, "docker run --ulimit " + name + "=" + ulimit);
  return {f};
}

}  // namespace dltune::settings

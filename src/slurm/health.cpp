#include "slurm/health.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

#include <fmt/core.h>

#include "audit/host_check.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "core/watchdog.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "slurm/node.hpp"

namespace dltune::slurm {

namespace {

// A drain reason kept for ids that cannot be judged: ours (kReasonPrefix), and it says why.
constexpr std::string_view kNotJudgedPrefix = "dltune: not judged: ";

std::string short_name(const std::string& host) {
  return host.substr(0, host.find('.'));
}

}  // namespace

const char* action_name(HealthAction a) {
  switch (a) {
    case HealthAction::kNone:
      return "none";
    case HealthAction::kDrain:
      return "drain";
    case HealthAction::kUpdateReason:
      return "update-reason";
    case HealthAction::kResume:
      return "resume";
    case HealthAction::kKeepAdminDrain:
      return "keep-admin-drain";
    case HealthAction::kKeepUnknown:
      return "keep-unknown";
  }
  return "none";
}

HealthAction decide(const NodeState& node, bool healthy, const std::string& reason,
                    const std::string& unknown_reason) {
  if (node.drain() && !drained_by_dltune(node)) return HealthAction::kKeepAdminDrain;
  if (healthy && drained_by_dltune(node) && !unknown_reason.empty())
    return node.reason == unknown_reason ? HealthAction::kNone : HealthAction::kKeepUnknown;
  if (healthy) return drained_by_dltune(node) ? HealthAction::kResume : HealthAction::kNone;
  if (!node.drain()) return HealthAction::kDrain;
  return node.reason == reason ? HealthAction::kNone : HealthAction::kUpdateReason;
}

std::string drain_reason(const std::vector<settings::Finding>& failing, std::size_t max) {
  return audit::short_reason(failing, kReasonPrefix, max);
}

ReasonIds reason_ids(const std::string& reason) {
  // audit::short_reason's shape: PREFIX ID ": " SUMMARY [ "; +N: " ID ", " ID ... [", K more"] ]
  ReasonIds out;
  if (reason.rfind(kReasonPrefix, 0) != 0) return out;
  std::string rest = reason.substr(kReasonPrefix.size());
  // A reason kept while unknown names its ids after its own words.
  constexpr std::string_view kNotJudged = kNotJudgedPrefix.substr(kReasonPrefix.size());
  if (rest.starts_with(kNotJudged)) rest.erase(0, kNotJudged.size());
  const auto colon = rest.find(": ");
  const std::string first = rest.substr(0, colon);
  if (!first.empty() && first.find(' ') == std::string::npos) out.ids.push_back(first);
  // The others follow the last "; +N: " (a summary may hold "; " itself, not "; +N: ").
  const auto plus = rest.rfind("; +");
  if (plus == std::string::npos) return out;
  const auto list_at = rest.find(": ", plus);
  if (list_at == std::string::npos) return out;
  for (auto part : text::split(std::string_view(rest).substr(list_at + 2), ',')) {
    const std::string id(text::trim(part));
    if (id.ends_with(" more") || id == "...")
      out.truncated = true;
    else if (!id.empty() && id.find(' ') == std::string::npos)
      out.ids.push_back(id);
  }
  if (rest.ends_with("...")) out.truncated = true;
  return out;
}

std::vector<settings::Finding> unknown_for_reason(const audit::CheckReport& check,
                                                  const std::string& reason,
                                                  settings::Severity drain_on) {
  const auto named = reason_ids(reason);
  std::vector<settings::Finding> out;
  for (const auto& f : check.findings) {
    if (!f.applicable || !f.unknown) continue;
    const bool is_named = std::find(named.ids.begin(), named.ids.end(), f.id) != named.ids.end();
    if (is_named || (named.truncated && f.stakes >= drain_on)) out.push_back(f);
  }
  return out;
}

Result<HealthReport> health_check(const HealthRequest& request, const HealthContext& context) {
  HealthReport report;
  report.host = short_name(context.this_host);
  report.node = !request.node.empty()              ? request.node
                : !context.slurmd_nodename.empty() ? context.slurmd_nodename
                                                   : report.host;
  report.profile = request.profile;
  report.drain_on = settings::severity_name(request.drain_on);
  report.dry_run = request.dry_run;

  // The node first: a name Slurm does not know, or a node on another host, is bad input and
  // there is nothing to judge.
  auto node = request.scontrol.show_node(report.node);
  if (!node) return tl::unexpected(node.error());
  report.before = *node;
  const std::string runs_on = node->host_name.empty() ? node->name : node->host_name;
  if (short_name(runs_on) != report.host)
    return fail(
        fmt::format("Slurm's node {} runs on host {}, not on this host ({}): the health "
                    "check judges only the node it runs on (--node)",
                    report.node, runs_on, report.host));

  auto checked = audit::check_host(
      context.root, {request.profile,
                     {},
                     context.collect,
                     {request.only, request.skip, {}, request.profile, request.baseline}});
  if (!checked) return tl::unexpected(checked.error());
  const auto& check = checked->report;
  report.failing = audit::failing(check, request.drain_on);
  report.reason = drain_reason(report.failing);
  // Unknown is never healthy: a node dltune drained stays drained while an id its reason names
  // cannot be judged, and the reason then says so.
  std::string unknown_reason;
  if (report.healthy() && drained_by_dltune(report.before)) {
    report.unknown = unknown_for_reason(check, report.before.reason, request.drain_on);
    if (!report.unknown.empty()) {
      unknown_reason = audit::short_reason(report.unknown, kNotJudgedPrefix, 200);
      report.reason = unknown_reason;
    }
  }
  report.action = decide(report.before, report.healthy(), report.reason, unknown_reason);

  if (request.dry_run) return report;
  switch (report.action) {
    case HealthAction::kDrain:
    case HealthAction::kUpdateReason:
    case HealthAction::kKeepUnknown:
      if (auto done = request.scontrol.drain(report.node, report.reason); !done)
        return tl::unexpected(done.error());
      break;
    case HealthAction::kResume:
      if (auto done = request.scontrol.resume(report.node); !done)
        return tl::unexpected(done.error());
      break;
    case HealthAction::kNone:
    case HealthAction::kKeepAdminDrain:
      break;
  }
  return report;
}

inventory::Json to_json(const HealthReport& r) {
  inventory::Json failing = inventory::Json::array();
  for (const auto& f : r.failing) failing.push_back(settings::to_json(f));
  inventory::Json unknown = inventory::Json::array();
  for (const auto& f : r.unknown) unknown.push_back(settings::to_json(f));
  return {
      {"schema", "dltune.slurm-health/1"},
      {"node", r.node},
      {"host", r.host},
      {"profile", r.profile},
      {"drain_on", r.drain_on},
      {"healthy", r.healthy()},
      {"state_before", r.before.state},
      {"reason_before", r.before.reason},
      {"drained_by_dltune", drained_by_dltune(r.before)},
      {"action", action_name(r.action)},
      {"dry_run", r.dry_run},
      {"reason", r.reason},
      {"failing", failing},
      {"unknown", unknown},
      {"exit_code", r.exit_code()},
  };
}

std::string render_text(const HealthReport& r) {
  const std::string would = r.dry_run ? "would be " : "";
  std::string out;
  switch (r.action) {
    case HealthAction::kNone:
      out = !r.unknown.empty()
                ? fmt::format(
                      "node {}: nothing fails, but what it was drained for cannot be judged: "
                      "kept drained: {}\n",
                      r.node, r.before.reason)
            : r.healthy()
                ? fmt::format("node {}: healthy (profile {}, nothing {} or worse)\n", r.node,
                              r.profile, r.drain_on)
                : fmt::format("node {}: unhealthy, drained already: {}\n", r.node, r.before.reason);
      break;
    case HealthAction::kDrain:
      out = fmt::format("node {}: unhealthy, {}drained: {}\n", r.node, would, r.reason);
      break;
    case HealthAction::kUpdateReason:
      out = fmt::format("node {}: unhealthy, drained by dltune; reason {}updated: {}\n", r.node,
                        would, r.reason);
      break;
    case HealthAction::kResume:
      out = fmt::format("node {}: healthy again, {}resumed (dltune had drained it: {})\n", r.node,
                        would, r.before.reason);
      break;
    case HealthAction::kKeepUnknown:
      out = fmt::format(
          "node {}: nothing fails, but what it was drained for cannot be judged: {}kept "
          "drained: {}\n",
          r.node, would, r.reason);
      break;
    case HealthAction::kKeepAdminDrain:
      out = fmt::format(
          "node {}: {}; drained by {} ({}), left as it is: dltune resumes only the "
          "nodes it drained\n",
          r.node, r.healthy() ? "healthy" : "unhealthy: " + r.reason,
          r.before.reason_by.empty() ? "someone else" : r.before.reason_by,
          r.before.reason.empty() ? "no reason given" : r.before.reason);
      break;
  }
  for (const auto& f : r.failing)
    out += fmt::format("  {:<9} {}\n", settings::severity_name(f.severity), f.summary);
  for (const auto& f : r.unknown) out += fmt::format("  {:<9} {}\n", "unknown", f.summary);
  return out;
}

Result<HealthReport> health_check_within(const HealthRequest& request, const HealthContext& context,
                                         std::int64_t timeout_ns, int exit_status) {
  const std::function<std::string()> last_words = [timeout_ns] {
    return watchdog_message(timeout_ns);
  };
  const Watchdog watchdog(std::chrono::nanoseconds(timeout_ns), last_words, exit_status);
  return health_check(request, context);
}

}  // namespace dltune::slurm

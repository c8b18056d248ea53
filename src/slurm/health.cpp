#include "slurm/health.hpp"

#include <fmt/core.h>

#include "core/json.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"

namespace dltune::slurm {

namespace {

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
  }
  return "none";
}

HealthAction decide(const NodeState& node, bool healthy, const std::string& reason) {
  if (node.drain() && !drained_by_dltune(node)) return HealthAction::kKeepAdminDrain;
  if (healthy) return drained_by_dltune(node) ? HealthAction::kResume : HealthAction::kNone;
  if (!node.drain()) return HealthAction::kDrain;
  return node.reason == reason ? HealthAction::kNone : HealthAction::kUpdateReason;
}

std::string drain_reason(const std::vector<settings::Finding>& failing, std::size_t max) {
  return audit::short_reason(failing, kReasonPrefix, max);
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

  auto profile = settings::load_profile(request.profile, context.root, settings::validate_key);
  if (!profile) return fail("profile: " + profile.error().message());
  const auto facts = inventory::collect(context.root, context.collect);
  auto check = audit::run_check(facts, context.root, *profile,
                                {request.only, request.skip, {}, request.profile});
  if (!check) return tl::unexpected(check.error());
  report.failing = audit::failing(*check, request.drain_on);
  report.reason = drain_reason(report.failing);
  report.action = decide(report.before, report.healthy(), report.reason);

  if (request.dry_run) return report;
  switch (report.action) {
    case HealthAction::kDrain:
    case HealthAction::kUpdateReason:
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
      {"exit_code", r.exit_code()},
  };
}

std::string render_text(const HealthReport& r) {
  const std::string would = r.dry_run ? "would be " : "";
  std::string out;
  switch (r.action) {
    case HealthAction::kNone:
      out = r.healthy()
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
  return out;
}

}  // namespace dltune::slurm

#include "bench/sides.hpp"

#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "launch/job_plan.hpp"
#include "settings/catalog.hpp"
#include "tune/drivers.hpp"

namespace dltune::bench {

std::string Side::label() const {
  std::string s = profile;
  for (const auto& kv : sets) s += (s.empty() ? "--set " : " --set ") + kv;
  if (s.empty()) s = "current host";
  for (const auto& o : only) s += " --only " + o;
  if (!run_args.empty()) s += ", run " + text::join(run_args, " ");
  return s;
}

std::vector<SettingDifference> differences(const Side& a, const Side& b) {
  struct Values {
    std::string key, kind, from_a, from_b;
    std::optional<std::string> now, a, b;
  };
  std::map<std::string, Values> by_target;  // ordered: a stable listing
  const auto add = [&](const std::optional<tune::Plan>& plan, bool is_a) {
    if (!plan) return;
    std::map<std::string, std::string> origins;
    for (const auto& item : plan->items) origins[item.key] = item.origin;
    for (const auto& c : plan->changes()) {
      auto& v = by_target[c.target];
      v.key = c.key;
      v.kind = c.kind;
      if (!v.now) v.now = c.old_value;
      (is_a ? v.a : v.b) = c.new_value;
      (is_a ? v.from_a : v.from_b) = origins[c.key];
    }
  };
  add(a.plan, true);
  add(b.plan, false);
  std::vector<SettingDifference> out;
  for (const auto& [target, v] : by_target) {
    const std::string now = v.now.value_or("(none)");
    const std::string under_a = v.a.value_or(now), under_b = v.b.value_or(now);
    if (tune::Drivers::same_value(v.kind, under_a, under_b)) continue;
    out.push_back(SettingDifference{v.key, target, under_a, under_b, v.from_a, v.from_b});
  }
  return out;
}

std::vector<std::string> run_differences(const Side& a, const Side& b) {
  std::vector<std::string> out;
  auto sa = a.run_args, sb = b.run_args;  // the order of run's options does not matter
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  if (sa == sb) return out;
  for (const auto& x : a.run_args)
    if (std::find(b.run_args.begin(), b.run_args.end(), x) == b.run_args.end())
      out.push_back(x + " (A)");
  for (const auto& x : b.run_args)
    if (std::find(a.run_args.begin(), a.run_args.end(), x) == a.run_args.end())
      out.push_back(x + " (B)");
  return out;
}

Result<void> plan_side(const host::Root& root, const inventory::HostFacts& facts, char name,
                       Side& side, const std::vector<std::string>& data) {
  const auto& job = side.run;
  if (auto planned = launch::plan_job(root, facts, job.options, job.environment,
                                      job.profile ? &*job.profile : nullptr, "bench");
      !planned)
    return fail(fmt::format("{}'s run options: {}", name, planned.error().message()));
  if (!side.changes_settings()) return {};
  const char lower = static_cast<char>(name - 'A' + 'a');
  const auto option = side.profile.empty() ? fmt::format("--set-{}", lower)
                                           : fmt::format("-{} {}", lower, side.profile);
  auto profile = settings::load_profile(side.profile, side.sets, root, settings::validate_key);
  if (!profile) return fail(fmt::format("{}: {}", option, profile.error().message()));
  auto plan =
      tune::make_plan(root, facts, *profile, side.only, false, tune::PlanOptions{data, false});
  if (!plan) return fail(fmt::format("{}: {}", option, plan.error().message()));
  side.plan = std::move(*plan);
  return {};
}

std::optional<std::string> same_sides(const Side& a, const Side& b) {
  if (!differences(a, b).empty() || !run_differences(a, b).empty()) return std::nullopt;
  return fmt::format(
      "A ({}) and B ({}) would run the job under the same settings on this host: there is "
      "nothing to compare; nothing was run",
      a.label(), b.label());
}

}  // namespace dltune::bench

#include "bench/sides.hpp"

#include <algorithm>
#include <map>

#include "core/text.hpp"
#include "tune/drivers.hpp"

namespace dltune::bench {

std::string Side::label() const {
  std::string s = profile.empty() ? "current host" : profile;
  for (const auto& o : only) s += " --only " + o;
  if (!run_args.empty()) s += ", run " + text::join(run_args, " ");
  return s;
}

std::vector<SettingDifference> differences(const Side& a, const Side& b) {
  struct Values {
    std::string key, kind;
    std::optional<std::string> now, a, b;
  };
  std::map<std::string, Values> by_target;  // ordered: a stable listing
  const auto add = [&](const std::optional<tune::Plan>& plan, bool is_a) {
    if (!plan) return;
    for (const auto& c : plan->changes()) {
      auto& v = by_target[c.target];
      v.key = c.key;
      v.kind = c.kind;
      if (!v.now) v.now = c.old_value;
      (is_a ? v.a : v.b) = c.new_value;
    }
  };
  add(a.plan, true);
  add(b.plan, false);
  std::vector<SettingDifference> out;
  for (const auto& [target, v] : by_target) {
    const std::string now = v.now.value_or("(none)");
    const std::string under_a = v.a.value_or(now), under_b = v.b.value_or(now);
    if (tune::Drivers::same_value(v.kind, under_a, under_b)) continue;
    out.push_back(SettingDifference{v.key, target, under_a, under_b});
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

}  // namespace dltune::bench

#include "tune/plan.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "audit/rules.hpp"
#include "audit/sysctl_files.hpp"
#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "tune/dropins.hpp"
#include "tune/sysctl_name.hpp"

namespace dltune::tune {

namespace {

constexpr const char* kSysctlDropin = "/etc/sysctl.d/90-dltune.conf";
constexpr const char* kLimitsDropin = "/etc/security/limits.d/90-dltune.conf";

bool is_sysctl(const std::string& key) {
  const auto* rule = audit::rule_for(key);
  return rule != nullptr && std::string_view(rule->key).back() == '.';
}

// The value now; empty when the file is absent. A file that is there but cannot be read (EACCES,
// EIO) is an error naming the setting: its old value could not be journaled, and "this kernel
// has no ..." would be a lie.
Result<std::optional<std::string>> read_trimmed(const host::Root& root, const std::string& key,
                                                const std::string& path) {
  auto r = root.read(path, 65536);
  if (!r)
    return fail(fmt::format("{}: {}", key, r.error().what), r.error().input, r.error().errno_);
  if (!*r) return std::optional<std::string>();
  return std::optional<std::string>(text::normalise_spaces(**r));
}

Result<void> plan_sysctl(const host::Root& root, const inventory::HostFacts& facts,
                         const ProfileEntry& e, PlanItem& item,
                         std::map<std::string, std::string>& persisted) {
  auto path = sysctl_path(e.key);
  std::optional<std::string> current;
  if (path) {
    auto read = read_trimmed(root, e.key, *path);
    if (!read) return tl::unexpected(read.error());
    current = *read;
  }
  if (!current) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "this kernel has no " + (path ? *path : e.key);
    return {};
  }
  const auto target = target_value(e.expected, *current, e.field);
  persisted[*sysctl_normalise(e.key)] = target.value_or(*current);
  if (!target) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = fmt::format("already {}", *current);
    return {};
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> {}", *current, *target);
  // Writing a ratio zeroes the matching *_bytes, and *_bytes=0 cannot be written back (EINVAL,
  // shared/MEASUREMENTS.md): journal the bytes value first so that rollback restores it.
  static const std::map<std::string, std::string> kRatioToBytes = {
      {"vm.dirty_ratio", "vm.dirty_bytes"},
      {"vm.dirty_background_ratio", "vm.dirty_background_bytes"}};
  if (const auto it = kRatioToBytes.find(e.key); it != kRatioToBytes.end()) {
    const auto bytes_path = *sysctl_path(it->second);
    const auto bytes = read_trimmed(root, it->second, bytes_path);
    if (!bytes) return tl::unexpected(bytes.error());
    if (*bytes && **bytes != "0")
      item.changes.push_back({it->second, "sysctl", bytes_path, **bytes, "0", true});
  }
  item.changes.push_back({e.key, "sysctl", *path, *current, *target, false});
  if (e.key == "vm.swappiness" && facts.os.cgroup && facts.os.cgroup->version != "v2")
    item.notes.push_back(
        "cgroup v1: memory cgroups that exist already keep their own memory.swappiness (new ones "
        "inherit the new value); jobs started by `dltune run` get a new group");
  return {};
}

// The drop-in as it is now (empty: absent). An unreadable one is an error: taking it for absent
// would replace it, and rollback would then remove it.
Result<std::optional<std::string>> read_dropin(const host::Root& root, const std::string& key,
                                               const char* path) {
  auto r = root.read(path);
  if (!r)
    return fail(fmt::format("{}: {}", key, r.error().what), r.error().input, r.error().errno_);
  return *r;
}

void plan_thp(const inventory::HostFacts& facts, const ProfileEntry& e, PlanItem& item) {
  const bool enabled = e.key == "thp.enabled";
  const auto& choice = enabled ? facts.memory.thp_enabled : facts.memory.thp_defrag;
  if (!choice || !choice->selected) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "no transparent huge pages in this kernel";
    return;
  }
  const auto target = target_value(e.expected, *choice->selected, std::nullopt);
  if (!target) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = "already " + *choice->selected;
    return;
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> {}", *choice->selected, *target);
  item.changes.push_back(
      {e.key, "sysfs",
       std::string("/sys/kernel/mm/transparent_hugepage/") + (enabled ? "enabled" : "defrag"),
       *choice->selected, *target, false});
}

void plan_governor(const inventory::HostFacts& facts, const ProfileEntry& e, PlanItem& item) {
  if (facts.cpu.governors.empty()) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "no cpufreq on this host";
    return;
  }
  std::vector<std::string> from;
  std::string target_gov;
  for (const auto& [gov, cpus] : facts.cpu.governors) {
    const auto target = target_value(e.expected, gov, std::nullopt);
    if (!target) continue;
    target_gov = *target;
    from.push_back(fmt::format("{} on CPUs {}", gov, text::format_cpu_list(cpus)));
    for (int cpu : cpus)
      item.changes.push_back(
          {e.key, "sysfs",
           fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu), gov, *target,
           false});
  }
  if (item.changes.empty()) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = "already " + e.expected.text() + " on every CPU";
    return;
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> {}", fmt::join(from, ", "), target_gov);
}

}  // namespace

const char* status_name(PlanItem::Status s) {
  switch (s) {
    case PlanItem::Status::kChange:
      return "change";
    case PlanItem::Status::kAlreadyOk:
      return "ok";
    case PlanItem::Status::kNotTunable:
      return "not tunable";
    case PlanItem::Status::kNotApplicable:
      return "not applicable";
  }
  return "?";
}

std::vector<PlannedChange> Plan::changes() const {
  std::vector<PlannedChange> out;
  for (const auto& i : items)
    for (const auto& c : i.changes) out.push_back(c);
  return out;
}

std::optional<std::string> target_value(const Expected& expected, const std::string& current,
                                        std::optional<int> field) {
  const std::string value = text::normalise_spaces(current);
  if (!field) {
    if (expected.matches(value)) return std::nullopt;
    return expected.values.front();
  }
  auto parts = text::fields(value);
  const auto i = static_cast<std::size_t>(*field - 1);
  if (i >= parts.size()) return std::nullopt;  // not the shape the profile expects: leave it
  if (expected.matches(parts[i])) return std::nullopt;
  std::string out;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (!out.empty()) out += ' ';
    out += k == i ? expected.values.front() : std::string(parts[k]);
  }
  return out;
}

Result<Plan> make_plan(const host::Root& root, const inventory::HostFacts& facts,
                       const Profile& profile, const std::vector<std::string>& only, bool persist) {
  for (const auto& id : only) {
    if (profile.find(id) == nullptr)
      return fail(fmt::format("profile {} has no setting", profile.name), id);
  }
  Plan plan;
  plan.profile = profile.name;
  plan.persist = persist;
  std::map<std::string, std::string> persisted_sysctls;
  std::map<std::string, std::string> limits;
  for (const auto& e : profile.entries) {
    if (!only.empty() && std::find(only.begin(), only.end(), e.key) == only.end()) continue;
    PlanItem item;
    item.key = e.key;
    item.reason = e.reason;
    if (is_sysctl(e.key)) {
      if (auto ok = plan_sysctl(root, facts, e, item, persisted_sysctls); !ok)
        return tl::unexpected(ok.error());
    } else if (e.key == "thp.enabled" || e.key == "thp.defrag") {
      plan_thp(facts, e, item);
      if (persist && item.status == PlanItem::Status::kChange)
        item.notes.push_back(
            "not persistent yet: THP settings return to the kernel's default "
            "at boot (run `dltune tune apply` from a boot job)");
    } else if (e.key == "cpu.governor") {
      plan_governor(facts, e, item);
      if (persist && item.status == PlanItem::Status::kChange)
        item.notes.push_back("not persistent yet: the governor returns to the default at boot");
    } else if (e.key == "limits.nofile" || e.key == "limits.memlock") {
      const std::string name = e.key.substr(7);
      const auto want = e.expected.values.empty() ? std::string() : e.expected.values.front();
      if (!persist) {
        item.status = PlanItem::Status::kNotTunable;
        item.summary =
            "limits are set for new logins: use --persist (limits.d), or start jobs "
            "with `dltune run`";
      } else {
        limits[name] = want;
        item.status = PlanItem::Status::kChange;
        item.summary = fmt::format("{} soft and hard {} for new logins", name, want);
        item.notes.push_back(
            "a running process keeps its limits: log in again (or restart the "
            "service) to get them");
      }
    } else {
      item.status = PlanItem::Status::kNotTunable;
      item.summary = "not changed by tune: `dltune check --only " + e.key + "` gives the fix";
    }
    plan.items.push_back(std::move(item));
  }
  if (persist && !persisted_sysctls.empty()) {
    PlanItem item;
    item.key = "persist.sysctl";
    auto old = read_dropin(root, item.key, kSysctlDropin);
    if (!old) return tl::unexpected(old.error());
    const auto merged = merge_sysctl_dropin(old->value_or(""), persisted_sysctls);
    if (*old && **old == merged) {
      item.status = PlanItem::Status::kAlreadyOk;
      item.summary = std::string(kSysctlDropin) + " already holds these values";
    } else {
      item.status = PlanItem::Status::kChange;
      item.summary = fmt::format("write {} ({} settings)", kSysctlDropin, persisted_sysctls.size());
      item.changes.push_back({"persist.sysctl", "file", kSysctlDropin, *old, merged, false});
    }
    audit::SysctlFiles files(root);
    for (const auto& [key, value] : persisted_sysctls)
      for (const auto& s : files.overriding_dltune(key))
        item.notes.push_back(fmt::format("{}:{} sets {} = {} and comes after {}: it wins at boot",
                                         s.file, s.line, key, s.value, kSysctlDropin));
    plan.items.push_back(std::move(item));
  }
  if (persist && !limits.empty()) {
    PlanItem item;
    item.key = "persist.limits";
    auto old = read_dropin(root, item.key, kLimitsDropin);
    if (!old) return tl::unexpected(old.error());
    const auto merged = merge_limits_dropin(old->value_or(""), "*", limits);
    if (*old && **old == merged) {
      item.status = PlanItem::Status::kAlreadyOk;
      item.summary = std::string(kLimitsDropin) + " already holds these limits";
    } else {
      item.status = PlanItem::Status::kChange;
      item.summary = fmt::format("write {}", kLimitsDropin);
      item.changes.push_back({"persist.limits", "file", kLimitsDropin, *old, merged, false});
    }
    plan.items.push_back(std::move(item));
  }
  return plan;
}

}  // namespace dltune::tune

#include "tune/plan.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "audit/data_paths.hpp"
#include "audit/rules.hpp"
#include "audit/sysctl_files.hpp"
#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "tune/dropins.hpp"
#include "tune/mount_setting.hpp"
#include "tune/plan_gpu.hpp"
#include "tune/sysctl_name.hpp"

namespace dltune::tune {

namespace {

constexpr const char* kSysctlDropin = "/etc/sysctl.d/90-dltune.conf";
constexpr const char* kLimitsDropin = "/etc/security/limits.d/90-dltune.conf";
constexpr const char* kTmpfilesDropin = "/etc/tmpfiles.d/90-dltune.conf";
constexpr const char* kFstab = "/etc/fstab";
constexpr const char* kGovernorGlob = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor";

// What the persistent files will hold, gathered while the items are planned.
struct Persisted {
  std::map<std::string, std::string> sysctls;  // dotted name -> value
  std::map<std::string, std::string> limits;   // item -> value
  std::map<std::string, std::string> sysfs;    // sysfs path or glob -> value (tmpfiles.d)
  std::optional<std::string> fstab_old, fstab_new;
  std::vector<std::string> fstab_notes;
};

bool is_sysctl(const std::string& key) {
  const auto* rule = audit::rule_for(key);
  return rule != nullptr && std::string_view(rule->key).back() == '.';
}

// A persistent file as it is now (empty: absent). An unreadable one is an error naming the item:
// taking it for absent would replace it, and rollback would then remove it.
Result<std::optional<std::string>> read_dropin(const host::Root& root, const std::string& key,
                                               const char* path) {
  auto r = root.read(path);
  if (!r)
    return fail(fmt::format("{}: {}", key, r.error().what), r.error().input, r.error().errno_);
  return *r;
}

// A setting's value now; empty when the file is absent. A file that is there but cannot be read
// (EACCES, EIO) is an error naming the setting: its old value could not be journaled, and "this
// kernel has no ..." would be a lie.
Result<std::optional<std::string>> read_setting(const host::Root& root, const std::string& key,
                                                const std::string& path) {
  auto r = root.read(path, 65536);
  if (!r)
    return fail(fmt::format("{}: {}", key, r.error().what), r.error().input, r.error().errno_);
  if (!*r) return std::optional<std::string>();
  return std::optional<std::string>(text::normalise_spaces(**r));
}

// A value read on a best-effort basis (read-ahead, cgroups that come and go): absent when it
// cannot be read.
std::optional<std::string> read_trimmed(const host::Root& root, const std::string& path) {
  auto r = read_setting(root, path, path);
  return r ? *r : std::nullopt;
}

// cgroup v1: the memory cgroups that keep their own swappiness (docs/measurements.md).
void plan_memcg_swappiness(const host::Root& root, const std::string& value, bool set,
                           PlanItem& item) {
  const auto groups = memcg_swappiness_differing(root, value);
  if (groups.empty()) return;
  if (!set) {
    item.notes.push_back(fmt::format(
        "cgroup v1: {} memory cgroup(s) that exist already keep their own memory.swappiness "
        "(e.g. {} in {}): add --cgroups to set them to {} too; new groups inherit the new value",
        groups.size(), groups.front().second, groups.front().first, value));
    return;
  }
  for (const auto& [path, old] : groups)
    item.changes.push_back({"vm.swappiness", "cgroup", path, old, value, false});
  if (item.status != PlanItem::Status::kChange) {
    item.status = PlanItem::Status::kChange;
    item.summary += fmt::format("; {} memory cgroup(s) -> {}", groups.size(), value);
  } else {
    item.summary += fmt::format(" (and {} memory cgroup(s))", groups.size());
  }
}

Result<void> plan_sysctl(const host::Root& root, const inventory::HostFacts& facts,
                         const ProfileEntry& e, const PlanOptions& options, PlanItem& item,
                         std::map<std::string, std::string>& persisted) {
  auto path = sysctl_path(e.key);
  std::optional<std::string> current;
  if (path) {
    auto read = read_setting(root, e.key, *path);
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
  const bool memcg_v1 =
      e.key == "vm.swappiness" && facts.os.cgroup && facts.os.cgroup->version != "v2";
  if (!target) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = fmt::format("already {}", *current);
    if (memcg_v1) plan_memcg_swappiness(root, *current, options.cgroups, item);
    return {};
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> {}", *current, *target);
  // Writing a ratio zeroes the matching *_bytes, and *_bytes=0 cannot be written back (EINVAL,
  // docs/measurements.md): journal the bytes value first so that rollback restores it.
  static const std::map<std::string, std::string> kRatioToBytes = {
      {"vm.dirty_ratio", "vm.dirty_bytes"},
      {"vm.dirty_background_ratio", "vm.dirty_background_bytes"}};
  if (const auto it = kRatioToBytes.find(e.key); it != kRatioToBytes.end()) {
    const auto bytes_path = *sysctl_path(it->second);
    const auto bytes = read_setting(root, it->second, bytes_path);
    if (!bytes) return tl::unexpected(bytes.error());
    if (*bytes && **bytes != "0")
      item.changes.push_back({it->second, "sysctl", bytes_path, **bytes, "0", true});
  }
  item.changes.push_back({e.key, "sysctl", *path, *current, *target, false});
  if (memcg_v1) plan_memcg_swappiness(root, *target, options.cgroups, item);
  return {};
}

void plan_thp(const inventory::HostFacts& facts, const ProfileEntry& e, PlanItem& item,
              std::map<std::string, std::string>& persisted) {
  const bool enabled = e.key == "thp.enabled";
  const auto& choice = enabled ? facts.memory.thp_enabled : facts.memory.thp_defrag;
  if (!choice || !choice->selected) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "no transparent huge pages in this kernel";
    return;
  }
  const auto target = target_value(e.expected, *choice->selected, std::nullopt);
  persisted[std::string("/sys/kernel/mm/transparent_hugepage/") +
            (enabled ? "enabled" : "defrag")] = target.value_or(*choice->selected);
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

void plan_governor(const inventory::HostFacts& facts, const ProfileEntry& e, PlanItem& item,
                   std::map<std::string, std::string>& persisted) {
  if (facts.cpu.governors.empty()) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "no cpufreq on this host";
    return;
  }
  if (e.expected.values.empty()) return;
  // At boot every CPU gets it (tmpfiles.d's w lines take a glob).
  const auto& first = facts.cpu.governors.begin()->first;
  persisted[kGovernorGlob] = e.expected.matches(first) && facts.cpu.governors.size() == 1
                                 ? first
                                 : e.expected.values.front();
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

void plan_mount(const host::Root& root, const inventory::HostFacts& facts, const ProfileEntry& e,
                const PlanOptions& options, bool persist, PlanItem& item, Persisted& persisted) {
  if (!e.expected.matches("true")) {
    item.status = PlanItem::Status::kNotTunable;
    item.summary = "tune only adds noatime; the profile does not ask for it";
    return;
  }
  if (facts.os.container) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "in a container: the mount options are the host's";
    return;
  }
  const auto paths = options.data_paths.empty() ? audit::default_data_paths() : options.data_paths;
  std::vector<std::string> from, ok;
  for (const auto& d : audit::data_file_systems(root, facts, paths)) {
    const auto& mp = d.fs->mount_point;
    const auto mode = atime_mode(text::join(d.fs->options, ","));
    if (mode == "noatime") {
      ok.push_back(mp);
    } else {
      from.push_back(fmt::format("{} {}", mp, mode));
      item.changes.push_back({e.key, "mount", mp, mode, "noatime", false});
    }
    if (!persist) continue;
    const std::string fstab =
        persisted.fstab_new ? *persisted.fstab_new : persisted.fstab_old.value_or("");
    auto next = fstab_add_option(fstab, mp, "noatime");
    if (!next) {
      persisted.fstab_notes.push_back(fmt::format(
          "{}: {}; the remount lasts until {} is mounted again", mp, next.error().message(), mp));
      continue;
    }
    if (*next != fstab) persisted.fstab_new = *next;
  }
  if (item.changes.empty()) {
    item.status = ok.empty() ? PlanItem::Status::kNotApplicable : PlanItem::Status::kAlreadyOk;
    item.summary = ok.empty() ? "no file system holds the data paths"
                              : fmt::format("already noatime: {}", fmt::join(ok, ", "));
    return;
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> noatime (remount)", fmt::join(from, ", "));
}

void plan_read_ahead(const host::Root& root, const inventory::HostFacts& facts,
                     const ProfileEntry& e, const PlanOptions& options, PlanItem& item,
                     std::map<std::string, std::string>& persisted) {
  const auto paths = options.data_paths.empty() ? audit::default_data_paths() : options.data_paths;
  std::vector<std::string> from, ok;
  for (const auto& d : audit::data_file_systems(root, facts, paths)) {
    if (!d.disk) continue;
    const std::string path = "/sys/block/" + *d.disk + "/queue/read_ahead_kb";
    if (persisted.count(path)) continue;  // two file systems on one disk
    const auto current = read_trimmed(root, path);
    if (!current) continue;
    const auto target = target_value(e.expected, *current, std::nullopt);
    persisted[path] = target.value_or(*current);
    if (!target) {
      ok.push_back(fmt::format("{} {} KiB", *d.disk, *current));
      continue;
    }
    from.push_back(fmt::format("{} {} -> {} KiB", *d.disk, *current, *target));
    item.changes.push_back({e.key, "sysfs", path, *current, *target, false});
  }
  if (item.changes.empty()) {
    item.status = ok.empty() ? PlanItem::Status::kNotApplicable : PlanItem::Status::kAlreadyOk;
    item.summary = ok.empty() ? "no disk under the data paths' file systems"
                              : fmt::format("already {}", fmt::join(ok, ", "));
    return;
  }
  item.status = PlanItem::Status::kChange;
  item.summary = text::join(from, ", ");
}

// The drop-in item for one persistent file: a change when its content would differ.
PlanItem file_item(const char* key, const char* path, const std::optional<std::string>& old,
                   const std::string& merged, std::string summary) {
  PlanItem item;
  item.key = key;
  if (old && *old == merged) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = std::string(path) + " already holds these values";
  } else {
    item.status = PlanItem::Status::kChange;
    item.summary = std::move(summary);
    item.changes.push_back({key, "file", path, old, merged, false});
  }
  return item;
}

// What, at boot, applies tmpfiles.d: systemd-tmpfiles-setup.service, when systemd is PID 1.
std::optional<std::string> tmpfiles_boot_problem(const host::Root& root) {
  const bool tool =
      root.exists("/usr/bin/systemd-tmpfiles") || root.exists("/bin/systemd-tmpfiles");
  auto comm = root.read("/proc/1/comm", 256);
  const std::string init = comm && *comm ? std::string(text::trim(**comm)) : "";
  if (tool && init == "systemd") return std::nullopt;
  if (!tool) return "this host has no systemd-tmpfiles: nothing applies the file at boot";
  return fmt::format(
      "PID 1 is {}, not systemd: nothing runs systemd-tmpfiles at boot here; run `dltune tune "
      "apply` (or `systemd-tmpfiles --create {}`) from a boot script",
      init.empty() ? "unknown" : init, kTmpfilesDropin);
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
                       const Profile& profile, const std::vector<std::string>& only, bool persist,
                       const PlanOptions& options) {
  for (const auto& id : only) {
    if (profile.find(id) == nullptr)
      return fail(fmt::format("profile {} has no setting", profile.name), id);
  }
  Plan plan;
  plan.profile = profile.name;
  plan.persist = persist;
  Persisted persisted;
  if (persist) {
    auto fstab = read_dropin(root, "persist.fstab", kFstab);
    if (!fstab) return tl::unexpected(fstab.error());
    persisted.fstab_old = *fstab;
  }
  for (const auto& e : profile.entries) {
    if (!only.empty() && std::find(only.begin(), only.end(), e.key) == only.end()) continue;
    PlanItem item;
    item.key = e.key;
    item.reason = e.reason;
    if (is_sysctl(e.key)) {
      if (auto ok = plan_sysctl(root, facts, e, options, item, persisted.sysctls); !ok)
        return tl::unexpected(ok.error());
    } else if (e.key == "thp.enabled" || e.key == "thp.defrag") {
      plan_thp(facts, e, item, persisted.sysfs);
    } else if (e.key == "cpu.governor") {
      plan_governor(facts, e, item, persisted.sysfs);
    } else if (e.key == "block.read_ahead_kb") {
      plan_read_ahead(root, facts, e, options, item, persisted.sysfs);
      if (item.status == PlanItem::Status::kChange)
        item.notes.push_back(
            "disk names (sda, nvme0n1) can change between boots; the persistent line names the "
            "disk as it is now");
    } else if (e.key == "mount.noatime") {
      plan_mount(root, facts, e, options, persist, item, persisted);
    } else if (e.key == "gpu.persistence") {
      plan_gpu_persistence(facts, e, persist, item);
    } else if (e.key == "limits.nofile" || e.key == "limits.memlock") {
      const std::string name = e.key.substr(7);
      const auto want = e.expected.values.empty() ? std::string() : e.expected.values.front();
      if (!persist) {
        item.status = PlanItem::Status::kNotTunable;
        item.summary =
            "limits are set for new logins: use --persist (limits.d), or start jobs "
            "with `dltune run`";
      } else {
        persisted.limits[name] = want;
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
  if (!persist) return plan;
  if (!persisted.sysctls.empty()) {
    auto old = read_dropin(root, "persist.sysctl", kSysctlDropin);
    if (!old) return tl::unexpected(old.error());
    auto item =
        file_item("persist.sysctl", kSysctlDropin, *old,
                  merge_sysctl_dropin(old->value_or(""), persisted.sysctls),
                  fmt::format("write {} ({} settings)", kSysctlDropin, persisted.sysctls.size()));
    audit::SysctlFiles files(root);
    for (const auto& [key, value] : persisted.sysctls)
      for (const auto& s : files.overriding_dltune(key))
        item.notes.push_back(fmt::format("{}:{} sets {} = {} and comes after {}: it wins at boot",
                                         s.file, s.line, key, s.value, kSysctlDropin));
    plan.items.push_back(std::move(item));
  }
  if (!persisted.limits.empty()) {
    auto old = read_dropin(root, "persist.limits", kLimitsDropin);
    if (!old) return tl::unexpected(old.error());
    plan.items.push_back(file_item("persist.limits", kLimitsDropin, *old,
                                   merge_limits_dropin(old->value_or(""), "*", persisted.limits),
                                   fmt::format("write {}", kLimitsDropin)));
  }
  if (!persisted.sysfs.empty()) {
    auto old = read_dropin(root, "persist.sysfs", kTmpfilesDropin);
    if (!old) return tl::unexpected(old.error());
    auto merged = merge_tmpfiles_dropin(old->value_or(""), persisted.sysfs);
    if (!merged) return tl::unexpected(merged.error());
    auto item = file_item("persist.sysfs", kTmpfilesDropin, *old, *merged,
                          fmt::format("write {} ({} sysfs value(s) for boot)", kTmpfilesDropin,
                                      persisted.sysfs.size()));
    if (auto problem = tmpfiles_boot_problem(root)) item.notes.push_back(*problem);
    plan.items.push_back(std::move(item));
  }
  if (persisted.fstab_new || !persisted.fstab_notes.empty()) {
    PlanItem item;
    item.key = "persist.fstab";
    if (persisted.fstab_new) {
      item.status = PlanItem::Status::kChange;
      item.summary = fmt::format("add noatime to entries of {} (backed up first)", kFstab);
      item.changes.push_back(
          {"persist.fstab", "file", kFstab, persisted.fstab_old, *persisted.fstab_new, false});
    } else {
      item.status = PlanItem::Status::kNotApplicable;
      item.summary = fmt::format("{} has no entry to change", kFstab);
    }
    item.notes = persisted.fstab_notes;
    plan.items.push_back(std::move(item));
  }
  return plan;
}

std::vector<std::pair<std::string, std::string>> memcg_swappiness_differing(
    const host::Root& root, const std::string& value, std::size_t limit) {
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::string> dirs = {"/sys/fs/cgroup/memory"};
  std::size_t seen = 0;
  while (!dirs.empty() && seen < limit) {
    const std::string dir = dirs.back();
    dirs.pop_back();
    auto names = root.list(dir);
    if (!names || !*names) continue;
    for (const auto& name : **names) {
      const std::string sub = dir + "/" + name;
      auto st = root.stat(sub);
      if (!st || !*st || (*st)->kind != host::Kind::kDirectory) continue;
      if (++seen > limit) break;
      dirs.push_back(sub);
      const std::string file = sub + "/memory.swappiness";
      if (auto v = read_trimmed(root, file); v && *v != value) out.emplace_back(file, *v);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace dltune::tune

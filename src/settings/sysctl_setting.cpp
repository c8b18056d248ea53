// Sysctls (/proc/sys) and, riding on vm.swappiness, the memory.swappiness of cgroup-v1 memory
// groups, which keep their own value when the sysctl changes.
#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/sysctl_files.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::settings {

namespace {

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

Result<std::optional<std::string>> read_virtual(const host::Root& root, const std::string& target) {
  return root.read(target);
}

Result<std::string> write_virtual(const host::Root& root, const std::string& target,
                                  const std::string& value) {
  return root.write_virtual(target, value);
}

Result<std::string> write_cgroup(const host::Root& root, const std::string& target,
                                 const std::string& value) {
  // A group that went away since the plan (its job ended) has no value to set or restore.
  if (!root.exists(target)) return value;
  return root.write_virtual(target, value);
}

}  // namespace

const ChangeKind kSysctlChange = {"sysctl", read_virtual, write_virtual, false};
const ChangeKind kSysfsChange = {"sysfs", read_virtual, write_virtual, false};
const ChangeKind kCgroupChange = {"cgroup", read_virtual, write_cgroup, false};

Result<void> plan_sysctl(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const auto& root = context.root;
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
  context.persisted.sysctls[*sysctl_normalise(e.key)] = target.value_or(*current);
  const auto& cgroup = context.facts.os.cgroup;
  const bool memcg_v1 = e.key == "vm.swappiness" && cgroup && cgroup->version != "v2";
  if (!target) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = fmt::format("already {}", *current);
    if (memcg_v1) plan_memcg_swappiness(root, *current, context.cgroups, item);
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
  if (memcg_v1) plan_memcg_swappiness(root, *target, context.cgroups, item);
  return {};
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

std::vector<Finding> check_sysctl(const CheckInput& in, const ProfileEntry& entry) {
  const char* area = area_of(entry.key);
  auto path = sysctl_path(entry.key);
  if (!path) return {not_applicable(entry, area, path.error().message())};
  auto raw = in.root.read(*path, 65536);
  if (!raw) {
    Finding f = judge(entry, area, "", {{*path, raw.error().message()}});
    f.summary = fmt::format("{}: cannot read {}", entry.key, raw.error().message());
    f.severity = Severity::kInfo;
    return {f};
  }
  if (!*raw) {
    // Inside a container only the namespaced sysctls (net.*, some kernel.*) are visible.
    return {not_applicable(entry, area,
                           in.in_container
                               ? "not visible inside this container (a host-wide setting: check "
                                 "it on the host)"
                               : "this kernel has no " + *path)};
  }
  const std::string value = text::normalise_spaces(**raw);
  std::string actual = value;
  if (entry.field) {
    const auto fl = text::fields(value);
    const auto i = static_cast<std::size_t>(*entry.field - 1);
    actual = i < fl.size() ? std::string(fl[i]) : "";
  }
  Finding f = judge(entry, area, actual, {{*path, value}});
  if (entry.field) f.summary += fmt::format(" (field {} of \"{}\")", *entry.field, value);
  if (f.severity != Severity::kOk) f.fix = tune_fix(entry.key);
  if (in.sysctl_files) {
    auto key = sysctl_normalise(entry.key);
    if (key) {
      for (const auto& s : in.sysctl_files->sources(*key))
        f.evidence.push_back({fmt::format("{}:{}", s.file, s.line), s.value});
      for (const auto& s : in.sysctl_files->overriding_dltune(*key))
        f.notes.push_back(
            fmt::format("{}:{} sets {} = {} and is applied after {}: it would "
                        "override a persisted value at boot",
                        s.file, s.line, entry.key, s.value, kDltuneSysctlFile));
    }
  }
  // net.* sysctls are per network namespace, so a container may set them itself; the rest are
  // the host's (docker run --sysctl accepts only namespaced ones).
  // The whole value as tune would write it: every field of a multi-field one (tcp_rmem's
  // "4096 131072 16777216"), quoted for the shell.
  const bool namespaced = entry.key.starts_with("net.");
  std::string flag;
  if (namespaced && f.severity != Severity::kOk)
    if (const auto target = target_value(entry.expected, value, entry.field))
      flag = "docker run --sysctl " + text::shell_quote(entry.key + "=" + *target);
  container_advice(in, f, flag);
  return {f};
}

}  // namespace dltune::settings

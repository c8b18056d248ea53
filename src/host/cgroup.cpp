#include "host/cgroup.hpp"

#include <algorithm>
#include <set>

#include "host/parse/proc.hpp"

namespace dltune::host {

namespace {

// The v1 controllers (Documentation/admin-guide/cgroup-v1/cgroups.rst); the other words in a v1
// mount's super options are options ("rw", "name=systemd", "clone_children", "noprefix"...).
bool is_v1_controller(std::string_view word) {
  static const std::set<std::string_view> kControllers = {
      "cpu",     "cpuacct",  "cpuset", "memory",     "blkio",   "devices", "freezer",
      "net_cls", "net_prio", "pids",   "perf_event", "hugetlb", "rdma",    "misc"};
  return kControllers.count(word) != 0;
}

// The hierarchy whose /dltune lists the jobs on a v1 host: memory first (every job has a memory
// group), else the CPU accounting ones.
std::optional<std::string> v1_mount(const CgroupLayout& layout) {
  for (const char* want : {"memory", "cpuacct", "cpu"})
    for (const auto& [controller, mount] : layout.v1)
      if (controller == want) return mount;
  return std::nullopt;
}

}  // namespace

Result<CgroupLayout> cgroup_layout(const Root& root) {
  constexpr const char* kMountinfo = "/proc/self/mountinfo";
  auto text = root.read(kMountinfo);
  if (!text) return tl::unexpected(text.error());
  if (!*text) return fail("cannot find the mounted cgroups: no", kMountinfo, ENOENT);
  auto mounts = parse::mountinfo(**text);
  if (!mounts)
    return fail(mounts.error().what, std::string(kMountinfo) + ": " + mounts.error().input);
  CgroupLayout layout;
  for (const auto& m : *mounts) {
    if (m.fstype == "cgroup2") {
      if (!layout.unified) layout.unified = m.mount_point;
      continue;
    }
    if (m.fstype != "cgroup") continue;
    for (const auto& o : m.super_options) {
      if (!is_v1_controller(o)) continue;
      const bool known = std::any_of(layout.v1.begin(), layout.v1.end(),
                                     [&](const auto& p) { return p.first == o; });
      if (!known) layout.v1.emplace_back(o, m.mount_point);  // a second mount: the same tree
    }
  }
  if (!layout.v1.empty())
    layout.version = "v1";
  else if (layout.unified)
    layout.version = "v2";
  else
    return fail("no cgroup file system is mounted (neither cgroup2 nor a v1 controller) in",
                kMountinfo);
  return layout;
}

Result<void> check_cgroup_name(const std::string& name) {
  const bool chars_ok = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
  if (name.empty() || !chars_ok || name == "." || name == ".." || name.size() > 64)
    return fail("a cgroup name is 1 to 64 of A-Z a-z 0-9 _ . - (and not '.' or '..'), not",
                "'" + name + "'");
  return {};
}

Result<std::vector<std::string>> discover_job_groups(const Root& root, const CgroupLayout& layout,
                                                     std::map<std::string, bool>* is_group) {
  const auto mount = layout.version == "v2" ? layout.unified : v1_mount(layout);
  std::vector<std::string> out;
  if (!mount) return out;
  const std::string parent = *mount + "/dltune";
  auto names = root.list(parent);
  if (!names) return tl::unexpected(names.error());
  if (!*names) return out;
  std::map<std::string, bool> seen;
  for (const auto& name : **names) {
    // The control files (cgroup.procs, memory.max, tasks) are files; a group is a directory.
    if (!check_cgroup_name(name)) continue;
    std::optional<bool> group;
    if (is_group != nullptr)
      if (const auto it = is_group->find(name); it != is_group->end()) group = it->second;
    if (!group) {
      auto info = root.stat(parent + "/" + name);
      if (!info || !*info) continue;  // gone meanwhile: not remembered
      group = (*info)->kind == Kind::kDirectory;
    }
    seen.emplace(name, *group);
    if (*group) out.push_back("/dltune/" + name);
  }
  if (is_group) *is_group = std::move(seen);
  return out;
}

}  // namespace dltune::host

// Job cgroups for serve (job_groups.hpp).
#include "serve/job_groups.hpp"

#include <algorithm>
#include <utility>

namespace dltune::serve {

namespace {

// The hierarchy whose /dltune lists the jobs on a v1 host: memory first (every job has a memory
// group), else the CPU accounting ones.
std::optional<std::string> v1_mount(const launch::CgroupLayout& layout) {
  for (const char* want : {"memory", "cpuacct", "cpu"})
    for (const auto& [controller, mount] : layout.v1)
      if (controller == want) return mount;
  return std::nullopt;
}

std::string trimmed(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

Result<std::vector<std::string>> discover_job_groups(const host::Root& root,
                                                     const launch::CgroupLayout& layout,
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
    if (!launch::check_cgroup_name(name)) continue;
    std::optional<bool> group;
    if (is_group != nullptr)
      if (const auto it = is_group->find(name); it != is_group->end()) group = it->second;
    if (!group) {
      auto info = root.stat(parent + "/" + name);
      if (!info || !*info) continue;  // gone meanwhile: not remembered
      group = (*info)->kind == host::Kind::kDirectory;
    }
    seen.emplace(name, *group);
    if (*group) out.push_back("/dltune/" + name);
  }
  if (is_group) *is_group = std::move(seen);
  return out;
}

JobGroups::JobGroups(const host::Root& root, std::vector<std::string> named, bool discover)
    : root_(root), discover_(discover) {
  for (auto& n : named) named_.push_back(trimmed(std::move(n)));
}

void JobGroups::collect(std::vector<monitor::Cgroup>& out, monitor::Notices& notices) {
  wanted_ = named_;
  if (discover_) {
    if (!layout_) {
      auto layout = launch::cgroup_layout(root_);
      if (layout)
        layout_ = std::move(*layout);
      else
        notices.once("serve-layout",
                     "no job cgroups: cannot find the cgroup mounts: " + layout.error().message());
    }
    if (layout_) {
      auto found = discover_job_groups(root_, *layout_, &is_group_);
      if (found)
        wanted_.insert(wanted_.end(), found->begin(), found->end());
      else
        notices.once("serve-discover:" + found.error().message(),
                     "cannot list the job cgroups: " + found.error().message());
    }
  }
  std::sort(wanted_.begin(), wanted_.end());
  wanted_.erase(std::unique(wanted_.begin(), wanted_.end()), wanted_.end());
  for (auto it = open_.begin(); it != open_.end();) {
    if (std::binary_search(wanted_.begin(), wanted_.end(), it->first))
      ++it;
    else
      it = open_.erase(it);
  }
  std::size_t n = 0;
  for (const auto& path : wanted_) {
    auto it = open_.find(path);
    const bool named = std::find(named_.begin(), named_.end(), path) != named_.end();
    if (it == open_.end()) {
      auto c = monitor::CgroupCollector::open(root_, path);
      if (!c) {
        // A discovered group that went away meanwhile is simply gone; a named one is said once
        // and tried again at every sample (the job may not have started yet).
        if (named)
          notices.once("serve-open:" + path,
                       "--cgroup " + path + ": " + c.error().message() + " (tried again)");
        continue;
      }
      it = open_.emplace(path, std::move(*c)).first;
    }
    if (auto ok = it->second.collect(one_, notices); !ok) {
      notices.once("serve-collect:" + path + ok.error().message(),
                   "job cgroup " + path + ": " + ok.error().message());
      open_.erase(it);
      continue;
    }
    if (!one_) {  // removed since it was opened
      open_.erase(it);
      continue;
    }
    if (out.size() <= n) out.emplace_back();
    std::swap(out[n], *one_);  // the old element's strings are reused next time
    ++n;
  }
  out.resize(n);
}

}  // namespace dltune::serve

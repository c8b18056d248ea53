// Job cgroups for serve (job_groups.hpp).
#include "serve/job_groups.hpp"

#include <pwd.h>

#include <algorithm>
#include <utility>

namespace dltune::serve {

namespace {

std::string trimmed(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

std::string JobGroups::user_name(unsigned uid) {
  if (const auto it = user_names_.find(uid); it != user_names_.end()) return it->second;
  std::string name = std::to_string(uid);
  if (root_.live()) {
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr)
      name = found->pw_name;
  }
  return user_names_.emplace(uid, std::move(name)).first->second;
}

JobGroups::JobGroups(const host::Root& root, std::vector<std::string> named, bool discover)
    : root_(root), discover_(discover) {
  for (auto& n : named) named_.push_back(trimmed(std::move(n)));
}

void JobGroups::collect(std::vector<monitor::Cgroup>& out, monitor::Notices& notices,
                        bool with_members) {
  wanted_ = named_;
  if (discover_) {
    if (!layout_) {
      auto layout = host::cgroup_layout(root_);
      if (layout)
        layout_ = std::move(*layout);
      else
        notices.once("serve-layout",
                     "no job cgroups: cannot find the cgroup mounts: " + layout.error().message());
    }
    if (layout_) {
      auto found = host::discover_job_groups(root_, *layout_, &is_group_);
      if (found)
        wanted_.insert(wanted_.end(), found->begin(), found->end());
      else
        notices.once("serve-discover:" + found.error().message(),
                     "cannot list the job cgroups: " + found.error().message());
      slurm_.clear();
      if (auto jobs = host::discover_slurm_jobs(root_, *layout_, &slurm_is_group_); jobs) {
        // Each job's own group (all its steps together) and each step's, which carries the
        // step label: a job's series are those without one.
        for (const auto& j : *jobs) {
          const std::string user = j.uid ? user_name(*j.uid) : std::string();
          wanted_.push_back(j.path);
          slurm_[j.path] = {j.job_id, user, {}};
          for (const auto& step : j.steps) {
            std::string path = j.path + "/step_" + step;
            wanted_.push_back(path);
            slurm_[std::move(path)] = {j.job_id, user, step};
          }
        }
      } else {
        notices.once("serve-slurm:" + jobs.error().message(),
                     "cannot list Slurm's job cgroups: " + jobs.error().message());
      }
      pods_.clear();
      if (auto pods = host::discover_pod_groups(root_, *layout_, &pods_is_group_); pods) {
        for (const auto& p : *pods) {
          wanted_.push_back(p.path);
          pods_[p.path] = p.uid;
        }
      } else {
        notices.once("serve-pods:" + pods.error().message(),
                     "cannot list Kubernetes' pod cgroups: " + pods.error().message());
      }
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
    if (with_members) {
      if (members_.size() <= n) members_.emplace_back();
      members_[n] = it->second.pids();
    }
    ++n;
  }
  out.resize(n);
  members_.resize(with_members ? n : 0);
}

}  // namespace dltune::serve

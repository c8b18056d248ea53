#pragma once
// The job cgroups that `serve` exports: those that `dltune run` made (the groups below dltune's
// parent group "dltune", found afresh at every sample) and those named with --cgroup.
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/cgroup.hpp"
#include "host/root.hpp"
#include "monitor/sampler.hpp"

namespace dltune::serve {

// Opens a collector per group and keeps it while the group lives.
class JobGroups {
 public:
  // `named`: the --cgroup paths (kept, and retried, even while they do not exist);
  // `discover`: also the groups below /dltune.
  JobGroups(const host::Root& root, std::vector<std::string> named, bool discover);
  // The counters of every group now, sorted by path. Groups that appeared are opened, groups
  // that went away are dropped; what fails is said once in `notices`.
  void collect(std::vector<monitor::Cgroup>& out, monitor::Notices& notices);

 private:
  const host::Root& root_;
  std::vector<std::string> named_;
  bool discover_ = true;
  std::optional<host::CgroupLayout> layout_;
  std::map<std::string, monitor::CgroupCollector> open_;
  std::vector<std::string> wanted_;  // reused
  std::map<std::string, bool> is_group_;
  std::optional<monitor::Cgroup> one_;
};

}  // namespace dltune::serve

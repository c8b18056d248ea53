#pragma once
// The job cgroups that `serve` exports: those that `dltune run` made (the groups below dltune's
// parent group "dltune", found afresh at every sample) and those named with --cgroup.
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "launch/cgroup.hpp"
#include "monitor/sampler.hpp"

namespace dltune::serve {

// The groups below /dltune, as /proc/PID/cgroup names them ("/dltune/NAME"), sorted. `run`
// creates /dltune/NAME in every hierarchy (launch/cgroup_v1.cpp, cgroup_v2.cpp); the list is
// read from the unified mount on v2 and from the memory hierarchy on v1 (or cpuacct, or cpu,
// where memory is not mounted). No "dltune" group yet is no job: an empty list.
// `is_group`, when given, remembers which names are groups (directories) and which are control
// files, so that a listing every sample costs no stat of the same names again: a name's kind
// never changes in a cgroup file system. Names no longer listed are forgotten.
[[nodiscard]] Result<std::vector<std::string>> discover_job_groups(
    const host::Root& root, const launch::CgroupLayout& layout,
    std::map<std::string, bool>* is_group = nullptr);

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
  std::optional<launch::CgroupLayout> layout_;
  std::map<std::string, monitor::CgroupCollector> open_;
  std::vector<std::string> wanted_;  // reused
  std::map<std::string, bool> is_group_;
  std::optional<monitor::Cgroup> one_;
};

}  // namespace dltune::serve

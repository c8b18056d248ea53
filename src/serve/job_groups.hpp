#pragma once
// The job cgroups that `serve` exports: those that `dltune run` made (the groups below dltune's
// parent group "dltune"), Slurm's jobs and their steps (host::discover_slurm_jobs, each with
// its job id, user and step) and Kubernetes' pods (host::discover_pod_groups, each with its
// UID; one group per pod, not per container: the series stay bounded by the node's pods), all
// found afresh at every sample, and those named with --cgroup.
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/cgroup.hpp"
#include "host/root.hpp"
#include "monitor/sampler.hpp"
#include "serve/exposition.hpp"

namespace dltune::serve {

// Opens a collector per group and keeps it while the group lives.
class JobGroups {
 public:
  // `named`: the --cgroup paths (kept, and retried, even while they do not exist);
  // `discover`: also the groups below /dltune and Slurm's jobs.
  JobGroups(const host::Root& root, std::vector<std::string> named, bool discover);
  // The counters of every group now, sorted by path. Groups that appeared are opened, groups
  // that went away are dropped; what fails is said once in `notices`. `with_members`: also read
  // each group's member pids (cgroup.procs, see members), which costs a read of each group's
  // list: the exporter asks only when some GPU lists a compute process.
  void collect(std::vector<monitor::Cgroup>& out, monitor::Notices& notices,
               bool with_members = false);
  // Beside the last collect's groups, each one's member pids, sorted (CgroupCollector::pids: for
  // a group that holds none itself, those of the groups below it); empty when that collect was
  // not asked for them.
  [[nodiscard]] const std::vector<std::vector<pid_t>>& members() const { return members_; }
  // Which of the groups of the last collect are Slurm's jobs, with their labels.
  [[nodiscard]] const SlurmJobs& slurm_jobs() const { return slurm_; }
  // Which of them are Kubernetes pods, with their UIDs.
  [[nodiscard]] const PodUids& pods() const { return pods_; }

 private:
  // The user's name on this host (the uid's number in a host tree, or when it has none).
  std::string user_name(unsigned uid);

  const host::Root& root_;
  std::vector<std::string> named_;
  bool discover_ = true;
  std::optional<host::CgroupLayout> layout_;
  std::map<std::string, monitor::CgroupCollector> open_;
  std::vector<std::string> wanted_;  // reused
  std::map<std::string, bool> is_group_;
  SlurmJobs slurm_;
  std::map<std::string, bool> slurm_is_group_;
  PodUids pods_;
  std::map<std::string, bool> pods_is_group_;
  std::map<unsigned, std::string> user_names_;
  std::optional<monitor::Cgroup> one_;
  std::vector<std::vector<pid_t>> members_;
};

}  // namespace dltune::serve

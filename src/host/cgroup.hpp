#pragma once
// The read side of the host's cgroups, for every module that looks at them (run, the
// collectors, serve, doctor): where the hierarchies are mounted, which names a job's group may
// have, and which job groups `dltune run` has made. Creating and removing groups is launch's.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"

namespace dltune::host {

// Where the host's cgroups are and which version is in use, from /proc/self/mountinfo.
struct CgroupLayout {
  std::string version;                 // "v2", "v1" ("hybrid" hosts are "v1" here)
  std::optional<std::string> unified;  // the cgroup2 mount (v2, or hybrid's extra one)
  std::vector<std::pair<std::string, std::string>> v1;  // controller -> mount point
};
[[nodiscard]] Result<CgroupLayout> cgroup_layout(const Root& root);

// Whether `name` is one plain cgroup path component: [A-Za-z0-9_.-]+, not "." or "..".
[[nodiscard]] bool is_plain_cgroup_name(std::string_view name);

// Whether `name` can name a job's group: [A-Za-z0-9_.-]+, not "." or "..", at most 64 chars.
[[nodiscard]] Result<void> check_cgroup_name(const std::string& name);

// The groups below /dltune (dltune's parent group, which `run` creates in every hierarchy), as
// /proc/PID/cgroup names them ("/dltune/NAME"), sorted. The list is read from the unified mount
// on v2 and from the memory hierarchy on v1 (or cpuacct, or cpu, where memory is not mounted).
// No "dltune" group yet is no job: an empty list. `is_group`, when given, remembers which names
// are groups (directories) and which are control files, so that a listing every sample costs no
// stat of the same names again: a name's kind never changes in a cgroup file system. Names no
// longer listed are forgotten.
[[nodiscard]] Result<std::vector<std::string>> discover_job_groups(
    const Root& root, const CgroupLayout& layout, std::map<std::string, bool>* is_group = nullptr);

// A Slurm job's group on this node, as Slurm's cgroup plugins make it (task/cgroup,
// proctrack/cgroup; Slurm 22.05's cgroup.conf CgroupPlugin):
//   v1  /slurm/uid_U/job_J (or /slurm_NODE/..., the root a build for several slurmds per host
//       names after the node), in the memory, cpuset and freezer hierarchies (cpuacct too with
//       JobAcctGatherType=jobacct_gather/cgroup); steps step_S below it (step_batch,
//       step_extern, step_0), each task's group task_T below a step in some hierarchies;
//   v2  /system.slice/slurmstepd.scope/job_J (NODE_slurmstepd.scope for several slurmds, or at
//       the top without systemd), steps below it, the user's processes in step_S/user/task_T.
// The processes are only in the leaves; a job's group holds none itself.
struct SlurmJobGroup {
  std::string path;                // as /proc/PID/cgroup names it: "/slurm/uid_1000/job_42"
  std::string job_id;              // "42"
  std::optional<unsigned> uid;     // v1: from uid_U; v2: the owner of a process in the job
  std::vector<std::string> steps;  // "0", "batch", "extern": step_S's S, sorted
  // The group's directory's inode where it was listed: Slurm removes a job's group when its
  // last step ends and makes it again for the next, so a group found again with another inode
  // is a new one (its counters start over); 0 when it could not be read.
  std::uint64_t inode = 0;
  std::string dir;  // the directory that inode is of, in the root: "/sys/fs/cgroup/memory" + path
};
// The Slurm step a cgroup path (as /proc/PID/cgroup names it) lies in, by the names above:
// "/slurm_vm/uid_0/job_5/step_0/task_0" is job 5's step 0, "task_0" below it. Empty for any
// other path: no job_J/step_S pair, or nothing Slurm's ("slurm", "slurm_NODE",
// "...slurmstepd.scope") above the job, or a name that is not a plain cgroup name.
struct SlurmStepPath {
  std::string job_id;      // "5"
  std::string step;        // "0", "batch", "extern"
  std::string step_group;  // the path through step_S: "/slurm_vm/uid_0/job_5/step_0"
  std::string below;       // the rest: "task_0" (v1), "user/task_0" (v2), "" at the step itself
};
[[nodiscard]] std::optional<SlurmStepPath> slurm_step_of(std::string_view cgroup_path);

// Every Slurm job group on this host, sorted by job id (numerically); none (no Slurm, or no job)
// is an empty list. Listed from the memory hierarchy on v1 (or cpuset, freezer, cpuacct).
// `is_group`, when given, remembers the kinds of the names seen, as for discover_job_groups.
[[nodiscard]] Result<std::vector<SlurmJobGroup>> discover_slurm_jobs(
    const Root& root, const CgroupLayout& layout, std::map<std::string, bool>* is_group = nullptr);

// A Kubernetes pod's group on this node, as the kubelet makes it (its cgroup manager,
// pkg/kubelet/cm): with the cgroupfs driver /kubepods/pod<UID> (Guaranteed),
// /kubepods/burstable/pod<UID>, /kubepods/besteffort/pod<UID>; with the systemd driver
// /kubepods.slice/kubepods-pod<UID>.slice and /kubepods.slice/kubepods-QOS.slice/
// kubepods-QOS-pod<UID>.slice, the UID's dashes written as '_'. Its containers' groups are below
// it.
struct PodGroup {
  std::string path;  // as /proc/PID/cgroup names it
  std::string uid;   // the pod's metadata.uid, with its dashes
  std::string qos;   // "guaranteed", "burstable", "besteffort"
};
// Every pod group on this host, sorted by path; none (not a Kubernetes node) is an empty list.
// Listed from the unified mount on v2, the memory hierarchy on v1 (or cpu, cpuacct, cpuset).
// `is_group` as for discover_job_groups.
[[nodiscard]] Result<std::vector<PodGroup>> discover_pod_groups(
    const Root& root, const CgroupLayout& layout, std::map<std::string, bool>* is_group = nullptr);

}  // namespace dltune::host

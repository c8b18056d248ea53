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

}  // namespace dltune::host

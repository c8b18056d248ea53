#include "launch/slurm_step.hpp"

#include <algorithm>

#include "host/parse/proc.hpp"

namespace dltune::launch {

Result<std::optional<SlurmStep>> find_slurm_step(const host::Root& root,
                                                 const host::CgroupLayout& layout,
                                                 const std::string& proc_cgroup) {
  auto text = root.read(proc_cgroup);
  if (!text) return tl::unexpected(text.error());
  if (!*text) return std::nullopt;  // a tree without it: no process, no step
  auto groups = host::parse::proc_cgroup(**text);
  if (!groups) return fail(groups.error().what, proc_cgroup + ": " + groups.error().input);
  SlurmStep step;
  const auto add = [&](const host::SlurmStepPath& at, const std::string& mount,
                       const std::string& group) -> Result<void> {
    if (!step.job_id.empty() && (step.job_id != at.job_id || step.step != at.step))
      return fail("this process is in the groups of two Slurm steps (job_" + step.job_id +
                      "/step_" + step.step + " and job_" + at.job_id + "/step_" + at.step + ") in",
                  proc_cgroup);
    step.job_id = at.job_id;
    step.step = at.step;
    step.place.nest[mount] = mount + group;
    return {};
  };
  for (const auto& [controller, mount] : layout.v1) {
    // The controllers a job's groups use (cgroup_v1.cpp); cpu and cpuacct may be one hierarchy.
    if (controller != "cpu" && controller != "cpuacct" && controller != "cpuset" &&
        controller != "memory" && controller != "blkio")
      continue;
    if (step.place.nest.count(mount)) continue;
    const std::string& wanted = controller;  // (a structured binding, not captured by clang 14)
    const auto g = std::find_if(groups->begin(), groups->end(), [&](const auto& m) {
      return std::find(m.controllers.begin(), m.controllers.end(), wanted) != m.controllers.end();
    });
    if (g == groups->end()) continue;
    const auto at = host::slurm_step_of(g->path);
    // v1 groups may hold processes and groups both: dltune's goes in this process's own, the
    // task's (or the step's, in a hierarchy without task groups).
    if (!at || !(at->below.empty() || at->below.rfind("task_", 0) == 0) ||
        at->below.find('/') != std::string::npos)
      continue;
    if (auto ok = add(*at, mount, g->path); !ok) return tl::unexpected(ok.error());
  }
  if (layout.unified) {
    const auto g = std::find_if(groups->begin(), groups->end(),
                                [](const auto& m) { return m.hierarchy == 0; });
    const auto at = g == groups->end() ? std::nullopt : host::slurm_step_of(g->path);
    // v2 (Slurm's cgroup/v2): the tasks are in step_S/user/task_T; dltune's parent goes beside
    // the task's group, in "user".
    if (at && at->below.rfind("user/", 0) == 0 && at->below.find('/', 5) == std::string::npos)
      if (auto ok = add(*at, *layout.unified, at->step_group + "/user"); !ok)
        return tl::unexpected(ok.error());
  }
  if (step.job_id.empty()) return std::nullopt;
  return step;
}

}  // namespace dltune::launch

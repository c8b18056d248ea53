// Roles of the processes of a job (monitor/roles.hpp).
#include "monitor/roles.hpp"

#include <algorithm>

namespace dltune::monitor {

namespace {

bool contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

bool has_pid(const std::vector<Process>& procs, pid_t pid) {
  const auto it = std::lower_bound(procs.begin(), procs.end(), pid,
                                   [](const Process& p, pid_t v) { return p.pid < v; });
  return it != procs.end() && it->pid == pid;
}

}  // namespace

Role descendant_role(std::string_view comm, std::string_view cmdline,
                     std::string_view main_cmdline) {
  if (comm == "pt_data_worker") return Role::kWorker;
  if (!cmdline.empty() && cmdline == main_cmdline) return Role::kWorker;
  // multiprocessing's spawn and forkserver start methods run
  //   python -c "from multiprocessing.spawn import spawn_main; spawn_main(...)"
  //   --multiprocessing-fork python -c "from multiprocessing.forkserver import main; main(...)"
  // (CPython Lib/multiprocessing/spawn.py get_command_line, forkserver.py).
  if (contains(cmdline, "multiprocessing.spawn") ||
      contains(cmdline, "multiprocessing.forkserver") || contains(cmdline, "from multiprocessing"))
    return Role::kWorker;
  return Role::kChild;
}

void assign_roles(std::vector<Process>& procs, Scope::Kind kind, pid_t root) {
  const Process* main = nullptr;
  if (kind == Scope::Kind::kTree) {
    for (const auto& p : procs)
      if (p.pid == root) main = &p;
  } else if (kind == Scope::Kind::kCgroup) {
    // By pid: the first found is the lowest. In a Slurm job's group, slurmstepd (Slurm's own
    // process, in the job's group) is never the job's: its children are the job's first.
    const auto slurm = [&](pid_t pid) {
      const auto it = std::lower_bound(procs.begin(), procs.end(), pid,
                                       [](const Process& p, pid_t v) { return p.pid < v; });
      return it != procs.end() && it->pid == pid && it->comm == "slurmstepd";
    };
    for (const auto& p : procs)
      if (p.comm != "slurmstepd" && (!has_pid(procs, p.ppid) || slurm(p.ppid))) {
        main = &p;
        break;
      }
  }
  const bool job = kind == Scope::Kind::kTree || kind == Scope::Kind::kCgroup;
  const std::string_view main_cmdline = main != nullptr ? std::string_view(main->cmdline) : "";
  for (auto& p : procs) {
    if (!job)
      p.role = Role::kOther;
    else if (&p == main)
      p.role = Role::kMain;
    else
      p.role = descendant_role(p.comm, p.cmdline, main_cmdline);
  }
}

}  // namespace dltune::monitor

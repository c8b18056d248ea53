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
  // A fork of a shell is a subshell, not a DataLoader worker: a version manager's shim (pyenv's
  // `python` is a bash script that runs `$(pyenv-version-name)` and the like before it execs the
  // interpreter) forks a few with the main process's command line while the job starts.
  const bool shell = comm == "bash" || comm == "sh" || comm == "dash" || comm == "zsh" ||
                     comm == "ksh" || comm == "fish" || comm.starts_with("pyenv") ||
                     comm.starts_with("rbenv") || comm.starts_with("asdf");
  if (!cmdline.empty() && cmdline == main_cmdline && !shell) return Role::kWorker;
  // multiprocessing's spawn and forkserver start methods run
  //   python -c "from multiprocessing.spawn import spawn_main; spawn_main(...)"
  //   --multiprocessing-fork python -c "from multiprocessing.forkserver import main; main(...)"
  // (CPython Lib/multiprocessing/spawn.py get_command_line, forkserver.py).
  if (contains(cmdline, "multiprocessing.spawn") ||
      contains(cmdline, "multiprocessing.forkserver") || contains(cmdline, "from multiprocessing"))
    return Role::kWorker;
  return Role::kChild;
}

bool is_rank_launcher(std::string_view cmdline) {
  for (std::string_view launcher :
       {"torchrun", "torch.distributed.run", "torch.distributed.launch"})
    if (contains(cmdline, launcher)) return true;
  // `dltune run --nproc N -- COMMAND` starts the ranks itself (launch/rank_plan.hpp).
  const auto first = cmdline.substr(0, cmdline.find(' '));
  const auto name = first.substr(first.rfind('/') + 1);
  const auto options = cmdline.substr(0, cmdline.find(" -- "));
  return name == "dltune" && contains(options, " run ") && contains(options, " --nproc");
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
  const pid_t main_pid = main != nullptr ? main->pid : 0;
  const bool launcher = main != nullptr && is_rank_launcher(main_cmdline);
  for (auto& p : procs) {
    if (!job)
      p.role = Role::kOther;
    else if (p.pid == main_pid)
      p.role = Role::kMain;
    else if (launcher && p.ppid == main_pid)
      p.role = Role::kRank;  // torchrun's or dltune run's ranks
    else
      p.role = descendant_role(p.comm, p.cmdline, main_cmdline);
  }
  if (!job || main == nullptr) return;
  // A rank's own descendants are named against the rank's command line (its DataLoader
  // workers), not the launcher's.
  if (launcher)
    for (auto& p : procs) {
      if (p.role == Role::kMain || p.role == Role::kRank) continue;
      const auto parent = std::lower_bound(procs.begin(), procs.end(), p.ppid,
                                           [](const Process& x, pid_t v) { return x.pid < v; });
      if (parent != procs.end() && parent->pid == p.ppid && parent->role == Role::kRank)
        p.role = descendant_role(p.comm, p.cmdline, parent->cmdline);
    }
  // In a group whose launcher is outside it (dltune run --nproc's group, srun's tasks): the main
  // process's siblings of its command line are ranks too, when they started from outside.
  if (kind == Scope::Kind::kCgroup)
    for (auto& p : procs)
      if (p.pid != main_pid && p.cmdline == main_cmdline && !has_pid(procs, p.ppid))
        p.role = Role::kRank;
}

}  // namespace dltune::monitor

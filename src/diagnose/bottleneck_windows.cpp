// A job's samples as windows: the main process's (WindowBuilder), and under a launcher each
// rank's own, its tree re-rooted at the rank (JobWindows); where the steady state starts.
#include "diagnose/bottleneck.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "monitor/roles.hpp"

namespace dltune::diagnose {

void WindowBuilder::add(monitor::Sample&& s, const PyTally* py) {
  const monitor::Process* main = nullptr;
  std::size_t workers = 0, children = 0;
  for (const auto& p : s.processes) {
    if (p.state == 'Z' || p.state == 'X') continue;  // ended, not yet reaped by its parent
    if (p.role == monitor::Role::kMain) main = &p;
    if (p.role == monitor::Role::kWorker) ++workers;
    if (p.role == monitor::Role::kChild) ++children;
  }
  if (main != nullptr) {
    if (job_.main == 0) {
      job_.main = main->pid;
      job_.comm = main->comm;
      job_.cmdline = main->cmdline;
    }
    if (!job_.rank) job_.rank = main->rank;
    ++job_.samples_with_main;
    job_.max_workers = std::max(job_.max_workers, workers);
    job_.max_children = std::max(job_.max_children, children);
  } else if (job_.main != 0) {
    job_.main_gone = true;
  }
  note_gpus(s);
  if (previous_) {
    const auto m = monitor::Model::from(s, &*previous_);
    if (m.has_rates) {
      w_.wall_ns.push_back(s.wall_ns);
      w_.samples.push_back(signals_of(m));
      if (const auto& table = builtin_py_activities(); py != nullptr && table)
        set_py_signals(w_.samples.back(), *py, *table);
    }
  }
  previous_ = std::move(s);
}

void WindowBuilder::note_gpus(const monitor::Sample& s) {
  for (const auto& g : s.gpus) {
    std::uint64_t bytes = 0;
    bool used = false;
    for (const auto& gp : g.processes) {
      // The sample's processes are sorted by pid.
      const auto it =
          std::lower_bound(s.processes.begin(), s.processes.end(), gp.pid,
                           [](const monitor::Process& p, pid_t pid) { return p.pid < pid; });
      if (it == s.processes.end() || it->pid != gp.pid) continue;
      if (it->role != monitor::Role::kMain && it->role != monitor::Role::kWorker &&
          it->role != monitor::Role::kChild)
        continue;
      used = true;
      bytes += gp.used_memory_bytes.value_or(0);
    }
    if (!used) continue;
    auto u = std::find_if(job_.gpus.begin(), job_.gpus.end(),
                          [&](const JobSeen::GpuUse& x) { return x.index == g.index; });
    if (u == job_.gpus.end()) {
      JobSeen::GpuUse fresh;
      fresh.index = g.index;
      fresh.uuid = g.uuid;
      job_.gpus.push_back(std::move(fresh));
      std::sort(
          job_.gpus.begin(), job_.gpus.end(),
          [](const JobSeen::GpuUse& a, const JobSeen::GpuUse& b) { return a.index < b.index; });
      u = std::find_if(job_.gpus.begin(), job_.gpus.end(),
                       [&](const JobSeen::GpuUse& x) { return x.index == g.index; });
    }
    u->peak_memory_bytes = std::max(u->peak_memory_bytes, bytes);
  }
}

bool is_rank_launcher(std::string_view cmdline) {
  return monitor::is_rank_launcher(cmdline);
}

std::vector<pid_t> ranks_of(const monitor::Sample& s) {
  std::vector<pid_t> out;
  const monitor::Process* main = nullptr;
  for (const auto& p : s.processes)
    if (p.role == monitor::Role::kMain) main = &p;
  if (main == nullptr) return out;
  if (is_rank_launcher(main->cmdline)) {
    for (const auto& p : s.processes)
      if (p.ppid == main->pid && p.state != 'Z') out.push_back(p.pid);
    return out;
  }
  // A job's group whose launcher is outside it (`dltune run --nproc N` records the job's group;
  // srun -n N in a Slurm job's): processes of the main one's command line whose parents are not
  // in the group (or are Slurm's slurmstepd) are ranks, when there are several.
  const auto outside = [&](pid_t ppid) {
    const auto it = std::lower_bound(s.processes.begin(), s.processes.end(), ppid,
                                     [](const monitor::Process& p, pid_t v) { return p.pid < v; });
    return it == s.processes.end() || it->pid != ppid || it->comm == "slurmstepd";
  };
  for (const auto& p : s.processes)
    if (p.state != 'Z' && p.cmdline == main->cmdline && outside(p.ppid)) out.push_back(p.pid);
  if (out.size() < 2) out.clear();
  return out;
}

monitor::Sample rerooted(const monitor::Sample& s, pid_t rank) {
  monitor::Sample out = s;
  out.processes.clear();
  std::map<pid_t, pid_t> parent;
  for (const auto& p : s.processes) parent[p.pid] = p.ppid;
  const auto in_subtree = [&](pid_t pid) {
    for (int depth = 0; depth < 64 && pid > 0; ++depth) {
      if (pid == rank) return true;
      const auto it = parent.find(pid);
      if (it == parent.end()) return false;
      pid = it->second;
    }
    return false;
  };
  const monitor::Process* root = nullptr;
  for (const auto& p : s.processes)
    if (p.pid == rank) root = &p;
  if (root == nullptr) return out;
  for (const auto& p : s.processes) {
    out.processes.push_back(p);
    auto& role = out.processes.back().role;
    if (p.pid == rank)
      role = monitor::Role::kMain;
    else if (in_subtree(p.pid))
      role = monitor::descendant_role(p.comm, p.cmdline, root->cmdline);
    else  // the launcher and the other ranks: sampled, not this rank's
      role = monitor::Role::kOther;
  }
  return out;
}

void JobWindows::add(monitor::Sample&& s, const PyTally* py,
                     const std::map<pid_t, PyTally>* rank_py) {
  for (pid_t r : ranks_of(s)) ranks_.try_emplace(r);
  for (auto& [rank, b] : ranks_) {
    const pid_t pid = rank;  // clang 14 cannot capture a structured binding
    auto mine = rerooted(s, pid);
    // A rank that ended: its window is the time it lived, not the others' time after it.
    if (std::none_of(mine.processes.begin(), mine.processes.end(), [&](const monitor::Process& p) {
          return p.pid == pid && p.state != 'Z' && p.state != 'X';
        })) {
      b.end();
      continue;
    }
    const PyTally* tally = nullptr;
    if (rank_py != nullptr)
      if (const auto it = rank_py->find(pid); it != rank_py->end()) tally = &it->second;
    b.add(std::move(mine), tally);
  }
  job_.add(std::move(s), py);
}

std::size_t steady_start(const Window& w, std::int64_t skip_ns) {
  const std::size_t n = w.samples.size();
  if (n == 0) return 0;
  std::size_t first = 0;
  while (first < n && w.wall_ns[first] - w.wall_ns[0] < skip_ns) ++first;
  const auto workers = static_cast<std::size_t>(Signal::kWorkersCount);
  for (std::size_t i = 0; i < n / 2; ++i) {
    const auto& c = w.samples[i][workers];
    if (c && *c >= 1) {
      first = std::max(first, i);
      break;
    }
  }
  // Never leave out so much that nothing is left to judge.
  return std::min(first, n > 4 ? n - 4 : 0);
}

}  // namespace dltune::diagnose

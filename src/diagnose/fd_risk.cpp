// Open descriptors against nofile (diagnose/fd_risk.hpp).
#include "diagnose/fd_risk.hpp"

#include <fmt/core.h>

#include "host/parse/proc.hpp"

namespace dltune::diagnose {

std::uint64_t nofile_soft_limit(std::string_view text) {
  const auto limits = host::parse::limits(text);
  if (!limits) return 0;
  const auto it = limits->find("Max open files");
  return it != limits->end() ? it->second.soft.value_or(0) : 0;
}

FdScan scan_fds(const host::Root& root) {
  FdScan out;
  std::vector<int> pids;
  if (auto ok = root.list_pids("/proc", pids); !ok || !*ok) return out;
  for (int pid : pids) {
    const auto base = "/proc/" + std::to_string(pid);
    const auto comm = root.read(base + "/comm", 64);
    if (!comm || !*comm) continue;
    std::string name = **comm;
    while (!name.empty() && name.back() == '\n') name.pop_back();
    if (!(name.starts_with("python") || name == "pt_data_worker" || name == "pt_main_thread"))
      continue;
    const auto fds = root.list(base + "/fd");
    if (!fds || !*fds) {
      if (!fds) ++out.unreadable;
      continue;
    }
    FdUse u;
    u.pid = pid;
    u.comm = name;
    u.open = (*fds)->size();
    if (const auto limits = root.read(base + "/limits"); limits && *limits)
      u.soft_limit = nofile_soft_limit(**limits);
    out.processes.push_back(std::move(u));
  }
  return out;
}

std::optional<KernelEvent> fd_risk(const FdUse& u) {
  if (u.soft_limit == 0 || u.open * 100 < u.soft_limit * 80) return std::nullopt;
  KernelEvent e;
  e.kind = "fd_exhaustion";
  e.severity = u.open * 100 >= u.soft_limit * 95 ? Severity::kCritical : Severity::kWarning;
  e.explanation = fmt::format(
      "Process {} ({}) has {} files open of its limit of {} ({:.0f}%): the next opens fail with "
      "'Too many open files' (EMFILE), which a DataLoader reports as a worker error.",
      u.pid, u.comm, u.open, u.soft_limit,
      100.0 * static_cast<double>(u.open) / static_cast<double>(u.soft_limit));
  e.action =
      "Raise the job's nofile limit (dltune run gives it the profile's limits.nofile; ulimit -n), "
      "or share tensors through files: torch.multiprocessing.set_sharing_strategy('file_system') "
      "(the default, 'file_descriptor', holds a descriptor per shared tensor); close the files a "
      "Dataset opens per sample.";
  e.fields["pid"] = std::to_string(u.pid);
  e.fields["task"] = u.comm;
  e.fields["open"] = std::to_string(u.open);
  e.fields["limit"] = std::to_string(u.soft_limit);
  return e;
}

}  // namespace dltune::diagnose

#pragma once
// "Too many open files" before it happens, for `dltune doctor`: the training processes'
// open descriptors against their own nofile limit, from /proc (a DataLoader with many workers and
// file_system sharing can exhaust it; the kernel logs nothing when it does).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/kernel_events.hpp"
#include "host/root.hpp"

namespace dltune::diagnose {

struct FdUse {
  pid_t pid = 0;
  std::string comm;
  std::size_t open = 0;
  std::uint64_t soft_limit = 0;  // 0: unlimited or unknown
};

struct FdScan {
  std::vector<FdUse> processes;  // the training processes whose descriptors could be counted
  std::size_t unreadable = 0;    // training processes whose /proc/PID/fd could not be listed
};

// The processes named like training processes (python*, pt_data_worker, pt_main_thread).
[[nodiscard]] FdScan scan_fds(const host::Root& root);

// An event when a process uses 80% of its limit or more (critical from 95%).
[[nodiscard]] std::optional<KernelEvent> fd_risk(const FdUse& u);

// The soft "Max open files" of a /proc/PID/limits text (0 for unlimited or missing).
[[nodiscard]] std::uint64_t nofile_soft_limit(std::string_view limits_text);

}  // namespace dltune::diagnose

#pragma once
// The child's half of spawn_and_wait, between fork and exec (internal to launch/). Everything
// the child needs is prepared by the parent before fork, so that the child only makes system
// calls: no allocation, no locks, no formatting (signal-safety(7): the parent may have threads).
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "launch/spawn.hpp"

namespace dltune::launch::detail {

// What went wrong before exec, in the order the child does things.
enum class Step : std::int32_t {
  kStdio,
  kSignals,
  kCgroup,
  kAffinity,
  kSetrlimit,
  kSetgroups,
  kSetgid,
  kSetuid,
  kDropCheck,
  kExec,
};
[[nodiscard]] std::string step_name(Step step, const std::vector<ResourceLimit>& limits,
                                    std::int32_t index);

// One record on the status pipe (CLOEXEC: it closes when exec succeeds). Smaller than PIPE_BUF,
// so each write is atomic. A failure is the child's last record; warnings come before it.
struct StatusRecord {
  enum Kind : std::int32_t { kFailure = 0, kLimitWarning = 1 };
  std::int32_t kind = kFailure;
  Step step = Step::kExec;
  std::int32_t index = 0;  // the limit (kSetrlimit, kLimitWarning)
  std::int32_t err = 0;    // errno
  std::uint64_t hard = 0;  // kLimitWarning: the hard limit the job keeps
};

struct ChildPlan {
  std::vector<std::string> programs;  // execve each in turn (the PATH search, done ahead)
  std::vector<char*> argv, envp;      // null-terminated, pointing into the request/env_strings
  std::vector<std::string> env_strings;
  const std::vector<std::string>* cgroup_procs = nullptr;
  cpu_set_t* cpus = nullptr;  // CPU_ALLOC'd by the parent, or null
  std::size_t cpus_size = 0;
  const std::vector<ResourceLimit>* limits = nullptr;
  const Credentials* as = nullptr;
  sigset_t keep_ignored{};  // signals the invoker ignored (nohup): still ignored in the job
  pid_t parent = 0;
  int status_fd = -1;  // write end
  int in_fd = -1;      // becomes the job's stdin (-1: inherit dltune's)
  int out_fd = -1;     // becomes the job's stdout (-1: inherit dltune's)
  int err_fd = -1;     // becomes the job's stderr (-1: inherit)
};

// Never returns: execs the job or writes a failure record and _exits with 127.
[[noreturn]] void run_child(const ChildPlan& plan) noexcept;

}  // namespace dltune::launch::detail

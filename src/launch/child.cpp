#include "launch/child.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>

#include "launch/cgroup.hpp"

namespace dltune::launch::detail {
namespace {

void send(int fd, const StatusRecord& record) noexcept {
  while (::write(fd, &record, sizeof record) < 0 && errno == EINTR) {
  }
}

[[noreturn]] void fail_at(const ChildPlan& plan, Step step, int err, std::int32_t index = 0) {
  StatusRecord r;
  r.kind = StatusRecord::kFailure;
  r.step = step;
  r.index = index;
  r.err = err;
  send(plan.status_fd, r);
  ::_exit(127);
}

// dup2 onto `target`, and make sure the result survives exec even when `fd` already is `target`
// (dup2 to itself keeps FD_CLOEXEC).
bool redirect(int fd, int target) noexcept {
  if (fd < 0) return true;
  if (fd == target) return ::fcntl(fd, F_SETFD, 0) == 0;
  return ::dup2(fd, target) == target;
}

bool reset_signals(const sigset_t& keep_ignored) noexcept {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    // glibc reserves two real-time signals for itself: sigaction refuses them (EINVAL).
    const auto& action = ::sigismember(&keep_ignored, s) == 1 ? ign : dfl;
    if (::sigaction(s, &action, nullptr) != 0 && errno != EINVAL) return false;
  }
  sigset_t none;
  ::sigemptyset(&none);
  return ::sigprocmask(SIG_SETMASK, &none, nullptr) == 0;
}

void set_limits(const ChildPlan& plan) noexcept {
  const auto& limits = *plan.limits;
  for (std::size_t i = 0; i < limits.size(); ++i) {
    const auto& l = limits[i];
    const auto index = static_cast<std::int32_t>(i);
    const auto resource = static_cast<__rlimit_resource>(l.resource);
    const rlimit wanted{l.soft, l.hard};
    if (::setrlimit(resource, &wanted) == 0) continue;
    const int err = errno;
    rlimit now{};
    // Raising a hard limit needs CAP_SYS_RESOURCE (setrlimit(2)): not fatal, the job gets what
    // the hard limit allows and the parent warns.
    if (err != EPERM || ::getrlimit(resource, &now) != 0 || l.hard <= now.rlim_max)
      fail_at(plan, Step::kSetrlimit, err, index);
    const rlimit allowed{l.soft < now.rlim_max ? l.soft : now.rlim_max, now.rlim_max};
    if (::setrlimit(resource, &allowed) != 0) fail_at(plan, Step::kSetrlimit, errno, index);
    StatusRecord warning;
    warning.kind = StatusRecord::kLimitWarning;
    warning.step = Step::kSetrlimit;
    warning.index = index;
    warning.err = err;
    warning.hard = now.rlim_max;
    send(plan.status_fd, warning);
  }
}

void drop_to(const ChildPlan& plan, const Credentials& as) noexcept {
  if (::setgroups(as.groups.size(), as.groups.data()) != 0) fail_at(plan, Step::kSetgroups, errno);
  // setres*id sets the real, effective and saved ids at once: nothing to regain root with.
  if (::setresgid(as.gid, as.gid, as.gid) != 0) fail_at(plan, Step::kSetgid, errno);
  if (::setresuid(as.uid, as.uid, as.uid) != 0) fail_at(plan, Step::kSetuid, errno);
  uid_t ru = 0, eu = 0, su = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  if (::getresuid(&ru, &eu, &su) != 0 || ::getresgid(&rg, &eg, &sg) != 0)
    fail_at(plan, Step::kDropCheck, errno);
  if (ru != as.uid || eu != as.uid || su != as.uid || rg != as.gid || eg != as.gid || sg != as.gid)
    fail_at(plan, Step::kDropCheck, EPERM);
  if (as.uid != 0 && ::setuid(0) == 0) fail_at(plan, Step::kDropCheck, EPERM);
}

}  // namespace

void run_child(const ChildPlan& plan) noexcept {
  if (!redirect(plan.in_fd, STDIN_FILENO) || !redirect(plan.out_fd, STDOUT_FILENO) ||
      !redirect(plan.err_fd, STDERR_FILENO))
    fail_at(plan, Step::kStdio, errno);
  if (!reset_signals(plan.keep_ignored)) fail_at(plan, Step::kSignals, errno);
  if (plan.cgroup_procs && !plan.cgroup_procs->empty()) {
    if (const int err = attach_self(*plan.cgroup_procs); err != 0)
      fail_at(plan, Step::kCgroup, err);
  }
  if (plan.cpus && ::sched_setaffinity(0, plan.cpus_size, plan.cpus) != 0)
    fail_at(plan, Step::kAffinity, errno);
  if (plan.limits) set_limits(plan);
  if (plan.as) drop_to(plan, *plan.as);
  // If dltune dies (SIGKILL, a crash), the job is told rather than left running unsupervised.
  // Set after the drop: a change of credentials clears it (PR_SET_PDEATHSIG in prctl(2)).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != plan.parent) ::_exit(127);

  // execvp(3)'s rules without its shell fallback: keep searching past ENOENT, ENOTDIR and
  // EACCES (reported if nothing else worked); stop at any other error (ENOEXEC included).
  int err = ENOENT;
  bool denied = false;
  for (const auto& program : plan.programs) {
    ::execve(program.c_str(), plan.argv.data(), plan.envp.data());
    err = errno;
    if (err == EACCES) {
      denied = true;
    } else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV &&
               err != ETIMEDOUT) {
      break;
    }
  }
  if (denied && (err == ENOENT || err == ENOTDIR)) err = EACCES;
  fail_at(plan, Step::kExec, err);
}

std::string step_name(Step step, const std::vector<ResourceLimit>& limits, std::int32_t index) {
  switch (step) {
    case Step::kStdio:
      return "stdio";
    case Step::kSignals:
      return "signals";
    case Step::kCgroup:
      return "cgroup";
    case Step::kAffinity:
      return "affinity";
    case Step::kSetrlimit:
      return index >= 0 && static_cast<std::size_t>(index) < limits.size()
                 ? "setrlimit " + limits[static_cast<std::size_t>(index)].name
                 : std::string("setrlimit");
    case Step::kSetgroups:
      return "setgroups";
    case Step::kSetgid:
      return "setgid";
    case Step::kSetuid:
      return "setuid";
    case Step::kDropCheck:
      return "drop privileges";
    case Step::kExec:
      return "exec";
  }
  return "start";
}

}  // namespace dltune::launch::detail

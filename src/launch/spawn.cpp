// spawn_and_wait: fork, let the child set itself up (child.cpp), supervise until it exits.
//
// fork rather than vfork/clone(CLONE_VM) or posix_spawn: the child attaches to cgroups, sets
// affinity and limits and drops root before exec, which posix_spawn cannot express, and
// changing credentials in a child that shares the parent's memory is unsafe with glibc's setxid
// broadcast to the parent's threads. dltune's address space is small, so fork costs little.
#include "launch/spawn.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include <fmt/core.h>

#include "core/text.hpp"
#include "launch/child.hpp"
#include "launch/progress.hpp"
#include "launch/supervise.hpp"

namespace dltune::launch {
namespace {

using detail::ChildPlan;
using detail::StatusRecord;

std::string path_of(const std::map<std::string, std::string>& environment) {
  const auto it = environment.find("PATH");
  return it == environment.end() ? "/bin:/usr/bin" : it->second;  // confstr(_CS_PATH)
}

// Every place execvp(3) would try, in order.
std::vector<std::string> candidates(const std::string& name, const std::string& path) {
  if (name.find('/') != std::string::npos) return {name};
  std::vector<std::string> out;
  for (const auto dir : text::split(path, ':'))
    out.push_back(dir.empty() ? "./" + name : std::string(dir) + "/" + name);
  return out;
}

bool has_cap_sys_resource() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_SYS_RESOURCE / 32].effective & (1u << (CAP_SYS_RESOURCE % 32))) != 0;
}

bool counts_bytes(int resource) {
  return resource == RLIMIT_MEMLOCK || resource == RLIMIT_AS || resource == RLIMIT_DATA ||
         resource == RLIMIT_STACK || resource == RLIMIT_FSIZE || resource == RLIMIT_CORE ||
         resource == RLIMIT_RSS || resource == RLIMIT_MSGQUEUE;
}

std::string limit_text(int resource, rlim_t value) {
  if (value == RLIM_INFINITY) return "unlimited";
  return counts_bytes(resource) ? text::human_bytes(value) : std::to_string(value);
}

std::string limit_warning(const ResourceLimit& limit, rlim_t hard, bool privileged) {
  std::string why = "needs CAP_SYS_RESOURCE";
  if (privileged && limit.resource == RLIMIT_NOFILE) why = "above fs.nr_open";
  return limit.name + ": cannot raise to " + limit_text(limit.resource, limit.hard) +
         " (hard limit " + limit_text(limit.resource, hard) + ", " + why + ")";
}

Error start_error(const SpawnRequest& request, const StatusRecord& r) {
  const auto step = detail::step_name(r.step, request.limits, r.index);
  return Error{"cannot run", "'" + request.argv[0] + "' (" + step + ")", r.err};
}

// A pipe whose ends are both above the standard descriptors (so the child's dup2 onto 0-2
// cannot clobber one) and close on exec.
Result<std::pair<Fd, Fd>> make_pipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return fail("cannot create a pipe", "", errno);
  Fd r(p[0]), w(p[1]);
  for (Fd* end : {&r, &w}) {
    if (end->get() > STDERR_FILENO) continue;
    const int moved = ::fcntl(end->get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (moved < 0) return fail("cannot create a pipe", "", errno);
    *end = Fd(moved);
  }
  return std::pair<Fd, Fd>(std::move(r), std::move(w));
}

struct CpuSet {
  cpu_set_t* set = nullptr;
  std::size_t size = 0;
  CpuSet() = default;
  CpuSet(const CpuSet&) = delete;
  CpuSet& operator=(const CpuSet&) = delete;
  ~CpuSet() {
    if (set) CPU_FREE(set);
  }
};

Result<void> fill_cpus(const std::vector<int>& cpus, CpuSet& out) {
  if (cpus.empty()) return fail("no CPUs to run the job on");
  int top = 0;
  for (const int c : cpus) {
    if (c < 0 || c >= (1 << 16)) return fail("not a CPU number:", std::to_string(c));
    top = std::max(top, c);
  }
  out.set = CPU_ALLOC(top + 1);
  if (!out.set) return fail("cannot allocate a CPU set", "", ENOMEM);
  out.size = CPU_ALLOC_SIZE(top + 1);
  CPU_ZERO_S(out.size, out.set);
  for (const int c : cpus) CPU_SET_S(static_cast<std::size_t>(c), out.size, out.set);
  return {};
}

// Reads the child's status records until the pipe closes (exec succeeded, or the child died).
Result<std::vector<StatusRecord>> read_status(int fd) {
  std::vector<StatusRecord> records;
  StatusRecord r;
  std::size_t have = 0;
  for (;;) {
    const auto n = ::read(fd, reinterpret_cast<char*>(&r) + have, sizeof r - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read the job's start-up status", "", errno);
    if (n == 0) return records;
    have += static_cast<std::size_t>(n);
    if (have == sizeof r) {
      records.push_back(r);
      have = 0;
    }
  }
}

}  // namespace

Result<std::string> find_program(const std::string& name,
                                 const std::map<std::string, std::string>& environment) {
  if (name.empty()) return fail("cannot run", "''", ENOENT);
  int err = ENOENT;
  for (const auto& program : candidates(name, path_of(environment))) {
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      err = EACCES;  // what execve says of a directory
      continue;
    }
    if (::access(program.c_str(), X_OK) == 0) return program;
    err = errno;
  }
  return fail("cannot run", "'" + name + "'", err);
}

namespace {

// A child forked and past exec: its process, the read ends of its output pipes and the limits it
// could not raise.
struct Started {
  std::unique_ptr<Job> job;
  Fd err;
  std::optional<Fd> out;
  std::vector<std::string> warnings;
};

// Forks `request`'s child and waits until it has exec'd (or failed before: the error, nothing
// left running). The forwarded signals must be blocked already.
Result<Started> start_child(const SpawnRequest& request, bool privileged) {
  ChildPlan plan;
  plan.programs = candidates(request.argv[0], path_of(request.env));
  for (const auto& a : request.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  auto environment = request.env;
  if (request.as) {
    // What login(1) sets for the user; sudo leaves root's USER and LOGNAME (HOME depends on its
    // policy), which would mislead the job.
    environment["HOME"] = request.as->home;
    environment["USER"] = request.as->user;
    environment["LOGNAME"] = request.as->user;
  }
  for (const auto& [k, v] : environment) plan.env_strings.push_back(k + "=" + v);
  for (auto& e : plan.env_strings) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  plan.cgroup_procs = &request.cgroup_procs;
  CpuSet cpus;
  if (request.cpus) {
    if (auto ok = fill_cpus(*request.cpus, cpus); !ok) return tl::unexpected(ok.error());
    plan.cpus = cpus.set;
    plan.cpus_size = cpus.size;
  }
  plan.limits = &request.limits;
  plan.as = request.as ? &*request.as : nullptr;
  ::sigemptyset(&plan.keep_ignored);
  for (const int s : {SIGHUP, SIGINT, SIGQUIT}) {
    struct sigaction now {};
    if (::sigaction(s, nullptr, &now) == 0 && now.sa_handler == SIG_IGN)
      ::sigaddset(&plan.keep_ignored, s);
  }
  plan.parent = ::getpid();

  auto status = make_pipe();
  if (!status) return tl::unexpected(status.error());
  auto err_pipe = make_pipe();
  if (!err_pipe) return tl::unexpected(err_pipe.error());
  std::optional<std::pair<Fd, Fd>> out_pipe;
  Fd null_in;
  if (request.output_fd) {
    null_in = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (null_in.get() < 0) return fail("cannot open", "/dev/null", errno);
    if (null_in.get() <= STDERR_FILENO)  // so that the child's dup2 onto 0-2 cannot clobber it
      null_in = Fd(::fcntl(null_in.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1));
    if (null_in.get() < 0) return fail("cannot open", "/dev/null", errno);
    plan.in_fd = null_in.get();
  }
  if (request.watch_stdout || request.output_fd || request.stdout_to_stderr) {
    auto p = make_pipe();
    if (!p) return tl::unexpected(p.error());
    out_pipe = std::move(*p);
  }
  plan.status_fd = status->second.get();
  plan.err_fd = err_pipe->second.get();
  plan.out_fd = out_pipe ? out_pipe->second.get() : -1;

  const pid_t pid = ::fork();
  if (pid < 0) return fail("cannot start", "'" + request.argv[0] + "'", errno);
  if (pid == 0) detail::run_child(plan);

  Started started;
  started.job = std::make_unique<Job>(pid);  // kills and reaps the child on every early return
  status->second.reset();
  err_pipe->second.reset();
  if (out_pipe) out_pipe->second.reset();

  auto records = read_status(status->first.get());
  if (!records) return tl::unexpected(records.error());
  for (const auto& r : *records) {
    if (r.kind == StatusRecord::kFailure) {
      started.job->reap();  // the child _exits right after writing this
      return tl::unexpected(start_error(request, r));
    }
    if (r.index >= 0 && static_cast<std::size_t>(r.index) < request.limits.size())
      started.warnings.push_back(
          limit_warning(request.limits[static_cast<std::size_t>(r.index)], r.hard, privileged));
  }
  started.err = std::move(err_pipe->first);
  if (out_pipe) started.out = std::move(out_pipe->first);
  return started;
}

// Where a job's output goes: the request's descriptor, else dltune's stderr and stdout.
void add_streams(Supervision& s, Started& started, const SpawnRequest& request, bool metered,
                 std::optional<int> rank) {
  s.add_stream(std::move(started.err), request.output_fd.value_or(STDERR_FILENO), metered, rank);
  if (started.out)
    s.add_stream(
        std::move(*started.out),
        request.output_fd.value_or(request.stdout_to_stderr ? STDERR_FILENO : STDOUT_FILENO),
        metered, rank);
}

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// The end of one job as SpawnResult has it.
void fill_end(SpawnResult& result, const Ended& end) {
  const int st = end.status;
  if (WIFSIGNALED(st)) {
    result.signal = WTERMSIG(st);
    result.exit_code = 128 + WTERMSIG(st);
  } else {
    result.exit_code = WEXITSTATUS(st);
  }
  // wait4's usage is the job's own plus that of every child it waited for (the kernel fills it
  // as RUSAGE_BOTH of the reaped process: kernel/exit.c wait_task_zombie).
  result.user_seconds = seconds_of(end.usage.ru_utime);
  result.system_seconds = seconds_of(end.usage.ru_stime);
  result.max_rss_bytes = static_cast<std::uint64_t>(end.usage.ru_maxrss) * 1024;
}

}  // namespace

Result<SpawnResult> spawn_and_wait(const SpawnRequest& request) {
  // A group of one: the same start, supervision and end.
  GroupOptions options;
  if (request.on_start)
    options.on_start = [&](const std::vector<pid_t>& pids) { request.on_start(pids.front()); };
  auto group = spawn_group_and_wait({request}, options);
  if (!group) return tl::unexpected(group.error());
  SpawnResult result = std::move(group->members.front().result);
  result.wall = group->wall;  // from before the fork, as a caller times the job
  result.forwarded_signals = std::move(group->forwarded_signals);
  result.received_signals = std::move(group->received_signals);
  result.output_events = std::move(group->output_events);
  return result;
}

Result<GroupResult> spawn_group_and_wait(const std::vector<SpawnRequest>& requests,
                                         const GroupOptions& options) {
  if (requests.empty()) return fail("no command to run");
  for (const auto& r : requests)
    if (r.argv.empty() || r.argv[0].empty()) return fail("no command to run");
  auto signals = ForwardedSignals::block();
  if (!signals) return tl::unexpected(signals.error());
  const bool privileged = has_cap_sys_resource();
  const auto begun = std::chrono::steady_clock::now();
  // All or none: a rank that cannot start takes down those started before it (~Job).
  std::vector<Started> started;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto one = start_child(requests[i], privileged);
    if (!one) {
      auto e = one.error();
      if (requests.size() > 1) e.input = fmt::format("{} (rank {})", e.input, i);
      return tl::unexpected(e);
    }
    started.push_back(std::move(*one));
  }
  GroupResult out;
  std::vector<pid_t> pids;
  for (const auto& s : started) pids.push_back(s.job->pid());
  if (options.on_start) options.on_start(pids);
  ProgressMeter meter(requests.front().rate_regex);
  OutputWatch watch;
  std::vector<Job*> jobs;
  for (auto& s : started) jobs.push_back(s.job.get());
  Supervision s{jobs, **signals, meter, watch};
  for (std::size_t i = 0; i < started.size(); ++i)
    add_streams(s, started[i], requests[i], i == options.metered,
                started.size() > 1 ? std::optional<int>(static_cast<int>(i)) : std::nullopt);
  s.stop_others_on_failure(options.grace);
  auto end = s.run_all();
  if (!end) return tl::unexpected(end.error());
  meter.finish();
  watch.finish();
  out.output_events = watch.events();
  out.wall = std::chrono::steady_clock::now() - begun;
  out.first_failure = end->first_failure;
  out.forwarded_signals = end->forwarded;
  out.received_signals = (*signals)->received();
  for (std::size_t i = 0; i < started.size(); ++i) {
    GroupMember m;
    m.result.pid = pids[i];
    m.result.warnings = std::move(started[i].warnings);
    m.result.wall = std::chrono::duration<double>(end->seconds[i]);
    fill_end(m.result, end->ends[i]);
    if (i == options.metered) m.result.progress = meter.progress();
    m.stopped = end->stopped[i];
    out.members.push_back(std::move(m));
  }
  return out;
}

DefaultInterruptSignals::DefaultInterruptSignals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGINT, &dfl, &old_int_);
  ::sigaction(SIGQUIT, &dfl, &old_quit_);
}

DefaultInterruptSignals::~DefaultInterruptSignals() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGQUIT, &old_quit_, nullptr);
}

}  // namespace dltune::launch

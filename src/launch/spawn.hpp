#pragma once
// Starting and supervising the job: fork, attach to the cgroup, CPU affinity, limits,
// drop root to the invoking user, exec argv (never a shell); forward signals; wait; watch its
// output for progress rates.
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "launch/output_watch.hpp"
#include "launch/rate_pattern.hpp"

namespace dltune::launch {

// Whom the job runs as.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (initgroups of the user)
  std::string user;           // name, for messages
  std::string home;           // HOME for the job
};
// The invoking user when dltune runs under sudo (SUDO_UID, SUDO_GID; groups and home from the
// user database), else nullopt (the job keeps dltune's own identity). Errors: SUDO_UID that is
// not a number or names no user.
[[nodiscard]] Result<std::optional<Credentials>> sudo_user(
    const std::map<std::string, std::string>& environment);

struct ResourceLimit {
  int resource = 0;  // RLIMIT_NOFILE, RLIMIT_MEMLOCK
  std::string name;  // "nofile", "memlock"
  rlim_t soft = 0, hard = 0;
};

struct SpawnRequest {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH (of `env`)
  std::map<std::string, std::string> env;  // the job's whole environment
  std::optional<Credentials> as;           // drop to this user (after attach and limits)
  std::vector<std::string> cgroup_procs;   // attach_self(these) in the child first
  std::optional<std::vector<int>> cpus;    // sched_setaffinity in the child
  std::vector<ResourceLimit> limits;       // setrlimit in the child (before dropping root)
  // Watch the job's stderr (and stdout when `watch_stdout`) for progress: the job's bytes are
  // copied through unchanged to dltune's own stderr/stdout as they come.
  bool watch_stdout = false;
  std::optional<RatePattern> rate_regex;  // its first group is a rate (per second)
  // When set, the job's stdin is /dev/null and both its stdout and stderr (both watched) are
  // copied to this descriptor instead of dltune's own: bench keeps each run's output in a log.
  std::optional<int> output_fd;
  // The job's stdout (watched) to dltune's stderr: a caller whose stdout holds a JSON document
  // alone (`run --json -`, `profile --json`), as time(1) keeps its report apart.
  bool stdout_to_stderr = false;
  // Called in the parent once the job has exec'd (with its PID), before supervision starts, on
  // the calling thread with the forwarded signals blocked: a thread it starts inherits that
  // mask (`run --record` starts its recorder here).
  std::function<void(pid_t)> on_start;
};

// What the child could not do before exec (reported through a CLOEXEC pipe, so the parent
// knows the job never started): the step ("cgroup", "affinity", "setrlimit nofile", "setgid",
// "setuid", "exec") and errno.
struct StartFailure {
  std::string step;
  int errno_ = 0;
};

struct Progress {
  std::optional<double> last_rate;    // per second, from the last progress line
  std::optional<double> median_rate;  // over every progress line after the first 10%
  std::string unit;                   // "it/s" (tqdm), or "" for --rate-regex
  int samples = 0;
};

struct SpawnResult {
  pid_t pid = 0;
  int exit_code = 0;          // the job's status, 128+N when killed by signal N
  std::optional<int> signal;  // the signal that killed it
  std::chrono::duration<double> wall{};
  double user_seconds = 0, system_seconds = 0;  // rusage of the job and its waited children
  std::uint64_t max_rss_bytes = 0;              // rusage ru_maxrss (the largest process)
  Progress progress;
  // Limits that could not be set, the job ran anyway: "memlock: cannot raise to unlimited (hard
  // limit 8 MiB, needs CAP_SYS_RESOURCE)". The job then has the hard limit it had as soft and hard.
  std::vector<std::string> warnings;
  // The signals dltune received from another process (kill) and passed on to the job, in order.
  // A terminal's ^C is not among them: the job gets that from the terminal itself.
  std::vector<int> forwarded_signals;
  // Every SIGINT, SIGTERM, SIGHUP and SIGQUIT that reached dltune while the job ran, from the
  // terminal too and those still pending at its end: a caller that runs several jobs (bench)
  // learns from it that it was asked to stop.
  std::vector<int> received_signals;
  // What the job's output said of its GPUs (launch/output_watch.hpp): CUDA out of memory, CUDA
  // and NCCL errors, each with its time, rank and count.
  std::vector<OutputEvent> output_events;
};

// Starts the job and waits for it, forwarding SIGINT, SIGTERM and SIGHUP (and SIGQUIT) to it
// while it runs. An error (with nothing left running) when the child failed before exec: the
// message names the command, the step and the errno ("cannot run 'trian.py' (exec): No such
// file or directory"; Error{what "cannot run", input "'trian.py' (exec)", errno_}).
//
// Call it from the thread that handles signals, with no other spawn_and_wait running: the
// forwarded signals are blocked in the calling thread and read through a signalfd; the mask
// and SIGCHLD's disposition are restored on return, and signals still pending then (a second
// ^C after the job ended) are discarded so that the caller can report and clean up.
[[nodiscard]] Result<SpawnResult> spawn_and_wait(const SpawnRequest& request);

// A group of jobs started together and supervised as one (the ranks of `run --nproc N`).
struct GroupOptions {
  // When one fails (exits non-zero or by a signal) while others run: SIGTERM to the others, then
  // SIGKILL after this long (torchrun's agent stops a failed group the same way).
  std::chrono::milliseconds grace{5000};
  std::size_t metered = 0;  // whose output is read for progress rates (rank 0 prints them)
  // Called once all have exec'd, with their PIDs in order (as SpawnRequest::on_start).
  std::function<void(const std::vector<pid_t>&)> on_start;
};
struct GroupMember {
  SpawnResult result;    // its own end (wall: from the start to its exit)
  bool stopped = false;  // it ended after dltune stopped the group
};
struct GroupResult {
  std::vector<GroupMember> members;          // in the order of the requests
  std::optional<std::size_t> first_failure;  // the one that failed first, which stopped the rest
  std::chrono::duration<double> wall{};
  std::vector<int> forwarded_signals;  // as SpawnResult's, passed on to every member running
  std::vector<int> received_signals;
  std::vector<OutputEvent> output_events;  // from every member's output (rank: its index)
};
// Starts every request (each child sets itself up as spawn_and_wait's does; one that cannot start
// stops those started before it: an error naming it, nothing left running), forwards signals to
// all, copies their output through, and waits for all of them. The same rules as spawn_and_wait
// for the calling thread; the requests' on_start are not called (options.on_start is).
[[nodiscard]] Result<GroupResult> spawn_group_and_wait(const std::vector<SpawnRequest>& requests,
                                                       const GroupOptions& options = {});

// Where `name` (argv[0]) is found in the PATH of `environment` (execvp(3)'s search: a name with
// a '/' is taken as it is; PATH unset means "/bin:/usr/bin"), for an early "command not found"
// before anything is created: "cannot run 'trian.py': No such file or directory". The child
// searches again, as the job's user, when it execs.
[[nodiscard]] Result<std::string> find_program(
    const std::string& name, const std::map<std::string, std::string>& environment);

// Progress rates in one line of output: tqdm's "12.5it/s" or "3.20s/it" (the last one on the
// line; tqdm redraws with '\r'), or the first group of `custom` when given. Per second.
[[nodiscard]] std::optional<double> parse_rate(std::string_view line,
                                               const std::optional<RatePattern>& custom);

// SIGINT and SIGQUIT with their default actions while this lives, as a terminal's job expects
// them, even when this process was started with them ignored (a non-interactive shell's
// background job): a job run in this process then gets them passed on. The old actions come
// back at the end.
class DefaultInterruptSignals {
 public:
  DefaultInterruptSignals();
  ~DefaultInterruptSignals();
  DefaultInterruptSignals(const DefaultInterruptSignals&) = delete;
  DefaultInterruptSignals& operator=(const DefaultInterruptSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_quit_ {};
};

}  // namespace dltune::launch

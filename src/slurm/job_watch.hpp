#pragma once
// What a Slurm job did on this node, kept while it runs, for the epilog's report. Slurm removes
// a job's cgroup when its last step ends, before the Epilog runs (measured on this VM: Slurm
// 22.05, cgroup v1, the memory, cpuset and cpuacct groups of job_J are gone when the Epilog
// starts), so its peak memory and CPU time must be read while it runs. The Prolog starts a
// watcher per job (`dltune slurm watch J`, detached from slurmd); the watcher samples the job's
// group (host::discover_slurm_jobs) every interval and keeps the totals in a small state file,
// which the Epilog reads after it has stopped the watcher. Group removed and made again between
// the steps of an allocation: the totals go on across them.
#include <signal.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/json_fwd.hpp"
#include "host/root.hpp"
#include "monitor/model.hpp"
#include "slurm/efficiency.hpp"

namespace dltune::slurm {

// The totals of one job on this node (schema dltune.slurm-job-watch/1, the state file).
struct JobRecord {
  std::string job_id, path;
  int watcher_pid = 0;
  std::int64_t started_ns = 0;                       // wall: when the watch began (the Prolog)
  std::int64_t first_seen_ns = 0, last_seen_ns = 0;  // wall: the job's group sampled
  std::uint64_t samples = 0;
  int cpus = 0;            // the most CPUs its cpuset had
  double seconds = 0;      // the time its CPU use was measured over
  double cpu_seconds = 0;  // the CPU time it used in that time
  bool cpu_from_processes = false;
  std::optional<std::uint64_t> memory_peak_bytes, memory_limit_bytes;
  std::uint64_t oom_kills = 0;       // counted by its group(s)
  std::uint64_t processes_peak = 0;  // the most processes at one sample
  struct Process {
    std::string command;
    double cpu_seconds = 0;
    std::uint64_t threads = 0;
  };
  std::map<int, Process> processes;  // by pid: the busiest few (at most kKeptProcesses)
  std::vector<JobGpu> gpus;          // the GPUs its processes used (add_gpu_use)
  bool ended = false;                // the watch is over (the job's group gone, or stopped)

  static constexpr std::size_t kKeptProcesses = 64;

  // Adds one sampled interval of the job's group: `model` from two samples of the same group,
  // `oom_kills_now` its counter then, `cpus` its cpuset's size, `new_group` when the group was
  // made again since the last interval (its counters started over).
  void observe(const monitor::Model& model, std::optional<std::uint64_t> oom_kills_now, int cpus,
               bool new_group);
  // The busiest process, by CPU time over the watch; nullptr when none was seen.
  [[nodiscard]] const std::pair<const int, Process>* busiest() const;
  // The facts efficiency judges (judge_efficiency).
  [[nodiscard]] JobUse use() const;

 private:
  std::uint64_t oom_kills_closed_ = 0;  // counted by the groups that are gone
};

[[nodiscard]] inventory::Json to_json(const JobRecord& r);
// Errors: not a dltune.slurm-job-watch/1 document, naming `source`.
[[nodiscard]] Result<JobRecord> record_from_json(const inventory::Json& j,
                                                 const std::string& source);

struct WatchRequest {
  std::string job_id;
  std::string state_dir = "/run/dltune/slurm";
  std::int64_t interval_ns = 1'000'000'000;
  // The watch ends by itself when the job's group has not been there for this long (a job that
  // never started here, or a cluster without the Epilog that stops it).
  std::int64_t linger_ns = 600'000'000'000;
  bool gpus = true;          // read NVML for the GPUs the job's processes use
  std::string nvml_library;  // DLTUNE_NVML_LIBRARY, or empty for the driver's own names
};

// STATE_DIR/job-J.json.
[[nodiscard]] std::string record_path(const std::string& state_dir, const std::string& job_id);
// A job id as Slurm prints one: digits, at most 20. Errors name `what` and the value.
[[nodiscard]] Result<void> check_job_id(const std::string& job_id);

// Watches until `*stop` is set (SIGTERM's handler sets it) or the group has been gone for the
// request's linger; the state file is rewritten (atomically) after every sample and once more,
// marked ended, at the end. Errors: a job id that is not one, a state directory that cannot be
// made or written.
[[nodiscard]] Result<void> watch_job(const host::Root& root, const WatchRequest& request,
                                     const volatile sig_atomic_t* stop);
// The same until SIGTERM (slurmd's), SIGINT or SIGHUP: handlers set here, without SA_RESTART,
// so that the sleep between samples ends at once.
[[nodiscard]] Result<void> watch_until_stopped(const host::Root& root, const WatchRequest& request);

// The Prolog's part: starts `argv` (this program's `slurm watch J ...`) detached from its caller
// (its own session, standard streams on /dev/null, slurmd's descriptors closed) and returns at
// once, without waiting for it. The child's pid, or an error when it could not fork.
[[nodiscard]] Result<int> start_detached(const std::vector<std::string>& argv);

// The job's group on this node when it has one (the job runs here), else nullopt.
[[nodiscard]] std::optional<std::string> running_job_group(const host::Root& root,
                                                           const std::string& job_id);

// The Prolog's call: `start_detached` of this program (/proc/self/exe) as `slurm watch J
// --state-dir D --interval I`. Errors: a job id that is not one, no /proc/self/exe, no fork.
[[nodiscard]] Result<int> start_watch(const WatchRequest& request);

// Stops job `job_id`'s watcher (SIGTERM to the pid its state file names, when that process is a
// watcher of this job) and waits up to `wait_ns` for its last write; then reads the record.
// Errors: no state file (no watcher ran for the job here), a file that does not parse.
[[nodiscard]] Result<JobRecord> stop_watch(const std::string& state_dir, const std::string& job_id,
                                           std::int64_t wait_ns = 3'000'000'000);

}  // namespace dltune::slurm

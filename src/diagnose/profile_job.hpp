#pragma once
// `profile` as library calls: a job's windows, read from a recording or sampled live, judged
// (each rank on its own under a launcher such as torchrun, the first rank leading), as JSON
// (schema dltune.profile/1) and text. The command line only chooses the way in and prints.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "diagnose/bottleneck.hpp"
#include "diagnose/py_sampler.hpp"
#include "host/root.hpp"
#include "monitor/sampler.hpp"

namespace dltune::diagnose {

// Bad input: the input cannot be judged (exit 2); else profiling failed (exit 1).
template <typename T>
using ProfileResult = tl::expected<T, Failure>;

// One job's, or one rank's, verdict.
struct JobVerdict {
  Profile profile;
  JobSeen job;
  std::string source;              // "recording run.db", "recording run.db, rank 1 (pid 1234)"
  std::vector<std::string> notes;  // what limits it (profile_notes and the caller's)
  nlohmann::json doc;              // to_json(profile) with "source" and "job"
};

// Which rank holds a synchronous job back: in a synchronous job (DDP's all-reduce) the ranks wait
// for each other, so the one that computes while the others wait sets the pace of all.
struct RankComparison {
  std::optional<std::size_t> straggler;  // an index of the parts
  std::string text;                      // what was found, with the evidence
  std::string cause, action;             // for a straggler
  nlohmann::json doc;                    // "straggler" in the report: null or an object
};
// Compares the ranks' windows (at least two): the main thread's time on a CPU, and where every
// rank has one, its GPU's utilisation. Named only when one rank is far busier than the others
// and they sleep (wait) meanwhile; with the cause its signals show (its run-queue wait, its
// workers, its GPU) and the action.
[[nodiscard]] RankComparison compare_ranks(const std::vector<JobVerdict>& ranks);

struct ProfileReport {
  // What the job's output said of its GPUs (the recording's "events" from the job's output:
  // CUDA out of memory, CUDA and NCCL errors), as launch::to_json(OutputEvent) gave them. The
  // first (a CUDA OOM first of all) is the verdict that leads: the job failed, whatever the OS
  // signals before it say ("failed" in the doc).
  nlohmann::json job_errors = nlohmann::json::array();
  // The job's verdict, or one per rank (the first leads and also carries the job's notes); none
  // when the job failed too early to be judged.
  std::vector<JobVerdict> parts;
  std::optional<RankComparison> ranks;  // when there are ranks
  nlohmann::json doc;  // the leading verdict, with "notes", "ranks" and "launcher" when ranked
};

struct JudgeRequest {
  std::int64_t skip_ns = 0;  // start-up left out (steady_start)
  std::string source;
  std::vector<std::string> notes;                   // the caller's, first in the leading verdict's
  nlohmann::json extra = nlohmann::json::object();  // merged into the report's doc
  // A recording to store the verdict in (its document "profile", which report shows); whether
  // it was stored is the leading verdict's last note.
  std::string save_to;
  // Each rank's own, by its pid: merged into its verdict's doc, and its notes after its own.
  std::map<pid_t, nlohmann::json> rank_extra;
  std::map<pid_t, std::vector<std::string>> rank_notes;
  nlohmann::json job_errors = nlohmann::json::array();  // RecordedJob's
};

// Errors: no job in the windows (bad input), fewer than two samples (failure).
[[nodiscard]] ProfileResult<ProfileReport> judge_job(const Rules& rules, const JobWindows& windows,
                                                     const JudgeRequest& request);
// Each verdict as profile_text's render_text gives it, one after the other.
[[nodiscard]] std::string render_text(const ProfileReport& report);

struct RecordedJob {
  JobWindows windows;
  bool launched = false;  // the recording's job was started by dltune (run --record, record CMD)
  // The main process's Python stacks, when the recording kept them (its "python_stacks"; not
  // a launcher's when its ranks' were kept).
  std::optional<PySummary> python;
  // Each rank's, by its pid ("python_stacks/PID").
  std::vector<std::pair<pid_t, PySummary>> python_ranks;
  std::vector<std::string> notes;  // why they are not there, where they could not be read
  // The events its output gave (document "events", source "job output"), in time order.
  nlohmann::json job_errors = nlohmann::json::array();
};
// The start-up left out of a job dltune launched (imports, worker start-up), by default.
inline constexpr std::int64_t kLaunchedSkipNs = 5'000'000'000;
// Every sample of a recording. Errors: it cannot be opened (bad input) or read (failure).
[[nodiscard]] ProfileResult<RecordedJob> read_recorded_job(const std::string& path);

struct LiveRequest {
  pid_t pid = 0;
  // Instead of `pid`'s tree, every process of this cgroup (a Slurm job's: monitor::
  // slurm_job_cgroup); the job has ended when the group is gone.
  std::string cgroup;
  std::int64_t duration_ns = 30'000'000'000;
  std::int64_t interval_ns = 250'000'000;
  monitor::SamplerOptions sampler;  // its scope is `pid`'s tree
  // Called once the sampler is open, before the first sample.
  std::function<void()> on_start;
  // The main process's Python stacks read from outside every this often (py.* signals); 0: not
  // read. Only with `pid` (not a cgroup's job).
  std::int64_t python_interval_ns = 10'000'000;
};
struct LiveJob {
  JobWindows windows;
  std::vector<std::string> notes;
  double seconds = 0;  // how long it was sampled
  // What the main process's Python stacks showed, when they could be read (else a note says why).
  std::optional<PySummary> python;
  // Those of a sample of its DataLoader workers (the first kPyWorkers seen), by pid.
  std::vector<std::pair<pid_t, PySummary>> python_workers;
  // Under a launcher, each rank's main thread (store::RankStackGate's), by the rank's pid:
  // each rank is judged with its own.
  std::vector<std::pair<pid_t, PySummary>> python_ranks;
};
// The workers whose stacks a live profile reads beside the main thread's, and how often.
inline constexpr std::size_t kPyWorkers = 2;
inline constexpr std::int64_t kPyWorkerIntervalNs = 50'000'000;

// `summary` as the profile's JSON "python" object (docs/profile.md): the interpreter, the samples,
// the share of each activity and the top stacks.
[[nodiscard]] nlohmann::json python_json(const PySummary& summary, const PyActivities& activities);
// A duration shorter than two intervals is bad input, named as --duration.
// Samples `pid` and its descendants (or the request's cgroup) every interval until the duration
// is over, the job ends (its main process gone from two samples, or its group gone), or SIGINT,
// SIGTERM or SIGHUP comes (taken here, synchronously: noted as "stopped early by a signal").
// Errors: no such process, the sampler cannot open (bad input); a sample fails, the process ended
// before it could be sampled (failure).
[[nodiscard]] ProfileResult<LiveJob> sample_live(const host::Root& root,
                                                 const LiveRequest& request);

}  // namespace dltune::diagnose

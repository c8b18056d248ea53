#pragma once
// A job run with a recording of it (`run --record`, profile's and bench's runs): launch::run_job,
// with the recording made once the run is planned, sampling the job's processes from its start
// to its end, and the run's summary stored in it; when the job could not run, no recording is
// left behind.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/local_file.hpp"
#include "launch/run_job.hpp"
#include "monitor/sampler.hpp"
#include "record/record_session.hpp"

namespace dltune::record {

struct JobRecording {
  RecordSetup setup;  // path (an existing file is refused unless force), interval, notices
  // How to sample; the scope becomes the job's process tree when it starts.
  monitor::SamplerOptions sampler;
  bool quiet = false;  // no notice about the file at the end
};

// How often a recording reads the job's main process's Python stacks (store::PythonStackLog):
// 50 Hz, enough for shares of a few percent over a minute of samples.
inline constexpr std::int64_t kRecordPythonIntervalNs = 20'000'000;

// The recording of a job that `run --record` and `profile -- COMMAND` make at `path` (already
// checked by output_target): every `interval_ns`, the host facts `collect` gives, the job's
// Python stacks, sampled with `sampler`; `notice` says what happens to the file.
[[nodiscard]] JobRecording job_recording(const std::string& path, bool force,
                                         std::int64_t interval_ns,
                                         const inventory::CollectOptions& collect,
                                         monitor::SamplerOptions sampler, bool quiet,
                                         std::function<void(const std::string&)> notice);

// run_job with `recording`; `hooks` are called too, after the recording's own. A recording that
// cannot be created refuses the run (RunFailure kRefused, nothing started); one that cannot
// sample the job says so through its notice and the job runs on.
[[nodiscard]] tl::expected<launch::RunSummary, launch::RunFailure> run_recorded(
    const host::Root& root, const inventory::HostFacts& facts, launch::RunRequest request,
    const JobRecording& recording, const launch::JobHooks& hooks = {});

// What `dltune run` does with a checked request: the host's facts for a job (launch-only, with
// the network to judge the job's NCCL variables, NVML when it asks for GPUs), then run_job, or
// run_recorded with `recording`.
[[nodiscard]] tl::expected<launch::RunSummary, launch::RunFailure> run_with_facts(
    launch::RunRequest request, const std::optional<JobRecording>& recording,
    inventory::CollectOptions collect);

// Where a job's recording goes when keeping it is the user's choice: `file` when given (an
// output target: refused when it exists, when it is "-" or cannot be a regular file), else
// job.db in a private directory made from `prefix` that goes with this object.
class RecordingPlace {
 public:
  [[nodiscard]] static Result<RecordingPlace> make(const std::string& file,
                                                   const std::string& prefix);
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] bool kept() const { return !temp_.has_value(); }

 private:
  RecordingPlace() = default;
  std::optional<local_file::TempDirectory> temp_;
  std::string path_;
};

}  // namespace dltune::record

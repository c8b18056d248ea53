#pragma once
// A recording being made, for `dltune record`, `dltune run --record`, profile and bench: the
// file, the sampler's thread, and what is written at the end (the host's facts and check
// findings, the exit).
#include <signal.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "launch/spawn.hpp"
#include "monitor/sampler.hpp"
#include "store/python_stacks.hpp"
#include "store/recorder.hpp"
#include "store/recording.hpp"

namespace dltune::record {

struct RecordSetup {
  std::string path;
  bool force = false;
  std::int64_t interval_ns = 1'000'000'000;
  std::optional<std::int64_t> duration_ns;
  std::vector<std::string> command;   // the job's argv, when the command launches it
  std::string scope;                  // for store::RecordingInfo::scope
  inventory::CollectOptions collect;  // how the facts stored at the end are collected
  // What the recording has to say on the way ("recording stopped early: ..."), for a person.
  std::function<void(const std::string&)> notice;
  // The job's main process's Python stacks read every this often and kept per sample interval
  // (the document "python_stacks": store/python_stacks.hpp); 0: not read. Only for a job's tree
  // (record --pid, record/run/profile -- COMMAND). Under a launcher each rank's too, those
  // store::RankStackGate lets in (documents "python_stacks/PID").
  std::int64_t python_interval_ns = 0;
};

class RecordSession {
 public:
  // Creates the file (refusing an existing one unless force).
  [[nodiscard]] static Result<std::unique_ptr<RecordSession>> create(const RecordSetup& setup);
  ~RecordSession();
  // Starts sampling on a thread of its own.
  [[nodiscard]] Result<void> start(const host::Root& root, const monitor::SamplerOptions& options);
  [[nodiscard]] bool finished() const { return recorder_ && recorder_->finished(); }
  // Readable once the recording has ended by itself (store::Recorder::done_fd); -1 before start().
  [[nodiscard]] int done_fd() const { return recorder_ ? recorder_->done_fd() : -1; }
  // Stops sampling (the samples taken stay); finish() may come later.
  void stop() {
    if (recorder_) recorder_->stop();
  }
  // A document to store at finish() besides env and check ("summary": run's summary JSON).
  void add_document(std::string key, nlohmann::json doc) {
    documents_.emplace_back(std::move(key), std::move(doc));
  }
  // Stops sampling, adds the host's env facts and check findings (documents "env", "check"),
  // writes the end and the exit status, and gives one notice about the file (unless quiet).
  // Returns false when the recording could not be completed (the notice says why).
  bool finish(const host::Root& root, std::optional<int> exit_status, bool quiet);
  // A recording that never started is not left behind (bad input changes nothing): finishes
  // quietly and removes the file and SQLite's companions.
  void discard(const host::Root& root);
  [[nodiscard]] std::optional<store::RecorderStats> stats() const;
  // Says `text` through the setup's notice.
  void notice(const std::string& text) const {
    if (setup_.notice) setup_.notice(text);
  }

 private:
  RecordSession() = default;
  RecordSetup setup_;
  std::unique_ptr<store::RecordingWriter> writer_;
  std::unique_ptr<store::Recorder> recorder_;
  std::unique_ptr<store::PythonStackLog> python_;
  // The ranks' (on the recorder's thread until it stops).
  std::map<pid_t, std::unique_ptr<store::PythonStackLog>> rank_python_;
  store::RankStackGate rank_gate_;
  void follow_ranks(const host::Root& root, const monitor::Sample& s);
  std::vector<std::pair<std::string, nlohmann::json>> documents_;
};

// Waits while `session` samples, until the recording ends by itself (--duration, the scope
// gone) or a signal of `stop_set` comes: the caller blocks those signals in this thread, and the
// recorder's thread blocks every signal, so they are taken here, synchronously. The recording is
// left to be finished.
void wait_for_end(const RecordSession& session, const sigset_t& stop_set);

// `record` without a job: samples `options`' scope until --duration, the scope's end, or SIGINT,
// SIGTERM or SIGHUP (blocked in this thread meanwhile and taken synchronously), then finishes.
// `started` is called once sampling runs. An error (the session discarded) when sampling cannot
// start; false when the recording could not be completed (its notice said why).
[[nodiscard]] Result<bool> record_until_stopped(RecordSession& session, const host::Root& root,
                                                const monitor::SamplerOptions& options, bool quiet,
                                                const std::function<void()>& started);

// Starts `job` (no cgroup of its own: `record -- COMMAND`) and records it from its start to its
// end with `options` (their scope becomes the job's process tree). An error when the job could
// not start: then nothing was recorded. `notice` hears of a recording that could not sample.
[[nodiscard]] Result<launch::SpawnResult> record_job(RecordSession& session, const host::Root& root,
                                                     const launch::SpawnRequest& job,
                                                     const monitor::SamplerOptions& options);

// What the job's output said of its GPUs (launch/output_watch.hpp) as the recording's document
// "events", each with "source": "job output" (store::kJobOutputSource): report marks them, profile
// judges a CUDA OOM. Nothing when there are none.
void add_output_events(RecordSession& session, const std::vector<launch::OutputEvent>& events);

}  // namespace dltune::record

#pragma once
// Recorder: samples on a thread of its own at a fixed interval into a recording (for
// `dltune record` and `dltune run --record`). The pace is kept from absolute deadlines, so a slow
// sample delays the next one but never shifts the whole series; a sample that starts more than
// half an interval late is counted as late.
//
// Library code does not print (CONTRIBUTING.md, convention 5): notices from the sampler go to a
// callback that the command layer owns.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "monitor/sampler.hpp"
#include "store/recording.hpp"

namespace dltune::store {

// The recorder's pace, from absolute deadlines `interval` apart from `start` (monotonic ns): a
// slow sample delays the next one but never shifts the series; after a stall the deadlines
// already missed are skipped rather than made up in a burst.
class Pace {
 public:
  Pace(std::int64_t start_ns, std::int64_t interval_ns)
      : interval_(interval_ns), deadline_(start_ns) {}
  // A sample begins at `now`: late when more than half an interval past its deadline.
  [[nodiscard]] bool late(std::int64_t now) const { return now - deadline_ > interval_ / 2; }
  // The sample is done at `now`: moves to the next deadline and returns how long to wait for it
  // (0: take the next sample at once).
  [[nodiscard]] std::int64_t next(std::int64_t now);
  [[nodiscard]] std::int64_t deadline() const { return deadline_; }

 private:
  std::int64_t interval_;
  std::int64_t deadline_;
};

struct RecorderOptions {
  std::int64_t interval_ns = 1'000'000'000;
  std::optional<std::int64_t> duration_ns;  // stop by itself after this long
  // Stop by itself when the scope's processes are all gone (a job that ended) or its cgroup was
  // removed.
  bool stop_when_scope_ends = true;
  std::function<void(const std::string&)> on_notice;  // called on the recorder's thread
  // Where the pace's time comes from; null: the machine's monotonic clock.
  const Clock* clock = nullptr;
  // Called on the recorder's thread after each sample is taken (it may not be written yet).
  std::function<void(const monitor::Sample&)> after_sample;
  // Samples taken before they are handed to the writer together (at least 1). At a short
  // interval each sample's writing alone finds SQLite's code and pages gone cold from the caches
  // since the last one; written ten at a time at 10 Hz, writing costs half as much (bench/README).
  // The rows reach the open transaction up to hold - 1 intervals later, and the writer's batch
  // is committed as late: a crash loses them with the uncommitted batch. Held samples are written
  // when the recorder stops, for whatever reason.
  std::size_t hold = 1;
};

struct RecorderStats {
  std::size_t samples = 0;  // taken; all of them written once the recorder has finished
  std::size_t late = 0;
  double thread_cpu_seconds = 0;  // the recorder's own CPU time (sampling and writing)
  std::optional<Error> error;     // what stopped it, when something failed
};

class Recorder {
 public:
  // Starts the thread. It blocks every signal (signals are the command's to handle).
  [[nodiscard]] static std::unique_ptr<Recorder> start(std::unique_ptr<monitor::Sampler> sampler,
                                                       RecordingWriter& writer,
                                                       RecorderOptions options);
  ~Recorder();  // stop()
  // Asks the thread to stop after the sample in progress, and waits for it. Idempotent.
  void stop();
  // Whether the thread has ended (stop(), the duration, the scope ended, or an error).
  [[nodiscard]] bool finished() const { return finished_.load(); }
  // An eventfd that becomes readable when the thread has ended, to wait for it with poll(2)
  // (among other descriptors) instead of asking finished() again and again. -1 if none could be
  // made.
  [[nodiscard]] int done_fd() const { return done_fd_; }
  [[nodiscard]] RecorderStats stats() const;

 private:
  Recorder() = default;
  void loop();

  std::unique_ptr<monitor::Sampler> sampler_;
  RecordingWriter* writer_ = nullptr;
  RecorderOptions options_;
  std::atomic<bool> stop_{false}, finished_{false};
  mutable std::mutex mu_;
  RecorderStats stats_;
  std::thread thread_;
  int wake_fd_ = -1;  // an eventfd that stop() writes, so a long interval ends at once
  int done_fd_ = -1;
};

}  // namespace dltune::store

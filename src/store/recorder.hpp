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

#include "core/error.hpp"
#include "monitor/sampler.hpp"
#include "store/recording.hpp"

namespace dltune::store {

struct RecorderOptions {
  std::int64_t interval_ns = 1'000'000'000;
  std::optional<std::int64_t> duration_ns;  // stop by itself after this long
  // Stop by itself when the scope's processes are all gone (a job that ended) or its cgroup was
  // removed.
  bool stop_when_scope_ends = true;
  std::function<void(const std::string&)> on_notice;  // called on the recorder's thread
};

struct RecorderStats {
  std::size_t samples = 0;
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
};

}  // namespace dltune::store

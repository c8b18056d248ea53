#pragma once
// The main thread's Python stacks of a running job, read from outside (pystack) on a thread of
// its own while `profile` samples the operating system's signals: each stack named by its
// activity (py_activity.hpp) with the thread's state, tallied per profile interval, and the
// stacks kept collapsed ("file:function;...") for the report.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "diagnose/py_activity.hpp"
#include "host/root.hpp"
#include "pystack/process.hpp"

namespace dltune::diagnose {

class PyMainSampler {
 public:
  // Attaches to `pid` (pystack::PythonProcess::attach's errors: not Python, an unknown version,
  // no permission) and starts reading its main thread's stack every `interval_ns`.
  [[nodiscard]] static Result<std::unique_ptr<PyMainSampler>> start(const host::Root& root,
                                                                    pid_t pid,
                                                                    std::int64_t interval_ns);
  ~PyMainSampler();  // stops the thread
  PyMainSampler(const PyMainSampler&) = delete;
  PyMainSampler& operator=(const PyMainSampler&) = delete;

  // The tally since the last call (a profile interval's).
  [[nodiscard]] PyTally take();
  // Stops reading (the job ended, or the profile's window is over); idempotent.
  void stop();

  // What was read, for the report: the interpreter ("CPython 3.11"), the samples read and
  // skipped, and the most frequent collapsed stacks of the main thread (outermost first,
  // "file:function:line" joined by ';'), largest first.
  struct Summary {
    std::string interpreter;
    std::size_t samples = 0, skipped = 0;
    std::vector<std::size_t> by_activity;  // every sample, by activity index (last: other)
    std::vector<std::pair<std::string, std::size_t>> top_stacks;
    std::string last_error;  // why the last skipped sample was skipped
  };
  [[nodiscard]] Summary summary(std::size_t top = 10) const;
  [[nodiscard]] const PyActivities& activities() const { return *activities_; }

 private:
  PyMainSampler(pystack::PythonProcess process, const PyActivities& activities, host::Root root,
                std::int64_t interval_ns);
  void run();

  pystack::PythonProcess process_;
  const PyActivities* activities_;
  host::Root root_;
  std::int64_t interval_ns_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  PyTally tally_;
  Summary totals_;
  std::map<std::string, std::size_t> stacks_;
  std::thread thread_;
};

// A stack collapsed outermost first: "train.py:main;dataloader.py:__next__;...".
[[nodiscard]] std::string collapsed(const std::vector<pystack::Frame>& frames_innermost_first);

}  // namespace dltune::diagnose

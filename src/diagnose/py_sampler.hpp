#pragma once
// The main thread's Python stacks of a job for `profile`: read live (store::PythonStackLog on a
// thread of its own, an interval's stacks taken at each profile sample) or from a recording's
// "python_stacks" document; each stack named by its activity (py_activity.hpp) into the py.*
// signals, and summarised for the report (activities' shares, the most frequent stacks).
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "diagnose/py_activity.hpp"
#include "host/root.hpp"
#include "store/python_stacks.hpp"

namespace dltune::diagnose {

// What the stacks showed over a whole window.
struct PySummary {
  std::string interpreter;
  std::size_t samples = 0, skipped = 0;
  std::vector<std::size_t> by_activity;  // every sample, by activity index (last: other)
  // The most frequent collapsed stacks (store::collapsed), largest first.
  std::vector<std::pair<std::string, std::size_t>> top_stacks;
  std::string last_error;  // why the last skipped sample was skipped
};

// Names each stack of a log once.
class StackActivities {
 public:
  explicit StackActivities(const PyActivities& a) : a_(&a) {}
  // The activity of stack `id` whose frames are `frames` (kOtherStacks: other).
  std::size_t of(int id, const std::vector<pystack::Frame>& frames);
  // An interval's stacks as a tally; `frames_of` gives a stack's frames.
  template <class FramesOf>
  PyTally tally(const store::StackInterval& iv, FramesOf&& frames_of) {
    PyTally t(a_->list.size());
    for (const auto& c : iv.counts) {
      const auto act =
          c.stack == store::kOtherStacks ? a_->list.size() : of(c.stack, frames_of(c.stack));
      t.running[act] += c.running;
      t.waiting[act] += c.waiting;
    }
    return t;
  }

 private:
  const PyActivities* a_;
  std::map<int, std::size_t> cache_;
};

// The window's summary of what was read.
[[nodiscard]] PySummary summary_of(const store::PythonStacks& stacks, const PyActivities& a,
                                   std::size_t top = 10);

class PyMainSampler {
 public:
  // Attaches to `pid` (pystack's errors: not Python, an unknown version, no permission) and
  // starts reading its main thread's stack every `interval_ns`.
  [[nodiscard]] static Result<std::unique_ptr<PyMainSampler>> start(const host::Root& root,
                                                                    pid_t pid,
                                                                    std::int64_t interval_ns);
  // The tally since the last call (a profile interval's), ending at `wall_ns`.
  [[nodiscard]] PyTally take(std::int64_t wall_ns);
  void stop() { log_->stop(); }
  [[nodiscard]] PySummary summary(std::size_t top = 10) const;

 private:
  PyMainSampler(std::unique_ptr<store::PythonStackLog> log, const PyActivities& a)
      : log_(std::move(log)), activities_(&a), names_(a) {}
  std::unique_ptr<store::PythonStackLog> log_;
  const PyActivities* activities_;
  StackActivities names_;
};

}  // namespace dltune::diagnose

#pragma once
// What a Python stack is doing: data loading, the model, waiting for the DataLoader's workers, a
// synchronising call, logging, or other Python work, by the table of
// knowledge/python_activity.toml; and the main thread's stacks of an interval tallied into the
// profile's py.* signals (diagnose/signals.hpp).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "diagnose/signals.hpp"
#include "pystack/walk.hpp"

namespace dltune::diagnose {

struct PyActivity {
  std::string id, label;
  std::vector<std::string> innermost_files, files, functions;
  bool files_or_functions = false;  // `files` or `functions` rather than both
};

struct PyActivities {
  std::vector<PyActivity> list;  // in the table's order: the first that holds names a stack
  // The index of `id`; list.size() when there is none (and for "other").
  [[nodiscard]] std::size_t index_of(std::string_view id) const;
};

// Parses and checks the table; errors name `name`, the activity and the key.
[[nodiscard]] Result<PyActivities> parse_py_activities(std::string_view toml_text,
                                                       std::string_view name);
// knowledge/python_activity.toml as compiled in.
[[nodiscard]] const Result<PyActivities>& builtin_py_activities();

// The activity of a stack (frames innermost first): an index into `a.list`, or a.list.size()
// for other Python work (an empty stack too).
[[nodiscard]] std::size_t classify(const PyActivities& a,
                                   const std::vector<pystack::Frame>& frames);

// The main thread's stacks over one interval, by activity, split by whether the thread was on a
// CPU (state R) when its stack was read.
struct PyTally {
  std::vector<std::size_t> running, waiting;  // by activity index; the last: other
  std::size_t failed = 0;                     // samples that could not be read
  explicit PyTally(std::size_t activities = 0)
      : running(activities + 1, 0), waiting(activities + 1, 0) {}
  void add(std::size_t activity, bool on_cpu);
  [[nodiscard]] std::size_t samples() const;
  [[nodiscard]] std::size_t running_samples() const;
  void clear();
};

// The py.* signals of an interval from its tally (none without a sample read): the shares of the
// samples on a CPU in loading, the model and other Python; of all samples waiting for the
// DataLoader, in a synchronising call, logging.
void set_py_signals(SignalValues& v, const PyTally& t, const PyActivities& a);

}  // namespace dltune::diagnose

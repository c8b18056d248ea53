#pragma once
// The current Python function of a job's processes for `top --pid` (and --cgroup, --slurm-job):
// each Python process of the job (its main process, workers and ranks) attached once from
// outside (pystack, read-only: the job is never stopped), its main thread's innermost frame read
// at every refresh into ProcessModel::python_frame.
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>

#include "host/root.hpp"
#include "monitor/model.hpp"
#include "pystack/process.hpp"

namespace dltune::tui {

class PythonFunctions {
 public:
  explicit PythonFunctions(host::Root root) : root_(std::move(root)) {}
  // Fills python_frame of the job's processes of `m` (roles main, worker, rank) that are Python
  // processes this program may read; others are tried once and left alone.
  void fill(monitor::Model& m);
  // Why the first process that could not be attached was not (once), for the notices.
  [[nodiscard]] std::string take_note();

 private:
  struct Entry {
    std::string cmdline;  // a pid reused by another program is attached again
    std::unique_ptr<pystack::PythonProcess> process;  // null: not Python, or not readable
  };
  host::Root root_;
  std::map<pid_t, Entry> entries_;
  std::string note_;
  bool noted_ = false;
};

// "Samples.__getitem__ train.py:64": a frame as the view shows it.
[[nodiscard]] std::string frame_text(const pystack::Frame& f);

}  // namespace dltune::tui

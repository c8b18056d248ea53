#pragma once
// `stacks --pid PID --duration D`: a Python process's stacks read RATE times a second for a
// while, counted, with what the sampling cost this process (docs/stacks.md reports it).
#include <atomic>
#include <cstdint>
#include <string>

#include "pystack/process.hpp"
#include "pystack/render.hpp"

namespace dltune::pystack {

struct SampleRunRequest {
  std::int64_t duration_ns = 0;
  std::int64_t rate_hz = 100;
  // Set (by a signal handler, another thread) to end the run early; null: never.
  const std::atomic<bool>* stop = nullptr;
};

struct SampleRun {
  StackCounts counts;
  std::uint64_t skipped = 0;  // samples whose frames changed under the reader
  std::string ended;          // why the process was gone before the end ("" when it was not)
  std::int64_t wall_ns = 0;
  std::int64_t cpu_ns = 0;  // this process's CPU time spent meanwhile (getrusage(2))
  [[nodiscard]] std::uint64_t taken() const { return counts.samples() + skipped; }
  // "N samples in S s (K skipped: ...); sampler CPU C ms, U us a sample, P% of a core[; ended]"
  [[nodiscard]] std::string cost_text() const;
};

// One sample of every thread, tried again (at most three more times) while the frames changed
// under the reader; the process's exit ends the tries at once.
[[nodiscard]] Result<std::vector<ThreadStack>> sample_settled(PythonProcess& process);

// Reads on the CLOCK_MONOTONIC grid of 1/rate (never a burst to catch up when behind), until
// the duration is over, `stop` is set, or the process is gone (ESRCH).
[[nodiscard]] SampleRun sample_for(PythonProcess& process, const SampleRunRequest& request);
// The same, ended early by SIGINT or SIGTERM, whose handlers it sets for the run and restores
// after it (`request.stop` is its own).
[[nodiscard]] SampleRun sample_until_stopped(PythonProcess& process, SampleRunRequest request);

// attach for a PID a user named: the failure is bad input (`bad_input`) when no such process
// runs or it is not a Python one (a kernel thread among them), else it could not be read.
[[nodiscard]] tl::expected<PythonProcess, Failure> attach_named(const host::Root& root, pid_t pid);

}  // namespace dltune::pystack

#pragma once
// The main thread's Python stacks of a job, read from outside (pystack) on a thread of its own
// and kept per interval of a recording or a live profile: frames and stacks interned once, each
// interval the stacks seen in it with how often the thread was on a CPU (state R) or not. Bounded:
// at most kMaxStacks distinct stacks (later new ones count as one "(other stacks)"), the
// kMaxPerInterval most frequent of an interval (the rest under that same entry), and
// kMaxIntervals intervals kept for the document (later ones only in the totals).
//
// Written into a recording as the document "python_stacks" (docs/recording.md); read back by
// `profile` (its py.* signals) and `report`.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.hpp"
#include "host/root.hpp"
#include "pystack/process.hpp"
#include "pystack/render.hpp"

namespace dltune::store {

class Recording;

inline constexpr std::size_t kMaxStacks = 4096;
inline constexpr std::size_t kMaxPerInterval = 32;
inline constexpr std::size_t kMaxIntervals = 36'000;
inline constexpr int kOtherStacks = -1;  // the id that stands for the stacks not kept

struct StackCount {
  int stack = kOtherStacks;  // an index into PythonStacks::stacks
  std::uint32_t running = 0, waiting = 0;
};

struct StackInterval {
  std::int64_t wall_ns = 0;  // the end of the interval (the recording's sample's stamp)
  std::vector<StackCount> counts;
};

// What a log holds, as written and read back.
struct PythonStacks {
  std::string interpreter;  // "CPython 3.11.2"
  pid_t pid = 0;
  std::int64_t sample_interval_ns = 0;
  std::vector<pystack::Frame> frames;    // line 0: stacks are kept by function, not line
  std::vector<std::vector<int>> stacks;  // frame indexes, innermost first
  std::vector<StackInterval> intervals;  // in order
  std::vector<std::uint64_t> totals;     // by stack id, every interval; the last: other
  std::uint64_t samples = 0, skipped = 0;
  std::string last_error;            // why the last skipped sample was
  bool intervals_truncated = false;  // more than kMaxIntervals were seen

  [[nodiscard]] nlohmann::json to_json() const;
  // Errors name the key that is wrong.
  [[nodiscard]] static Result<PythonStacks> from_json(const nlohmann::json& j);
  // The frames of a stack id, innermost first (none for kOtherStacks).
  [[nodiscard]] std::vector<pystack::Frame> frames_of(int stack) const;
  // Every kept stack of the main thread with its total, and the rest as one "(other stacks)":
  // what `stacks --recording` prints.
  [[nodiscard]] pystack::StackCounts counts() const;
  // "N samples of pid P's main thread (INTERPRETER, every M ms)"
  [[nodiscard]] std::string summary_text() const;
  // Those the recording `rec` (the file `path`) kept: its document "python_stacks". Errors
  // name the file: it cannot be read, it kept none (recorded without a Python job, or with
  // --no-stacks), the document is not one.
  [[nodiscard]] static Result<PythonStacks> from_recording(const Recording& rec,
                                                           const std::string& path);
};

// The document of a rank's stacks in a recording ("python_stacks/PID"), and the one that lists
// the ranks that have one ("python_stacks_ranks": [PID, ...]).
[[nodiscard]] std::string rank_stacks_key(pid_t pid);
inline constexpr const char* kRankStacksList = "python_stacks_ranks";

// Which ranks of a job under a launcher have their stacks read (record, profile): each from the
// second sample it is seen in (a child just forked may not have exec'd its interpreter yet),
// each tried once, at most kRankStacks read; each read every `interval_ns` times their number
// (at least two), so that all of them cost what one process's stacks do.
inline constexpr std::size_t kRankStacks = 16;
class RankStackGate {
 public:
  // The ranks of this sample to attach to now, `ranks` in its order, `attached` being read now.
  [[nodiscard]] std::vector<pid_t> to_attach(const std::vector<pid_t>& ranks, std::size_t attached);
  [[nodiscard]] static std::int64_t interval_ns(std::int64_t base_ns, std::size_t ranks);

 private:
  std::set<pid_t> seen_, tried_;
};

class PythonStackLog {
 public:
  // Attaches to `pid` (pystack::PythonProcess::attach's errors) and starts reading its main
  // thread's stack every `sample_interval_ns`, on a thread that blocks every signal.
  [[nodiscard]] static Result<std::unique_ptr<PythonStackLog>> start(
      const host::Root& root, pid_t pid, std::int64_t sample_interval_ns);
  ~PythonStackLog();  // stops the thread
  PythonStackLog(const PythonStackLog&) = delete;
  PythonStackLog& operator=(const PythonStackLog&) = delete;

  // Ends the interval in progress at `wall_ns` and returns it (kept for the document too, up
  // to kMaxIntervals).
  StackInterval close_interval(std::int64_t wall_ns);
  // Stops reading; idempotent.
  void stop();
  // A copy of everything so far.
  [[nodiscard]] PythonStacks snapshot() const;
  // The frames of a stack id, innermost first.
  [[nodiscard]] std::vector<pystack::Frame> frames_of(int stack) const;

 private:
  PythonStackLog(pystack::PythonProcess process, host::Root root, std::int64_t interval_ns);
  void run();
  int intern(const std::vector<pystack::Frame>& frames);  // under mutex_

  pystack::PythonProcess process_;
  host::Root root_;
  std::int64_t interval_ns_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  PythonStacks data_;
  std::map<std::pair<std::string, std::string>, int> frame_ids_;
  std::map<std::vector<int>, int> stack_ids_;
  std::map<int, StackCount> current_;  // the interval in progress, by stack id
  std::thread thread_;
};

// A stack collapsed outermost first, "train.py:main;module.py:Module._call_impl" (files by their
// base names): flamegraph.pl's folded form, and what the report shows.
[[nodiscard]] std::string collapsed(const std::vector<pystack::Frame>& frames_innermost_first);

}  // namespace dltune::store

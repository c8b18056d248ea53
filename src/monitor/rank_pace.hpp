#pragma once
// Which rank of a synchronous distributed job holds the others back. In DDP every rank waits for
// the slowest in the all-reduce, so the straggler is the rank whose main thread is on a CPU far
// more than the others' while theirs sleep. The thresholds are shared by `profile` (over its
// window, diagnose/profile_job.hpp compare_ranks) and `top` (over its last seconds, RankWatch).
//
// Measured on this project's 2-rank gloo job (tests/jobs/ddp_train.py): a rank with 4x the
// others' work had its main thread on a CPU 99% of the time, the waiting rank's 2.5% (asleep in
// 96% of the samples); equal ranks were at 76% and 78%.
#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "monitor/model.hpp"

namespace dltune::monitor {

inline constexpr double kStragglerBusyPct = 40;        // its main thread on a CPU at least this
inline constexpr double kStragglerFactor = 2;          // and this many times the others' median
inline constexpr double kStragglerGapPts = 25;         // and this many points above it
inline constexpr double kStragglerOthersAsleep = 0.5;  // the others asleep in this share
// A rank that waits for a CPU at least as long as it runs is starved: in a job whose ranks meet
// at every step it holds the others back whatever they do while they wait (gloo and NCCL may
// spin rather than sleep, so their share asleep is no evidence then). Measured with a load on
// rank 1's CPU: waiting 44-54% against 36-38% on a CPU, while rank 0 slept 0.45-0.94 of samples.
[[nodiscard]] inline bool starved_of_cpu(double run_queue_pct, double on_cpu_pct) {
  return run_queue_pct > 0 && run_queue_pct >= on_cpu_pct;
}
// Or, its time on a CPU like the others' (a CPU shared with another load stretches its work),
// its main thread waiting for a CPU at least this, twice the others' and this many points above
// (measured with busy loops pinned to one rank's CPU: 44% against 1.5%, the other rank asleep in
// 58% to 79% of the samples).
inline constexpr double kStragglerWaitPct = 20;
inline constexpr double kStragglerWaitGapPts = 15;

[[nodiscard]] double median(std::vector<double> v);  // 0 for none

// The index of the value far above the others (at least two values): at least `least`,
// `factor` times the others' median and `gap` above it; with the others' median. Nothing when
// none is. By default the thresholds on the time on a CPU.
struct FarAbove {
  std::size_t index = 0;
  double others_median = 0;
};
[[nodiscard]] std::optional<FarAbove> far_above(const std::vector<double>& values,
                                                double least = kStragglerBusyPct,
                                                double factor = kStragglerFactor,
                                                double gap = kStragglerGapPts);
// The same on the main threads' wait for a CPU (kStragglerWaitPct, kStragglerWaitGapPts).
[[nodiscard]] std::optional<FarAbove> far_above_in_wait(const std::vector<double>& run_queue);

// "rank 3 (pid 1234)", or "pid 1234" without its RANK.
[[nodiscard]] std::string rank_label(pid_t pid, std::optional<int> rank);

// The straggler of a live view over its last `window_s` seconds of models (top, record --replay).
struct Straggler {
  pid_t pid = 0;
  std::optional<int> rank;
  double on_cpu_pct = 0, others_on_cpu_pct = 0, others_asleep = 0;
  double run_queue_pct = 0, others_run_queue_pct = 0;
  bool by_wait = false;  // named by its wait for a CPU (a shared CPU), not its time on one
  std::string text;      // "rank 1 (pid 4101) holds the job back: ..."
};

class RankWatch {
 public:
  explicit RankWatch(double window_s = 10) : window_s_(window_s) {}
  // One interval (a model with rates): its ranks' main threads. A model without rates (the
  // first) or without two ranks adds nothing but may end the window (ranks gone).
  void add(const Model& m);
  // Over the window: every rank of the latest model seen in at least 3 intervals spanning at
  // least 3 s, each with its main thread's time on a CPU and waiting for one. The rank far above
  // the others on its time on a CPU, or else on its wait for one, while the others sleep.
  [[nodiscard]] std::optional<Straggler> straggler() const;
  void clear() { intervals_.clear(); }

 private:
  struct Seen {
    std::optional<int> rank;
    std::optional<double> on_cpu_pct, run_queue_pct;
    bool asleep = false;
  };
  struct Interval {
    std::int64_t wall_ns = 0;
    double seconds = 0;
    std::map<pid_t, Seen> ranks;
  };
  double window_s_;
  std::deque<Interval> intervals_;
};

// The ranks of a model: the processes whose role is rank, and the main process too when it is
// not their launcher (in a job's group the main process is one of the ranks).
[[nodiscard]] std::vector<const ProcessModel*> ranks_in(const Model& m);

}  // namespace dltune::monitor

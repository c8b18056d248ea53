#pragma once
// What one run of a job measured, read back from its recording (`dltune run
// --record`): the run's own summary (exit status, wall time, the rate the job printed, OOM
// kills, peak memory) and, from the samples, the means and totals `compare` puts side by side
// (GPU utilisation, swap-ins, major faults, the job's own PSI).
//
// Everything comes from the recording, never from the command's output, so that `compare` on
// recordings made by hand gives what `bench` gave on its own.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::bench {

// The metrics compare puts side by side, in the order of its table.
enum class Metric : std::size_t {
  kRate,         // the job's rate (its tqdm it/s, or --rate-regex): median after warm-up
  kWall,         // wall time of the run, seconds
  kGpuUtil,      // mean utilisation of the job's GPUs, %
  kSwapIn,       // bytes swapped in on the host during the run
  kMajorFaults,  // major faults of the job's processes
  kPsiCpu,       // the job cgroup's PSI cpu (some), mean %
  kPsiIo,        // PSI io (some)
  kPsiMemory,    // PSI memory (some)
  kOomKills,     // OOM kills of the job (the kernel log's victims, or its cgroup's count)
  kPeakMemory,   // the job's largest resident set, bytes
  kCount
};
inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::kCount);

struct MetricInfo {
  Metric metric;
  std::string_view id;     // "rate", "wall_seconds": the JSON key (docs/json.md)
  std::string_view label;  // "throughput", "wall time"
  std::string_view unit;   // "s", "%", "B", "" (a count); the rate's unit comes from the run
  bool higher_is_better;
  // No ratio when a run's value is at or below this: a ratio of near-nothing (PSI 0.1% against
  // 0.3%) is noise that looks like a large effect.
  double ratio_floor = 0;
};
[[nodiscard]] const std::array<MetricInfo, kMetricCount>& metric_table();
[[nodiscard]] const MetricInfo& info(Metric m);

struct RunMetrics {
  std::string recording;             // the file it was read from
  std::string command;               // the job's argv, joined for people
  std::int64_t started_wall_ns = 0;  // the recording's start: pairs are found by it
  // The job's (128+N for a signal); none for a recording of a process dltune did not start
  // (`record --pid`): not a failure.
  std::optional<int> exit_status;
  bool finished = false;  // the recording was finished (not cut off by a crash)
  std::string rate_unit;  // "it/s", "samples/s", "" for --rate-regex
  int rate_readings = 0;  // progress lines the rate came from
  std::array<std::optional<double>, kMetricCount> values;

  [[nodiscard]] const std::optional<double>& operator[](Metric m) const {
    return values[static_cast<std::size_t>(m)];
  }
  [[nodiscard]] std::optional<double>& operator[](Metric m) {
    return values[static_cast<std::size_t>(m)];
  }
};

// Reads a recording made by `dltune run --record` (or `record -- CMD`: then without the run's
// summary: no rate, wall time from the samples). Errors name the file: not a recording, a
// host-wide recording (no job), no samples.
[[nodiscard]] Result<RunMetrics> read_run(const std::string& recording_path);

// A value for people in the metric's unit: "12.4 it/s", "41.2 s", "87%", "1.2 GiB", "3".
[[nodiscard]] std::string format_metric(Metric m, double value, std::string_view rate_unit = {});

}  // namespace dltune::bench

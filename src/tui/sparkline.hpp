#pragma once
// Sparklines for top's short history: a series of values as one row of block characters
// (▁▂▃▄▅▆▇█), or ASCII (_.-=+*#%) where the locale's character set is not UTF-8.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace dltune::tui {

// `values` (oldest first; nullopt: no reading, a space) scaled to [0, max] in at most `columns`
// characters: with more values than columns, each character is the largest of its share of them.
// A value at or below 0 is the lowest block, so that a quiet minute still draws a line.
[[nodiscard]] std::string sparkline(const std::vector<std::optional<double>>& values, double max,
                                    std::size_t columns, bool utf8);

// Whether the terminal's locale (LC_CTYPE, as set by setlocale(LC_CTYPE, "")) is UTF-8.
[[nodiscard]] bool locale_is_utf8();

// A job's pace in one sample: its CPU (% of one CPU: its group's, or its processes' summed) and
// the bytes its processes read from storage per second (the input pipeline's rate). Both absent
// without a job.
struct JobPoint {
  std::optional<double> cpu_pct, read_bytes_s;
};

// The last minute of host CPU busy %, PSI some-CPU %, each GPU's utilisation % and the job's
// pace, one entry per sample (nullopt where the sample had no such reading).
struct History {
  std::int64_t span_ns = 60'000'000'000;
  std::deque<std::int64_t> at_ns;
  std::deque<std::optional<double>> cpu, psi_cpu;
  std::vector<std::deque<std::optional<double>>> gpus;  // by position in the Model's GPUs
  std::vector<unsigned> gpu_index;                      // their indexes, as the view names them
  std::deque<std::optional<double>> job_cpu, job_read;

  void add(std::int64_t now_ns, double cpu_busy, std::optional<double> psi,
           const std::vector<std::optional<double>>& gpu_util,
           const std::vector<unsigned>& gpu_indexes, JobPoint job = {});
};

// The history as lines of at most `width` columns: "CPU  ▁▂▃ 45%   PSI cpu ▁▁▂ 2.0%", then the
// job's pace when there is one ("JOB  cpu ▁▃█ 180%   read ▁▁▅ 12M/s", each scaled to its own
// peak over the minute, the CPU to at least one CPU's 100%), then the GPUs ("GPU0 ▁▃█ 98%
// GPU1 ..."), as many per line as fit.
[[nodiscard]] std::vector<std::string> history_lines(const History& h, int width, bool utf8);

}  // namespace dltune::tui

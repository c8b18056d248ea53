#pragma once
// A recording as time-aligned series, for `dltune report` (docs/report.md).
//
// extract() walks the recording (or a window of it), computes Model::from(now, previous) for
// every sample, as top does, and fills one column per series: the same time axis for all, a
// value per sample, NaN where the source was absent or a rate has no previous sample (written as
// null, never 0). It also collects the markers (OOM kills, the job's start and end, kernel
// events) and the documents that the report shows at the top.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "store/recording.hpp"

namespace dltune::report {

inline constexpr double kNull = std::numeric_limits<double>::quiet_NaN();

struct Series {
  std::string id;     // stable: "cpu.user_pct", "disk.vda.read_bytes_s", "gpu.0.power_w"
  std::string label;  // for people: "user", "vda read", "GPU 0"
  std::string unit;   // "percent", "bytes", "bytes/s", "1/s", "watts", "celsius", "MHz", "count"
  std::vector<double> values;  // NaN: null
  // Empty: the report's shared time axis. Set by decimation, which keeps each series' own
  // points at their own times.
  std::vector<std::int64_t> time_ms;
};

// A stretch of time in which a state held (a GPU's clocks held down by a reason), drawn as a
// shaded band behind a chart's lines.
struct Band {
  std::string series;  // the series it comes from: "gpu.held.power_cap"
  std::string label;   // for the legend: "power cap"
  std::int64_t from_ms = 0, to_ms = 0;
};

// One chart: series drawn together against time (at most two units: left and right axis).
struct Chart {
  std::string id;     // "cpu", "gpu_power", also the canvas id in the HTML
  std::string title;  // "CPU (% of all CPUs)"
  std::vector<std::string> series;
  // The y axes' titles with their units ("bytes/s", "%", "W"): the left axis, then the right
  // one when the series have two units. The x axis is always time.
  std::vector<std::string> axes;
  // Set when every series is zero or absent in the window: the one line said instead of the
  // chart ("Swap: none used in this window").
  std::string empty;
  // Said under the chart: series left out because they were idle ("no traffic on docker0").
  std::string note;
  std::vector<Band> bands;
};

// A group of charts; a section without data has no charts and says why.
struct Section {
  std::string id, title;
  std::vector<Chart> charts;
  std::string absent;  // why there is nothing to show (empty when there are charts)
};

struct Marker {
  std::int64_t time_ms = 0;
  std::string kind;  // "oom_kill", "cgroup_oom_kill", "job_start", "job_end", "xid", or an event's
  std::string text;
};

struct ReportData {
  store::RecordingInfo info;
  std::size_t recording_samples = 0;  // in the whole recording
  // The recording's start and end (recording_start_ns, recording_end_ns), ns since the epoch.
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t from_ms = 0, to_ms = 0;  // the window: the x axis of every chart
  std::size_t window_samples = 0;       // samples in the window (before any decimation)
  std::vector<std::int64_t> time_ms;    // ms since the Unix epoch, one per sample in the window
  std::vector<Series> series;
  std::vector<Section> sections;
  std::vector<Marker> markers;  // in time order
  // Decimation (decimate.hpp): the bound given, and whether any series was cut down.
  std::optional<std::size_t> max_points;
  bool decimated = false;
  // The recording's documents: "env", "check", "profile", "python_stacks" (absent when not
  // recorded).
  std::optional<nlohmann::json> env, check, profile, python_stacks;

  [[nodiscard]] const Series* find(const std::string& id) const;
};

// The window: wall times in ns, both inclusive; nullopt for the recording's own start and end.
struct Window {
  std::optional<std::int64_t> from_ns, to_ns;
};

// A --from/--to value against a recording that starts at start_ns and ends at end_ns:
// "2026-11-30T14:05:00Z", "2026-11-30T14:05:00.5+01:00", "2026-11-30 14:05:00" (local time),
// "+10m" (after the start), "-1h" (before the end). `option` names the flag in errors.
[[nodiscard]] Result<std::int64_t> parse_time(std::string_view text, std::int64_t start_ns,
                                              std::int64_t end_ns, std::string_view option);

// --from and --to (each may be empty) as a window of the recording, checked: each parses, from
// is not after to, and the window holds a sample. Errors name the option.
[[nodiscard]] Result<Window> window_of(const store::Recording& recording, const std::string& from,
                                       const std::string& to);

// The samples of the recording within `window`: numbers [first, last). Errors (bad input): from
// after to, a window that holds no sample.
[[nodiscard]] Result<std::pair<std::size_t, std::size_t>> window_indices(
    const store::Recording& recording, const Window& window);

// Reads the recording's samples within `window` (and the one before it, for the first rates).
// Errors: a window that holds no sample, from after to, a sample that cannot be read.
[[nodiscard]] Result<ReportData> extract(const store::Recording& recording, const Window& window);

// The recording's start and end wall times: its own (meta) when they lie within a few intervals
// of the first and last samples, else those samples' times.
[[nodiscard]] std::int64_t recording_start_ns(const store::Recording& recording);
[[nodiscard]] std::int64_t recording_end_ns(const store::Recording& recording);

}  // namespace dltune::report

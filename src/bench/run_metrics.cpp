#include "bench/run_metrics.hpp"

#include <cmath>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "diagnose/bottleneck.hpp"
#include "diagnose/signals.hpp"
#include "store/recording.hpp"

namespace dltune::bench {

namespace {

using diagnose::Signal;

constexpr std::array<MetricInfo, kMetricCount> kTable{{
    {Metric::kRate, "rate", "throughput", "", true, 0},
    {Metric::kWall, "wall_seconds", "wall time", "s", false, 0},
    {Metric::kGpuUtil, "gpu_util", "GPU utilisation", "%", true, 1},
    {Metric::kSwapIn, "swap_in_bytes", "swap-ins (host)", "B", false, 1 << 20},
    {Metric::kMajorFaults, "major_faults", "major faults (job)", "", false, 10},
    {Metric::kPsiCpu, "psi_cpu", "PSI cpu (job)", "%", false, 1},
    {Metric::kPsiIo, "psi_io", "PSI io (job)", "%", false, 1},
    {Metric::kPsiMemory, "psi_memory", "PSI memory (job)", "%", false, 1},
    {Metric::kOomKills, "oom_kills", "OOM kills", "", false, 0},
    {Metric::kPeakMemory, "peak_rss_bytes", "peak memory (job)", "B", false, 0},
}};

// The mean of a signal over the samples that have it; nullopt when none has.
std::optional<double> mean_of(const diagnose::Window& w, Signal s) {
  double sum = 0;
  int n = 0;
  for (const auto& v : w.samples)
    if (const auto& x = v[static_cast<std::size_t>(s)]) {
      sum += *x;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

// A per-second signal integrated over the run: each interval's rate times its length.
std::optional<double> total_of(const diagnose::Window& w, Signal s, std::int64_t interval_ns) {
  double sum = 0;
  bool any = false;
  for (std::size_t i = 0; i < w.samples.size(); ++i) {
    const auto& x = w.samples[i][static_cast<std::size_t>(s)];
    if (!x) continue;
    const std::int64_t dt = i > 0 ? w.wall_ns[i] - w.wall_ns[i - 1] : interval_ns;
    sum += *x * static_cast<double>(dt) / 1e9;
    any = true;
  }
  if (!any) return std::nullopt;
  return std::round(sum);
}

std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

const std::array<MetricInfo, kMetricCount>& metric_table() {
  return kTable;
}

const MetricInfo& info(Metric m) {
  return kTable[static_cast<std::size_t>(m)];
}

Result<RunMetrics> read_run(const std::string& recording_path) {
  auto rec = store::Recording::open(recording_path);
  if (!rec) return tl::unexpected(rec.error());
  const auto& ri = (*rec)->info();
  RunMetrics r;
  r.recording = recording_path;
  r.started_wall_ns = ri.started_wall_ns;
  r.command = text::join(ri.command, " ");
  r.finished = ri.ended_wall_ns.has_value();
  r.exit_status = ri.exit_status;
  if ((*rec)->size() == 0) return fail("has no samples: not a run to compare", recording_path);
  diagnose::WindowBuilder b;
  auto walked = (*rec)->for_each(0, (*rec)->size(), [&](std::size_t, monitor::Sample&& s) {
    b.add(std::move(s));
    return Result<void>{};
  });
  if (!walked) return tl::unexpected(walked.error());
  if (b.job().main == 0)
    return fail(
        "is a recording of the whole host, not of one job (record one with `dltune run "
        "--record FILE -- COMMAND` or `dltune record --pid PID`)",
        recording_path);
  if (r.command.empty()) r.command = b.job().cmdline;
  const auto& w = b.window();
  r[Metric::kGpuUtil] = mean_of(w, Signal::kGpuUtil);
  r[Metric::kSwapIn] = total_of(w, Signal::kHostSwapIn, ri.interval_ns);
  r[Metric::kMajorFaults] = total_of(w, Signal::kJobMajorFaults, ri.interval_ns);
  r[Metric::kPsiCpu] = mean_of(w, Signal::kJobPsiCpu);
  r[Metric::kPsiIo] = mean_of(w, Signal::kJobPsiIo);
  r[Metric::kPsiMemory] = mean_of(w, Signal::kJobPsiMemory);
  // Counts per interval, not rates: summed as they are.
  for (const auto& v : w.samples)
    if (const auto& k = v[static_cast<std::size_t>(Signal::kCgroupOomKills)])
      r[Metric::kOomKills] = r[Metric::kOomKills].value_or(0) + *k;
  if (ri.ended_wall_ns)
    r[Metric::kWall] = static_cast<double>(*ri.ended_wall_ns - ri.started_wall_ns) / 1e9;

  auto doc = (*rec)->document("summary");
  if (!doc) return tl::unexpected(doc.error());
  if (*doc && (*doc)->is_object()) {
    const auto& s = **doc;
    if (const auto code = number(s, "exit_code")) r.exit_status = static_cast<int>(*code);
    if (const auto wall = number(s, "wall_seconds")) r[Metric::kWall] = *wall;
    if (const auto rss = number(s, "max_rss_bytes"); rss && *rss > 0) r[Metric::kPeakMemory] = *rss;
    if (const auto it = s.find("oom_victims"); it != s.end() && it->is_array()) {
      const double victims = static_cast<double>(it->size());
      r[Metric::kOomKills] = std::max(victims, r[Metric::kOomKills].value_or(0));
    }
    if (const auto it = s.find("progress"); it != s.end() && it->is_object()) {
      if (const auto rate = number(*it, "median_rate"); rate && *rate > 0 && std::isfinite(*rate))
        r[Metric::kRate] = *rate;
      if (const auto u = it->find("unit"); u != it->end() && u->is_string()) r.rate_unit = *u;
      if (const auto n = number(*it, "samples")) r.rate_readings = static_cast<int>(*n);
    }
  }
  return r;
}

std::string format_metric(Metric m, double v, std::string_view rate_unit) {
  const auto fixed = [](double x) {
    if (std::fabs(x) >= 1e9) return fmt::format("{:.2f}G", x / 1e9);
    if (std::fabs(x) >= 1e6) return fmt::format("{:.2f}M", x / 1e6);
    if (std::fabs(x) >= 1e4) return fmt::format("{:.1f}k", x / 1e3);
    return std::fabs(x) >= 100  ? fmt::format("{:.0f}", x)
           : std::fabs(x) >= 10 ? fmt::format("{:.1f}", x)
                                : fmt::format("{:.2f}", x);
  };
  switch (m) {
    case Metric::kRate:
      return rate_unit.empty() ? fixed(v) + "/s" : fixed(v) + " " + std::string(rate_unit);
    case Metric::kWall:
      return fixed(v) + " s";
    case Metric::kGpuUtil:
    case Metric::kPsiCpu:
    case Metric::kPsiIo:
    case Metric::kPsiMemory:
      return fixed(v) + "%";
    case Metric::kSwapIn:
    case Metric::kPeakMemory:
      return text::human_bytes(static_cast<std::uint64_t>(std::max(0.0, v)));
    case Metric::kMajorFaults:
    case Metric::kOomKills:
    case Metric::kCount:
      break;
  }
  return fmt::format("{:.0f}", v);
}

}  // namespace dltune::bench

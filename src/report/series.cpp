// extract(): a recording's samples (or a window of them) into time-aligned series (series.hpp),
// through SeriesBuilder; the window, the job's start and end and the kernel events as markers,
// and the documents shown at the top.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/time_format.hpp"
#include "report/sections.hpp"
#include "report/series.hpp"
#include "report/series_builder.hpp"

namespace dltune::report {

namespace {

using monitor::Sample;

// "2026-11-30T14:05:00Z" (UTC, whole seconds): how window errors name times.
std::string iso(std::int64_t ns) {
  return text::format_time_ns(ns, "%Y-%m-%dT%H:%M:%SZ", text::TimeZone::kUtc);
}

// The recording document "events" (docs/recording.md): [{"time_ns", "kind", "text"}].
Result<void> add_events(const store::Recording& rec, std::int64_t from_ns, std::int64_t to_ns,
                        std::vector<Marker>& markers) {
  auto doc = rec.document("events");
  if (!doc) return tl::unexpected(doc.error());
  if (!*doc) return {};
  const auto& events = **doc;
  const std::string where = "the recording's document \"events\"";
  if (!events.is_array()) return fail(where + ": expected a JSON array of events, in");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (!e.is_object() || !e.contains("time_ns") || !e["time_ns"].is_number_integer() ||
        !e.contains("kind") || !e["kind"].is_string() ||
        (e.contains("text") && !e["text"].is_string()))
      return fail(
          fmt::format("{}: event {}: expected {{\"time_ns\": integer, \"kind\": string, "
                      "\"text\": string}}, in",
                      where, i));
    const auto t = e["time_ns"].get<std::int64_t>();
    if (t < from_ns || t > to_ns) continue;
    markers.push_back(Marker{to_ms(t), e["kind"].get<std::string>(),
                             e.contains("text") ? e["text"].get<std::string>() : std::string()});
  }
  return {};
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// The recording's own start and end times count when they are close to its samples: a few
// intervals at most (record writes them just before the first sample and just after the last).
// Otherwise, as in a recording finished by another program long after, the samples' times do.
std::int64_t slack_ns(const store::Recording& rec) {
  return std::max<std::int64_t>(2 * rec.info().interval_ns, 2'000'000'000);
}

}  // namespace

const Series* ReportData::find(const std::string& id) const {
  for (const auto& s : series)
    if (s.id == id) return &s;
  return nullptr;
}

std::int64_t recording_start_ns(const store::Recording& rec) {
  auto times = rec.times();
  if (!times || times->empty()) return rec.info().started_wall_ns;
  const std::int64_t first = times->front(), meta = rec.info().started_wall_ns;
  return meta > 0 && meta <= first && first - meta <= slack_ns(rec) ? meta : first;
}

std::int64_t recording_end_ns(const store::Recording& rec) {
  auto times = rec.times();
  const auto meta = rec.info().ended_wall_ns;
  if (!times || times->empty()) return meta.value_or(0);
  const std::int64_t last = times->back();
  return meta && *meta >= last && *meta - last <= slack_ns(rec) ? *meta : last;
}

Result<std::pair<std::size_t, std::size_t>> window_indices(const store::Recording& rec,
                                                           const Window& window) {
  auto times = rec.times();
  if (!times) return tl::unexpected(times.error());
  const std::int64_t start = recording_start_ns(rec), end = recording_end_ns(rec);
  const std::int64_t from = window.from_ns.value_or(start), to = window.to_ns.value_or(end);
  if (from > to && window.from_ns && window.to_ns)
    return fail(fmt::format("the window starts after it ends ({} after {}):", iso(from), iso(to)),
                "--from/--to");
  const auto& t = *times;
  const auto first =
      static_cast<std::size_t>(std::lower_bound(t.begin(), t.end(), from) - t.begin());
  const auto last = static_cast<std::size_t>(std::upper_bound(t.begin(), t.end(), to) - t.begin());
  if (first >= last || from > to)
    return fail(
        fmt::format("no sample between {} and {}: the recording runs from {} to {} "
                    "({} samples)",
                    iso(from), iso(to), iso(start), iso(end), t.size()));
  return std::pair{first, last};
}

Result<ReportData> extract(const store::Recording& rec, const Window& window) {
  auto range = window_indices(rec, window);
  if (!range) return tl::unexpected(range.error());
  const auto [first, last] = *range;
  const std::int64_t start = recording_start_ns(rec), end = recording_end_ns(rec);
  const std::int64_t from = window.from_ns.value_or(start), to = window.to_ns.value_or(end);
  auto times = rec.times();
  if (!times) return tl::unexpected(times.error());
  const auto& t = *times;

  ReportData data;
  data.info = rec.info();
  data.recording_samples = t.size();
  data.start_ns = start;
  data.end_ns = end;
  data.from_ms = to_ms(std::max(from, start));
  data.to_ms = to_ms(std::min(to, end));
  const std::size_t n = last - first;
  data.window_samples = n;
  data.time_ms.reserve(n);
  SeriesBuilder x(n, !rec.info().command.empty());
  // The sample before the window gives the window's first sample its rates.
  std::optional<Sample> previous;
  const std::size_t begin = first > 0 ? first - 1 : 0;
  const std::size_t window_first = first;  // (a structured binding, not captured by clang 14)
  auto r = rec.for_each(begin, last, [&](std::size_t i, Sample&& s) -> Result<void> {
    if (i >= window_first) {
      data.time_ms.push_back(to_ms(s.wall_ns));
      x.add(i - window_first, s, previous ? &*previous : nullptr);
    }
    previous = std::move(s);
    return {};
  });
  if (!r) return tl::unexpected(r.error());

  const auto& info = rec.info();
  data.markers = x.take_markers();
  if (!info.command.empty()) {
    if (info.started_wall_ns >= from && info.started_wall_ns <= to)
      data.markers.push_back(Marker{to_ms(info.started_wall_ns), "job_start",
                                    fmt::format("started: {}", command_text(info.command))});
    if (info.ended_wall_ns && *info.ended_wall_ns >= from && *info.ended_wall_ns <= to)
      data.markers.push_back(
          Marker{to_ms(*info.ended_wall_ns), "job_end",
                 info.exit_status ? fmt::format("the job exited with status {}", *info.exit_status)
                                  : std::string("the recording ended")});
  }
  if (auto e = add_events(rec, from, to, data.markers); !e) {
    auto err = e.error();
    if (err.input.empty()) err.input = "the recording";
    return tl::unexpected(err);
  }
  std::stable_sort(data.markers.begin(), data.markers.end(),
                   [](const Marker& a, const Marker& b) { return a.time_ms < b.time_ms; });

  // A series with no value anywhere in the window is left out (a source this host lacks).
  data.series = x.take_series();
  std::erase_if(data.series, [](const Series& s) {
    return std::all_of(s.values.begin(), s.values.end(), [](double v) { return std::isnan(v); });
  });
  const SectionFacts facts = x.facts(info.scope);
  data.sections = make_sections(data, facts);
  // Series in the order the charts show them (devices appear in the columns as first seen).
  std::unordered_map<std::string, std::size_t> rank;
  for (const auto& section : data.sections)
    for (const auto& chart : section.charts)
      for (const auto& id : chart.series) rank.emplace(id, rank.size());
  std::stable_sort(data.series.begin(), data.series.end(), [&](const Series& a, const Series& b) {
    const auto ra = rank.find(a.id), rb = rank.find(b.id);
    return (ra == rank.end() ? rank.size() : ra->second) <
           (rb == rank.end() ? rank.size() : rb->second);
  });

  for (const char* key : {"env", "check", "profile"}) {
    auto doc = rec.document(key);
    if (!doc) return tl::unexpected(doc.error());
    std::optional<nlohmann::json>& slot =
        std::string_view(key) == "env"
            ? data.env
            : (std::string_view(key) == "check" ? data.check : data.profile);
    slot = std::move(*doc);
  }
  auto stacks = rec.document("python_stacks");
  if (!stacks) return tl::unexpected(stacks.error());
  data.python_stacks = std::move(*stacks);
  return data;
}

Result<Window> window_of(const store::Recording& recording, const std::string& from,
                         const std::string& to) {
  const std::int64_t start = recording_start_ns(recording), end = recording_end_ns(recording);
  Window window;
  if (!from.empty()) {
    auto t = parse_time(from, start, end, "--from");
    if (!t) return tl::unexpected(t.error());
    window.from_ns = *t;
  }
  if (!to.empty()) {
    auto t = parse_time(to, start, end, "--to");
    if (!t) return tl::unexpected(t.error());
    window.to_ns = *t;
  }
  if (window.from_ns && window.to_ns && *window.from_ns > *window.to_ns)
    return fail(fmt::format("--from {} is after --to {}", from, to));
  if (auto w = window_indices(recording, window); !w) return tl::unexpected(w.error());
  return window;
}

}  // namespace dltune::report

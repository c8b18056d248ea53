// write_json (output.hpp): the report as one JSON document, schema dltune.report/1
// (docs/report.md). The small parts go through nlohmann::json; the columns, up to millions of
// numbers, are formatted straight into a buffer that is flushed as it fills.
#include <cmath>

#include <fmt/format.h>

#include "core/json.hpp"
#include "report/output.hpp"

namespace dltune::report {

namespace {

class Writer {
 public:
  Writer(std::ostream& out, bool for_script) : out_(out), for_script_(for_script) {}
  ~Writer() { flush(); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void raw(std::string_view s) {
    if (!for_script_) {
      buf_.append(s.data(), s.data() + s.size());
    } else {
      for (char c : s) {
        if (c == '<') {
          static constexpr std::string_view kLt = "\\u003c";
          buf_.append(kLt.data(), kLt.data() + kLt.size());
        } else {
          buf_.push_back(c);
        }
      }
    }
    maybe_flush();
  }
  void json(const nlohmann::json& j) {
    raw(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  void key(std::string_view k) {
    json(nlohmann::json(std::string(k)));
    buf_.push_back(':');
  }
  void number(double v) {
    if (!std::isfinite(v)) {
      raw("null");
      return;
    }
    // Integers (bytes, counts, most MHz) exactly; the rest to 6 significant digits, which is
    // finer than any chart and than the counters' own resolution over an interval.
    if (std::fabs(v) < 9e15 && (v == std::floor(v) || std::fabs(v) >= 1e6)) {
      fmt::format_to(std::back_inserter(buf_), "{}", static_cast<long long>(std::llround(v)));
    } else {
      fmt::format_to(std::back_inserter(buf_), "{:.6g}", v);
    }
    maybe_flush();
  }
  void integer(std::int64_t v) {
    fmt::format_to(std::back_inserter(buf_), "{}", v);
    maybe_flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  void maybe_flush() {
    if (buf_.size() > 64 * 1024) flush();
  }
  std::ostream& out_;
  bool for_script_;
  fmt::memory_buffer buf_;
};

nlohmann::json recording_json(const ReportData& d) {
  const auto& i = d.info;
  nlohmann::json j = {{"hostname", i.hostname},
                      {"scope", i.scope},
                      {"command", i.command},
                      {"interval_ns", i.interval_ns},
                      {"started_wall_ns", i.started_wall_ns},
                      {"samples", d.recording_samples},
                      {"dltune_version", i.dltune_version},
                      {"schema", i.schema}};
  if (i.ended_wall_ns) j["ended_wall_ns"] = *i.ended_wall_ns;
  // The start and end the report uses (docs/report.md: the recording's own, or its samples').
  j["start_ms"] = d.start_ns / 1'000'000;
  j["end_ms"] = d.end_ns / 1'000'000;
  if (i.exit_status) j["exit_status"] = *i.exit_status;
  return j;
}

nlohmann::json sections_json(const ReportData& d) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : d.sections) {
    nlohmann::json charts = nlohmann::json::array();
    for (const auto& c : s.charts) {
      nlohmann::json j = {{"id", c.id}, {"title", c.title}, {"series", c.series}};
      nlohmann::json axes = {{"x", "time"}};
      if (!c.axes.empty()) axes["y"] = c.axes[0];
      if (c.axes.size() > 1) axes["y1"] = c.axes[1];
      j["axes"] = std::move(axes);
      if (!c.empty.empty()) j["empty"] = c.empty;
      if (!c.note.empty()) j["note"] = c.note;
      if (!c.bands.empty()) {
        nlohmann::json bands = nlohmann::json::array();
        for (const auto& b : c.bands)
          bands.push_back({{"series", b.series},
                           {"label", b.label},
                           {"from_ms", b.from_ms},
                           {"to_ms", b.to_ms}});
        j["bands"] = std::move(bands);
      }
      charts.push_back(std::move(j));
    }
    nlohmann::json j = {{"id", s.id}, {"title", s.title}, {"charts", charts}};
    if (!s.absent.empty()) j["absent"] = s.absent;
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json markers_json(const ReportData& d) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : d.markers)
    out.push_back({{"time_ms", m.time_ms}, {"kind", m.kind}, {"text", m.text}});
  return out;
}

}  // namespace

void write_json(const ReportData& d, std::ostream& out, JsonOptions options) {
  Writer w(out, options.for_script);
  w.raw("{");
  w.key("schema");
  w.json(std::string(kJsonSchema));
  w.raw(",");
  w.key("recording");
  w.json(recording_json(d));
  w.raw(",");
  w.key("window");
  w.json({{"from_ms", d.from_ms},
          {"to_ms", d.to_ms},
          {"samples", d.decimated ? d.window_samples : d.time_ms.size()}});
  w.raw(",");
  nlohmann::json dec = {{"decimated", d.decimated}, {"rule", "min-max"}};
  if (d.max_points) dec["max_points"] = *d.max_points;
  w.key("decimation");
  w.json(dec);
  w.raw(",");
  w.key("sections");
  w.json(sections_json(d));
  w.raw(",");
  w.key("markers");
  w.json(markers_json(d));
  if (!d.decimated) {
    w.raw(",");
    w.key("time_ms");
    w.raw("[");
    for (std::size_t i = 0; i < d.time_ms.size(); ++i) {
      if (i > 0) w.raw(",");
      w.integer(d.time_ms[i]);
    }
    w.raw("]");
  }
  w.raw(",");
  w.key("series");
  w.raw("[");
  for (std::size_t k = 0; k < d.series.size(); ++k) {
    const auto& s = d.series[k];
    if (k > 0) w.raw(",");
    w.raw("\n{");
    w.key("id");
    w.json(s.id);
    w.raw(",");
    w.key("label");
    w.json(s.label);
    w.raw(",");
    w.key("unit");
    w.json(s.unit);
    if (d.decimated) {
      w.raw(",");
      w.key("time_ms");
      w.raw("[");
      for (std::size_t i = 0; i < s.time_ms.size(); ++i) {
        if (i > 0) w.raw(",");
        w.integer(s.time_ms[i]);
      }
      w.raw("]");
    }
    w.raw(",");
    w.key("values");
    w.raw("[");
    for (std::size_t i = 0; i < s.values.size(); ++i) {
      if (i > 0) w.raw(",");
      w.number(s.values[i]);
    }
    w.raw("]}");
  }
  w.raw("]}\n");
}

}  // namespace dltune::report

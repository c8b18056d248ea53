// The sinks, and the families of the check and of the exporter itself (exposition.hpp).
#include "serve/exposition.hpp"
#include "core/json.hpp"

#include <cmath>

#include <fmt/format.h>

namespace dltune::serve {

const char* type_name(MetricType t) {
  return t == MetricType::kCounter ? "counter" : "gauge";
}

void append_escaped_label(std::string& out, std::string_view value) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c != '\\' && c != '"' && c != '\n') continue;
    out.append(value.data() + start, i - start);
    out += '\\';
    out += c == '\n' ? 'n' : c;
    start = i + 1;
  }
  out.append(value.data() + start, value.size() - start);
}

void append_double(std::string& out, double value) {
  // fmt's "{}" for a double is the shortest text that parses back to the same value
  // (Dragonbox): the round trip of %.17g without its noise digits.
  char buf[32];
  const auto end = fmt::format_to_n(buf, sizeof buf, "{}", value).out;
  out.append(buf, end);
}

namespace {

// HELP text escapes (the text format): backslash and newline.
void append_help(std::string& out, std::string_view help) {
  for (const char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

}  // namespace

void TextSink::family(std::string_view name, MetricType type, std::string_view help) {
  name_ = name;
  type_ = type;
  help_ = help;
  header_written_ = false;
}

void TextSink::line_start(Labels labels) {
  if (!header_written_) {
    out_ += "# HELP ";
    out_ += name_;
    out_ += ' ';
    append_help(out_, help_);
    out_ += "\n# TYPE ";
    out_ += name_;
    out_ += ' ';
    out_ += type_name(type_);
    out_ += '\n';
    header_written_ = true;
  }
  out_ += name_;
  if (labels.size() != 0) {
    char sep = '{';
    for (const auto& l : labels) {
      out_ += sep;
      out_ += l.name;
      out_ += "=\"";
      append_escaped_label(out_, l.value);
      out_ += '"';
      sep = ',';
    }
    out_ += '}';
  }
  out_ += ' ';
}

void TextSink::sample(Labels labels, std::uint64_t value) {
  line_start(labels);
  const fmt::format_int text(value);
  out_.append(text.data(), text.size());
  out_ += '\n';
}

void TextSink::sample(Labels labels, double value) {
  if (!std::isfinite(value)) return;
  line_start(labels);
  append_double(out_, value);
  out_ += '\n';
}

void JsonSink::family(std::string_view name, MetricType type, std::string_view help) {
  if (!current_.is_null() && !current_["samples"].empty()) families_.push_back(std::move(current_));
  current_ = inventory::Json{{"name", name},
                             {"type", type_name(type)},
                             {"help", help},
                             {"samples", inventory::Json::array()}};
}

void JsonSink::add(Labels labels, inventory::Json value) {
  auto l = inventory::Json::object();
  for (const auto& x : labels) l[std::string(x.name)] = x.value;
  current_["samples"].push_back({{"labels", std::move(l)}, {"value", std::move(value)}});
}

void JsonSink::sample(Labels labels, std::uint64_t value) {
  add(labels, value);
}

void JsonSink::sample(Labels labels, double value) {
  if (std::isfinite(value)) add(labels, value);
}

inventory::Json JsonSink::take() {
  if (!current_.is_null() && !current_["samples"].empty()) families_.push_back(std::move(current_));
  current_ = nullptr;
  inventory::Json out{{"schema", "dltune.serve/1"}, {"families", std::move(families_)}};
  families_ = inventory::Json::array();
  return out;
}

namespace {

void render_check(const CheckState& c, MetricSink& sink) {
  if (!c.ran) return;
  sink.family("dltune_check_up", MetricType::kGauge,
              "1 when the last check of the host against the profile completed, 0 when it "
              "could not run");
  sink.sample({}, std::uint64_t{c.ok ? 1u : 0u});
  if (c.ok) {
    sink.family("dltune_check_finding", MetricType::kGauge,
                "Check findings that are not ok (dltune check), by id, severity and area: their "
                "number (several GPUs or file systems can share an id)");
    for (const auto& f : c.findings)
      sink.sample({{"id", f.id}, {"severity", f.severity}, {"area", f.area}}, f.count);
  }
  sink.family("dltune_check_findings", MetricType::kGauge,
              "Check findings of the last run by severity (all 0 when the check could not run)");
  for (std::size_t i = 0; i < kSeverities.size(); ++i)
    sink.sample({{"severity", kSeverities[i]}}, c.ok ? c.counts[i] : std::uint64_t{0});
  if (c.ok) {
    sink.family("dltune_check_unknown", MetricType::kGauge,
                "Check ids that could not be judged (NVML did not answer, a file could not be "
                "read): their number, by id, area and stakes, the severity the profile gives the "
                "id when it is not met. Unknown is never healthy");
    for (const auto& f : c.unknown)
      sink.sample({{"id", f.id}, {"stakes", f.severity}, {"area", f.area}}, f.count);
  }
  sink.family("dltune_check_unknown_findings", MetricType::kGauge,
              "Check findings of the last run that could not be judged (0 when the check could "
              "not run)");
  sink.sample({}, c.ok ? c.unknown_count : std::uint64_t{0});
  if (c.finished_wall_ns) {
    sink.family("dltune_check_last_run_timestamp_seconds", MetricType::kGauge,
                "When the last completed check finished, in seconds since the epoch");
    sink.sample({}, static_cast<double>(*c.finished_wall_ns) / 1e9);
    sink.family("dltune_check_duration_seconds", MetricType::kGauge,
                "How long the last completed check took (wall time)");
    sink.sample({}, c.duration_s);
  }
}

}  // namespace

void render(const Snapshot& s, MetricSink& sink) {
  sink.family("dltune_build_info", MetricType::kGauge,
              "1, labelled with the version of dltune and the host's name (Hostname, as "
              "dcgm-exporter has it: join the host's series on instance to get it)");
  sink.sample({{"version", s.version}, {"Hostname", s.hostname}}, std::uint64_t{1});
  if (s.sample) render_host(*s.sample, sink, s.host);
  render_gpus(s.sample, s.gpus, s.hostname, sink);
  render_jobs(s.jobs, s.slurm, sink, s.pods);
  render_job_gpus(s, sink);
  if (s.check) render_check(*s.check, sink);
  if (s.sample) {
    sink.family("dltune_sample_timestamp_seconds", MetricType::kGauge,
                "When the sample being served was taken, in seconds since the epoch");
    sink.sample({}, static_cast<double>(s.sample->wall_ns) / 1e9);
  }
  sink.family("dltune_sample_duration_seconds", MetricType::kGauge,
              "How long the last sample took to read (wall time)");
  if (s.stats.samples > 0) sink.sample({}, s.stats.sample_duration_s);
  sink.family("dltune_samples_total", MetricType::kCounter, "Samples taken since serve started");
  sink.sample({}, s.stats.samples);
}

void render_scrapes(std::uint64_t scrapes, MetricSink& sink) {
  sink.family("dltune_scrapes_total", MetricType::kCounter,
              "Requests for /metrics answered since serve started, this one included");
  sink.sample({}, scrapes);
}

}  // namespace dltune::serve

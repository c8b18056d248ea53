// compare_html (compare_html.hpp): the page of a dltune.compare/1 document. The verdict, the two
// tables and the notes are rendered here, escaped through Page::text; the charts are drawn by the
// script below from the document itself, inlined as JSON, the way the recording report does
// (html_output.cpp). The script is a raw string here rather than a file under page/ embedded by
// CMake: it belongs to this page only and is short.
#include "report/compare_html.hpp"

#include <cmath>
#include <optional>
#include <sstream>
#include <string_view>

#include <fmt/core.h>

#include "core/json.hpp"
#include "report/assets.hpp"
#include "report/html_page.hpp"

namespace dltune::report {

namespace {

using nlohmann::json;

// The document is read defensively, like html_facts.cpp reads recorded documents: a key that is
// missing or of another type is absent, never an exception.
const json& member(const json& j, const char* key) {
  static const json kAbsent;
  if (!j.is_object()) return kAbsent;
  const auto it = j.find(key);
  return it == j.end() ? kAbsent : *it;
}

std::string text_of(const json& j, const char* key) {
  const json& v = member(j, key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return {};
}

std::optional<double> number_of(const json& j, const char* key) {
  const json& v = member(j, key);
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

bool flag_of(const json& j, const char* key) {
  const json& v = member(j, key);
  return v.is_boolean() && v.get<bool>();
}

const json& array_of(const json& j, const char* key) {
  static const json kEmpty = json::array();
  const json& v = member(j, key);
  return v.is_array() ? v : kEmpty;
}

// `digits` decimals without trailing zeros: "17", "16.9", "0.51".
std::string trimmed(double v, int digits) {
  std::string s = fmt::format("{:.{}f}", v, digits);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string short_number(double v) {
  const double a = std::fabs(v);
  return trimmed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

// Units of compare's metrics (bench/run_metrics.cpp): "s", "%", "B", "" (a count) and the rate's
// own ("it/s", "samples/s"). The page's script formats its axes and tooltips the same way.
std::string with_unit(double v, std::string_view unit) {
  if (unit == "B") {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = std::fabs(v);
    std::size_t u = 0;
    while (x >= 1024 && u + 1 < std::size(kUnits)) {
      x /= 1024;
      ++u;
    }
    return fmt::format("{}{} {}", v < 0 ? "-" : "", short_number(x), kUnits[u]);
  }
  if (unit == "%") return short_number(v) + "%";
  if (unit.empty()) return short_number(v);
  return fmt::format("{} {}", short_number(v), unit);
}

std::string value_cell(const std::optional<double>& v, std::string_view unit) {
  return v ? with_unit(*v, unit) : std::string("\u2014");
}

const json& metric_by_id(const json& doc, const std::string& id) {
  static const json kAbsent;
  for (const auto& m : array_of(doc, "metrics"))
    if (text_of(m, "id") == id) return m;
  return kAbsent;
}

bool has_interval(const json& m) {
  return number_of(m, "ratio") && number_of(m, "low") && number_of(m, "high");
}

// The same runs the script plots: not warm-up, side A or B, with a value of the primary metric.
bool any_run_value(const json& doc, const std::string& primary) {
  for (const auto& r : array_of(doc, "runs")) {
    const std::string side = text_of(r, "side");
    if (flag_of(r, "warmup") || (side != "A" && side != "B")) continue;
    if (number_of(member(r, "metrics"), primary.c_str())) return true;
  }
  return false;
}

std::string percent(double confidence) {
  return trimmed(confidence * 100, 1) + "%";
}

constexpr std::string_view kStyle = R"(
.labels th { color: var(--dim); font-weight: 600; padding-right: 10px; }
.verdict-box {
  margin: 14px 0 6px; padding: 12px 16px; border-radius: 6px; border: 1px solid;
  font-size: 19px; font-weight: 600;
}
.good { background: #dafbe1; color: #1a7f37; border-color: #aceebb; }
.bad { background: #ffebe9; color: #cf222e; border-color: #ffcecb; }
.neutral { background: var(--card); color: var(--dim); border-color: var(--line); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.better { color: #1a7f37; font-weight: 600; }
td.worse { color: #cf222e; font-weight: 600; }
tr.left-out td { background: #fff8f7; }
tr.warmup td { color: var(--dim); }
.plot.runs { height: 300px; }
)";

// Runs after Chart.js. The document's text reaches the charts only (canvas text, never HTML).
void head(Page& p) {
  p.raw(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>dltune compare: A vs B</title>\n<style>\n");
  p.raw(page_style()).raw(kStyle).raw("</style>\n</head>\n<body>\n");
  // First in <body>, so that an error anywhere after it (Chart.js included) is recorded.
  p.raw(
      "<script>window.addEventListener('error', function (e) { document.body.dataset.error = "
      "e.message || String(e.error); });</script>\n");
}

void verdict(Page& p, const json& doc) {
  const json& v = member(doc, "verdict");
  const std::string kind = text_of(v, "kind");
  const char* tone = kind == "b-better" ? "good" : kind == "b-worse" ? "bad" : "neutral";
  p.raw("<header>\n<h1>dltune compare: A vs B</h1>\n<table class=\"kv labels\">\n");
  p.raw("<tr><th>A</th><td>").text(text_of(doc, "a")).raw("</td></tr>\n");
  p.raw("<tr><th>B</th><td>").text(text_of(doc, "b")).raw("</td></tr>\n</table>\n</header>\n");
  p.raw("<main>\n<div class=\"verdict-box ").raw(tone).raw("\" id=\"verdict\" data-kind=\"");
  p.text(kind).raw("\">").text(text_of(v, "text")).raw("</div>\n<p class=\"dim\">");
  const std::string metric = text_of(v, "metric");
  const std::string label = text_of(metric_by_id(doc, metric), "label");
  p.text(fmt::format("Verdict on {}. ", label.empty() ? metric : label));
  const auto used_a = number_of(doc, "used_a").value_or(0);
  const auto used_b = number_of(doc, "used_b").value_or(0);
  if (flag_of(doc, "paired"))
    p.text(fmt::format("{} pairs of runs, A and B back to back. ", used_a));
  else
    p.text(
        fmt::format("{} runs of A and {} of B, compared as independent samples. ", used_a, used_b));
  if (const auto c = number_of(doc, "confidence"))
    p.text(fmt::format("Intervals at {} confidence", percent(*c)));
  const std::string method = text_of(doc, "method_text");
  if (!method.empty()) p.text(": " + method);
  p.raw(".</p>\n");
}

void charts(Page& p, const json& doc) {
  const std::string primary = text_of(doc, "primary");
  const json& pm = metric_by_id(doc, primary);
  const std::string label = text_of(pm, "label").empty() ? primary : text_of(pm, "label");
  p.raw("<section class=\"charts\"><h2>Charts</h2>\n");
  if (any_run_value(doc, primary)) {
    p.raw("<figure class=\"chart\"><figcaption>").text(label);
    p.raw(" per run (crosses: runs left out, hover for why)</figcaption>");
    p.raw("<div class=\"plot runs\"><canvas id=\"chart-runs\"></canvas></div></figure>\n");
  } else {
    p.raw("<p class=\"absent\" id=\"no-runs\">").text("no run has a value of " + label);
    p.raw("</p>\n");
  }
  std::size_t rated = 0;
  for (const auto& m : array_of(doc, "metrics")) rated += has_interval(m) ? 1 : 0;
  if (rated > 0) {
    p.raw("<figure class=\"chart\"><figcaption>");
    p.text(fmt::format(
        "B/A per metric with its {} interval: green where B is better, red where B is worse, "
        "grey where the interval holds 1 (no measurable effect)",
        percent(number_of(doc, "confidence").value_or(0.95))));
    // Room for each metric's bar, and for the legend and the axis.
    p.raw(fmt::format("</figcaption><div class=\"plot\" style=\"height: {}px\">", 90 + 34 * rated));
    p.raw("<canvas id=\"chart-ratios\"></canvas></div></figure>\n");
  } else {
    p.raw("<p class=\"absent\" id=\"no-ratios\">")
        .text("no confidence interval: " + text_of(member(doc, "verdict"), "text"));
    p.raw("</p>\n");
  }
  p.raw("</section>\n");
}

void metric_table(Page& p, const json& doc) {
  const std::string primary = text_of(doc, "primary");
  p.raw(
      "<section id=\"metrics\"><h2>Metrics</h2>\n<table class=\"findings\"><thead><tr>"
      "<th>Metric</th><th>A (median)</th><th>B (median)</th><th>B/A</th><th>");
  p.text(percent(number_of(doc, "confidence").value_or(0.95))).raw(" interval</th><th>Note</th>");
  p.raw("</tr></thead><tbody>\n");
  for (const auto& m : array_of(doc, "metrics")) {
    const std::string unit = text_of(m, "unit");
    p.raw("<tr><td>").text(text_of(m, "label"));
    if (text_of(m, "id") == primary) p.raw(" <span class=\"dim\">(verdict)</span>");
    p.raw("</td><td class=\"num\">").text(value_cell(number_of(m, "median_a"), unit));
    p.raw("</td><td class=\"num\">").text(value_cell(number_of(m, "median_b"), unit));
    if (has_interval(m)) {
      const std::string v = text_of(m, "verdict");
      p.raw("</td><td class=\"num\">").text(fmt::format("{:.3f}", *number_of(m, "ratio")));
      p.raw("</td><td class=\"num ").raw(v == "better" ? "better" : v == "worse" ? "worse" : "");
      // The interval's own confidence: a rank interval reaches the asked one only in steps.
      std::string title = text_of(m, "method");
      if (const auto a = number_of(m, "achieved_confidence"))
        title = fmt::format("achieved {}{}{}", percent(*a), title.empty() ? "" : ", ", title);
      p.raw("\" title=\"").text(title).raw("\">");
      p.text(fmt::format("{:.3f}\u2013{:.3f}", *number_of(m, "low"), *number_of(m, "high")));
      if (v == "better" || v == "worse") p.text(" B " + v);
    } else {
      p.raw("</td><td class=\"num\">\u2014</td><td class=\"num\">\u2014");
    }
    p.raw("</td><td>").text(text_of(m, "note")).raw("</td></tr>\n");
  }
  p.raw("</tbody></table></section>\n");
}

void run_table(Page& p, const json& doc) {
  const std::string primary = text_of(doc, "primary");
  const json& pm = metric_by_id(doc, primary);
  const std::string unit = text_of(pm, "unit");
  p.raw(
      "<section id=\"runs\"><h2>Runs</h2>\n<table class=\"findings\"><thead><tr><th>Side</th>"
      "<th>Round</th><th>Recording</th><th>");
  p.text(text_of(pm, "label").empty() ? primary : text_of(pm, "label"));
  p.raw("</th><th>Used</th><th>Log</th></tr></thead><tbody>\n");
  for (const auto& r : array_of(doc, "runs")) {
    const bool used = flag_of(r, "used"), warmup = flag_of(r, "warmup");
    std::string why = used ? "used" : text_of(r, "excluded");
    if (why.empty()) why = warmup ? "warm-up run" : "left out";
    const auto pair = number_of(r, "pair");
    p.raw(used ? "<tr>" : warmup ? "<tr class=\"warmup\">" : "<tr class=\"left-out\">");
    p.raw("<td>").text(text_of(r, "side")).raw("</td><td class=\"num\">");
    p.text(pair && *pair > 0 ? short_number(*pair) : "\u2014").raw("</td><td><code>");
    p.text(text_of(r, "recording")).raw("</code></td><td class=\"num\">");
    p.text(value_cell(number_of(member(r, "metrics"), primary.c_str()), unit));
    p.raw("</td><td>").text(why).raw("</td><td>");
    if (const std::string log = text_of(r, "log"); !log.empty())
      p.raw("<code>").text(log).raw("</code>");
    p.raw("</td></tr>\n");
  }
  p.raw("</tbody></table></section>\n");
}

void notes(Page& p, const json& doc) {
  const json& list = array_of(doc, "notes");
  if (list.empty()) return;
  p.raw("<section id=\"notes\"><h2>Notes</h2>\n<ul>\n");
  for (const auto& n : list)
    if (n.is_string()) p.raw("<li>").text(n.get<std::string>()).raw("</li>\n");
  p.raw("</ul></section>\n");
}

// The document for a <script type="application/json">: every '<' as \u003c (valid JSON, since
// '<' only occurs inside strings), so that no "</script>" or "<!--" in a label can end it.
std::string script_json(const json& doc) {
  const std::string dumped = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(dumped.size());
  for (char c : dumped) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string compare_html(const nlohmann::json& comparison) {
  std::ostringstream out;
  Page p(out);
  head(p);
  verdict(p, comparison);
  charts(p, comparison);
  metric_table(p, comparison);
  run_table(p, comparison);
  notes(p, comparison);
  p.raw("</main>\n<footer>").text(fmt::format("Made by dltune {}.", DLTUNE_VERSION));
  p.raw("</footer>\n<script type=\"application/json\" id=\"dltune-compare\">");
  p.raw(script_json(comparison)).raw("</script>\n<script>\n").raw(chartjs_source());
  p.raw("\n</script>\n<script>\n").raw(compare_script()).raw("</script>\n</body>\n</html>\n");
  return out.str();
}

}  // namespace dltune::report

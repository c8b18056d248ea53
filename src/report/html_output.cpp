// write_html (output.hpp): one self-contained page. The top (the recording, then html_facts.cpp's
// host facts, check findings and profile verdict, then the events) is rendered here, escaped; the
// charts are drawn in the browser by the report's script (page/report.js) from the JSON document
// inlined in a <script type="application/json"> element. Nothing is loaded from anywhere.
#include <time.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/time_format.hpp"
#include "report/assets.hpp"
#include "report/flame.hpp"
#include "report/html_page.hpp"

namespace dltune::report {

namespace {

// "+01:00": the local time's offset from UTC at `ns`.
std::string utc_offset(std::int64_t ns) {
  return text::utc_offset(ns / 1'000'000'000);
}

std::string duration(std::int64_t ns) {
  if (ns < 0) ns = 0;
  if (ns < 1'000'000'000) return fmt::format("{} ms", ns / 1'000'000);
  std::int64_t s = ns / 1'000'000'000;
  const std::int64_t h = s / 3600, m = s / 60 % 60;
  s %= 60;
  if (h > 0) return fmt::format("{}h {:02}m {:02}s", h, m, s);
  if (m > 0) return fmt::format("{}m {:02}s", m, s);
  return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    // Quoted when it would split or expand in a shell, so that the line reads as typed.
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                         "OPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

void recording_card(Page& p, const ReportData& d, const HtmlOptions& o) {
  const auto& i = d.info;
  p.raw("<div class=\"card\"><h2>Recording</h2><table class=\"kv\">\n");
  p.row("File", o.recording_path);
  p.row("Host", i.hostname);
  p.code_row("Command", command_line(i.command));
  p.row("Scope", i.scope);
  p.row("Interval", i.interval_ns > 0 ? duration(i.interval_ns) : "");
  p.row("Started", text::local_time_ns(d.start_ns) + " (UTC" + utc_offset(d.start_ns) + ")");
  if (i.ended_wall_ns && *i.ended_wall_ns == d.end_ns)
    p.row("Ended", text::local_time_ns(d.end_ns) + ", after " + duration(d.end_ns - d.start_ns));
  else if (i.ended_wall_ns)
    p.row("Ended",
          fmt::format("last sample at {}, after {} (the recording was closed later, at {})",
                      text::local_time_ns(d.end_ns), duration(d.end_ns - d.start_ns),
                      text::local_time_ns(*i.ended_wall_ns)));
  else
    p.row("Ended", fmt::format("last sample at {}, after {} (no end recorded: still recording, or "
                               "the recorder was killed)",
                               text::local_time_ns(d.end_ns), duration(d.end_ns - d.start_ns)));
  if (i.exit_status) p.row("Exit status", std::to_string(*i.exit_status));
  std::string samples = fmt::format("{} in the recording", d.recording_samples);
  if (d.window_samples != d.recording_samples)
    samples = fmt::format("{} of {} (the window {} to {})", d.window_samples, d.recording_samples,
                          text::local_time_ns(d.from_ms * 1'000'000),
                          text::local_time_ns(d.to_ms * 1'000'000));
  p.row("Samples", samples);
  if (d.decimated)
    p.row("Points drawn",
          fmt::format("at most {} per series: the window's {} samples cut into {} buckets, each "
                      "keeping its minimum and maximum (spikes survive)",
                      *d.max_points, d.window_samples, *d.max_points / 2));
  p.row("Recorded by", "dltune " + i.dltune_version);
  p.raw("</table></div>\n");
}

// "+1h05m00s", "+2m30s", and under a minute to a tenth of a second: "+1.6s".
std::string elapsed(std::int64_t ms) {
  const bool neg = ms < 0;
  if (neg) ms = -ms;
  std::string t;
  if (ms < 60'000) {
    t = fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
  } else {
    std::int64_t s = ms / 1000;
    const std::int64_t h = s / 3600, m = s / 60 % 60;
    s %= 60;
    t = h > 0 ? fmt::format("{}h{:02}m{:02}s", h, m, s) : fmt::format("{}m{:02}s", m, s);
  }
  t.insert(t.begin(), neg ? '-' : '+');
  return t;
}

void markers(Page& p, const ReportData& d) {
  p.raw("<section id=\"events\"><h2>Events</h2>\n");
  if (d.markers.empty()) {
    p.raw(
        "<p class=\"absent\">None in this window: no OOM kill, no job start or end, no kernel "
        "event recorded.</p></section>\n");
    return;
  }
  constexpr std::size_t kShown = 200;
  p.raw(
      "<table class=\"events\"><thead><tr><th>Time</th><th>Since start</th><th>Kind</th>"
      "<th>What</th></tr></thead><tbody>\n");
  const std::int64_t start_ms = d.start_ns / 1'000'000;
  for (std::size_t i = 0; i < d.markers.size() && i < kShown; ++i) {
    const auto& m = d.markers[i];
    p.raw("<tr><td>").text(text::local_time_ns(m.time_ms * 1'000'000)).raw("</td><td>");
    p.text(elapsed(m.time_ms - start_ms)).raw("</td><td><span class=\"kind kind-");
    p.text(m.kind).raw("\">").text(m.kind).raw("</span></td><td>").text(m.text).raw("</td></tr>\n");
  }
  p.raw("</tbody></table>\n");
  if (d.markers.size() > kShown)
    p.raw("<p class=\"dim\">")
        .text(fmt::format("and {} more (all are in the charts and in --format json)",
                          d.markers.size() - kShown))
        .raw("</p>\n");
  p.raw("</section>\n");
}

// The job's main-thread Python stacks in the window, as a flame graph with its legend.
void python_stacks(Page& p, const ReportData& d) {
  if (!d.python_stacks) return;
  auto stacks = store::PythonStacks::from_json(*d.python_stacks);
  if (!stacks) {
    p.raw("<section id=\"python\"><h2>Python stacks</h2><p>")
        .text("The recording's Python stacks could not be read: " + stacks.error().message())
        .raw("</p></section>\n");
    return;
  }
  const auto svg = flame_svg(*stacks, d.from_ms * 1'000'000, d.to_ms * 1'000'000 + 999'999);
  p.raw("<section id=\"python\"><h2>Python stacks of the main thread</h2>\n<p>");
  if (svg.empty()) {
    p.text(fmt::format("{}: no stack was read in this window ({} read in the whole recording{}).",
                       stacks->interpreter, stacks->samples,
                       stacks->last_error.empty() ? "" : "; " + stacks->last_error))
        .raw("</p></section>\n");
    return;
  }
  p.text(fmt::format(
      "{} (pid {}), read from outside every {} ms: each bar is a function, as wide as the share "
      "of samples it was on the stack, the outermost at the bottom. Hover for the counts.",
      stacks->interpreter, stacks->pid, stacks->sample_interval_ns / 1'000'000));
  p.raw("</p>\n<p class=\"legend\">");
  for (const auto& [colour, name] :
       std::vector<std::pair<const char*, const char*>>{{"#f28e2b", "loading data"},
                                                        {"#4e79a7", "the model"},
                                                        {"#bab0ac", "waiting"},
                                                        {"#e15759", "synchronising"},
                                                        {"#b07aa1", "logging"},
                                                        {"#59a14f", "other Python"}})
    p.raw(fmt::format(R"(<span class="swatch" style="background:{}"></span>)", colour))
        .text(name)
        .raw(" ");
  p.raw("</p>\n").raw(svg).raw("</section>\n");
}

void charts(Page& p, const ReportData& d) {
  for (const auto& s : d.sections) {
    if (s.charts.empty()) {
      p.raw("<p class=\"absent section-absent\" id=\"absent-").text(s.id).raw("\"><b>");
      p.text(s.title).raw("</b>: not shown: ").text(s.absent).raw(".</p>\n");
      continue;
    }
    p.raw("<section class=\"charts\" id=\"section-").text(s.id).raw("\"><h2>").text(s.title);
    p.raw("</h2>\n");
    for (const auto& c : s.charts) {
      // A chart whose series stayed at zero is its one line: nothing to see in a flat line.
      if (!c.empty.empty()) {
        p.raw("<p class=\"chart-empty\" id=\"empty-").text(c.id).raw("\">");
        p.text(c.empty).raw(".</p>\n");
        continue;
      }
      p.raw("<figure class=\"chart\"><figcaption>").text(c.title).raw("</figcaption>");
      p.raw("<div class=\"plot\"><canvas id=\"chart-").text(c.id).raw("\"></canvas></div>");
      if (!c.note.empty()) p.raw("<p class=\"chart-note\">").text(c.note).raw("</p>");
      p.raw("</figure>\n");
    }
    p.raw("</section>\n");
  }
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void write_html(const ReportData& d, std::ostream& out, const HtmlOptions& o) {
  Page p(out);
  const std::string cmd = command_line(d.info.command);
  p.raw(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
  p.text("dltune report: " + d.info.hostname + (cmd.empty() ? "" : " — " + cmd));
  p.raw("</title>\n<style>\n").raw(page_style()).raw("</style>\n</head>\n<body>\n<header>\n");
  p.raw("<h1>dltune report <span class=\"host\">").text(d.info.hostname).raw("</span></h1>\n");
  p.raw("<p class=\"subtitle\">");
  if (!cmd.empty()) p.raw("<code>").text(cmd).raw("</code> · ");
  p.text(d.info.scope).raw(" · ").text(text::local_time_ns(d.from_ms * 1'000'000)).raw(" to ");
  p.text(text::local_time_ns(d.to_ms * 1'000'000))
      .raw(" (")
      .text(duration((d.to_ms - d.from_ms) * 1'000'000));
  p.raw(")</p>\n</header>\n<main>\n<div class=\"cards\">\n");
  recording_card(p, d, o);
  host_card(p, d);
  p.raw("</div>\n");
  profile(p, d);
  python_stacks(p, d);
  findings(p, d);
  markers(p, d);
  p.raw("<p class=\"dim\">")
      .text(
          "Times are local. All charts share one time axis: the clock, and below it the time "
          "since the recording started. Rates are between consecutive samples (the numbers "
          "of dltune top). Dashed vertical lines mark the events above.");
  p.raw("</p>\n");
  charts(p, d);
  p.raw("</main>\n<footer>")
      .text(fmt::format("Made by dltune {} from {}.", DLTUNE_VERSION, o.recording_path));
  p.raw("</footer>\n<script type=\"application/json\" id=\"dltune-data\">");
  write_json(d, out, JsonOptions{.for_script = true});
  p.raw("</script>\n<script>\n").raw(chartjs_source()).raw("\n</script>\n<script>\n");
  p.raw(page_script()).raw("\n</script>\n</body>\n</html>\n");
}

}  // namespace dltune::report

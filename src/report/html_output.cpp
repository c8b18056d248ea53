// write_html (output.hpp): one self-contained page. The top (the recording, the host's facts, the
// check findings, the profile verdict, the events) is rendered here, escaped; the charts are
// drawn in the browser by the report's script (page/report.js) from the JSON document inlined
// in a <script type="application/json"> element. Nothing is loaded from anywhere.
#include <time.h>

#include <map>

#include <fmt/format.h>

#include "core/text.hpp"
#include "report/assets.hpp"
#include "report/output.hpp"

namespace dltune::report {

namespace {

using nlohmann::json;

// The value at a path of keys, or null when any step is missing or of another type.
const json* at(const json& j, std::initializer_list<const char*> path) {
  const json* p = &j;
  for (const char* k : path) {
    if (!p->is_object()) return nullptr;
    auto it = p->find(k);
    if (it == p->end()) return nullptr;
    p = &*it;
  }
  return p;
}

std::string text_at(const json& j, std::initializer_list<const char*> path) {
  const json* p = at(j, path);
  if (p == nullptr) return {};
  if (p->is_string()) return p->get<std::string>();
  if (p->is_number() || p->is_boolean()) return p->dump();
  return {};
}

std::optional<std::uint64_t> uint_at(const json& j, std::initializer_list<const char*> path) {
  const json* p = at(j, path);
  if (p == nullptr || !p->is_number_unsigned()) return std::nullopt;
  return p->get<std::uint64_t>();
}

std::string local_time(std::int64_t ns) {
  const time_t s = static_cast<time_t>(ns / 1'000'000'000);
  tm t{};
  ::localtime_r(&s, &t);
  char buf[64];
  ::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &t);
  return buf;
}

// "+01:00": the local time's offset from UTC at `ns`.
std::string utc_offset(std::int64_t ns) {
  const time_t s = static_cast<time_t>(ns / 1'000'000'000);
  tm t{};
  ::localtime_r(&s, &t);
  const long off = t.tm_gmtoff / 60;
  return fmt::format("{}{:02}:{:02}", off < 0 ? '-' : '+', std::labs(off) / 60,
                     std::labs(off) % 60);
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

class Page {
 public:
  explicit Page(std::ostream& out) : out_(out) {}
  Page& raw(std::string_view s) {
    out_.write(s.data(), static_cast<std::streamsize>(s.size()));
    return *this;
  }
  Page& text(std::string_view s) { return raw(html_escape(s)); }
  // A row of a key/value table; left out when the value is empty.
  Page& row(std::string_view key, std::string_view value) {
    if (value.empty()) return *this;
    return raw("<tr><th>").text(key).raw("</th><td>").text(value).raw("</td></tr>\n");
  }
  Page& code_row(std::string_view key, std::string_view value) {
    if (value.empty()) return *this;
    return raw("<tr><th>").text(key).raw("</th><td><code>").text(value).raw("</code></td></tr>\n");
  }

 private:
  std::ostream& out_;
};

void recording_card(Page& p, const ReportData& d, const HtmlOptions& o) {
  const auto& i = d.info;
  p.raw("<div class=\"card\"><h2>Recording</h2><table class=\"kv\">\n");
  p.row("File", o.recording_path);
  p.row("Host", i.hostname);
  p.code_row("Command", command_line(i.command));
  p.row("Scope", i.scope);
  p.row("Interval", i.interval_ns > 0 ? duration(i.interval_ns) : "");
  p.row("Started", local_time(d.start_ns) + " (UTC" + utc_offset(d.start_ns) + ")");
  if (i.ended_wall_ns && *i.ended_wall_ns == d.end_ns)
    p.row("Ended", local_time(d.end_ns) + ", after " + duration(d.end_ns - d.start_ns));
  else if (i.ended_wall_ns)
    p.row("Ended",
          fmt::format("last sample at {}, after {} (the recording was closed later, at {})",
                      local_time(d.end_ns), duration(d.end_ns - d.start_ns),
                      local_time(*i.ended_wall_ns)));
  else
    p.row("Ended", fmt::format("last sample at {}, after {} (no end recorded: still recording, or "
                               "the recorder was killed)",
                               local_time(d.end_ns), duration(d.end_ns - d.start_ns)));
  if (i.exit_status) p.row("Exit status", std::to_string(*i.exit_status));
  std::string samples = fmt::format("{} in the recording", d.recording_samples);
  if (d.window_samples != d.recording_samples)
    samples = fmt::format("{} of {} (the window {} to {})", d.window_samples, d.recording_samples,
                          local_time(d.from_ms * 1'000'000), local_time(d.to_ms * 1'000'000));
  p.row("Samples", samples);
  if (d.decimated)
    p.row("Points drawn",
          fmt::format("at most {} per series: the window's {} samples cut into {} buckets, each "
                      "keeping its minimum and maximum (spikes survive)",
                      *d.max_points, d.window_samples, *d.max_points / 2));
  p.row("Recorded by", "dltune " + i.dltune_version);
  p.raw("</table></div>\n");
}

std::string gpu_names(const json& env) {
  const json* devs = at(env, {"gpu", "nvml", "devices"});
  std::map<std::string, int> count;
  if (devs != nullptr && devs->is_array())
    for (const auto& g : *devs) ++count[text_at(g, {"name"})];
  if (count.empty()) {
    const json* pci = at(env, {"gpu", "devices"});
    if (pci != nullptr && pci->is_array())
      for (const auto& g : *pci)
        if (const json* c = at(g, {"compute"}); c != nullptr && c->is_boolean() && c->get<bool>())
          ++count[text_at(g, {"device_name"}) + " (PCI; NVML: not loaded)"];
  }
  std::string s;
  for (const auto& [name, n] : count) {
    if (!s.empty()) s += ", ";
    s += n > 1 ? fmt::format("{} × {}", n, name) : name;
  }
  if (s.empty()) s = "none";
  return s;
}

std::string torch_text(const json& env) {
  const json* list = at(env, {"python", "interpreters"});
  if (list == nullptr || !list->is_array()) return {};
  for (const auto& py : *list) {
    const std::string v = text_at(py, {"torch", "version"});
    if (v.empty()) continue;
    const std::string cuda = text_at(py, {"torch", "cuda"});
    return fmt::format("torch {} ({}), Python {} at {}", v,
                       cuda.empty() ? "CPU build" : "CUDA " + cuda, text_at(py, {"version"}),
                       text_at(py, {"path"}));
  }
  return "not found";
}

void host_card(Page& p, const ReportData& d) {
  p.raw("<div class=\"card\"><h2>Host facts</h2>");
  if (!d.env || !d.env->is_object()) {
    p.raw(
        "<p class=\"absent\">Not in the recording (record stores <code>dltune env --json</code> "
        "when it ends; a recording cut short has none).</p></div>\n");
    return;
  }
  const json& e = *d.env;
  p.raw("<table class=\"kv\">\n");
  p.row("OS", text_at(e, {"os", "name"}));
  p.row("Kernel", text_at(e, {"os", "kernel_release"}));
  std::string virt = text_at(e, {"os", "virtualization"});
  if (virt == "none") virt.clear();
  const std::string container = text_at(e, {"os", "container"});
  p.row("Virtualisation", virt + (container.empty() ? "" : (virt.empty() ? "" : ", ") + container));
  p.row("cgroup", text_at(e, {"os", "cgroup", "version"}));
  std::string cpu = text_at(e, {"cpu", "model"});
  if (auto t = uint_at(e, {"cpu", "threads"}))
    cpu += fmt::format(" — {} socket(s), {} cores, {} threads",
                       uint_at(e, {"cpu", "sockets"}).value_or(0),
                       uint_at(e, {"cpu", "cores"}).value_or(0), *t);
  p.row("CPU", cpu);
  if (const json* n = at(e, {"cpu", "numa_nodes"}); n != nullptr && n->is_array())
    p.row("NUMA nodes", std::to_string(n->size()));
  if (auto m = uint_at(e, {"memory", "total_bytes"})) {
    std::string mem = text::human_bytes(*m);
    if (auto s = uint_at(e, {"memory", "swap_total_bytes"}))
      mem += *s > 0 ? fmt::format(", swap {}", text::human_bytes(*s)) : std::string(", no swap");
    p.row("Memory", mem);
  }
  p.row("GPUs", gpu_names(e));
  std::string driver = text_at(e, {"gpu", "nvml", "driver_version"});
  if (driver.empty()) driver = text_at(e, {"gpu", "driver", "kernel_module_version"});
  const std::string cuda = text_at(e, {"gpu", "nvml", "cuda_driver_version"});
  if (!driver.empty() || !cuda.empty())
    p.row("NVIDIA driver", driver + (cuda.empty() ? "" : " (CUDA " + cuda + ")"));
  p.row("PyTorch", torch_text(e));
  p.raw("</table></div>\n");
}

int severity_rank(const std::string& s) {
  return s == "critical" ? 0 : s == "warn" ? 1 : s == "info" ? 2 : 3;
}

void findings(Page& p, const ReportData& d) {
  p.raw("<section id=\"findings\"><h2>Check findings</h2>\n");
  if (!d.check || !d.check->is_object()) {
    p.raw(
        "<p class=\"absent\">Not in the recording (record stores <code>dltune check "
        "--json</code> when it ends).</p></section>\n");
    return;
  }
  const json& c = *d.check;
  const json* list = at(c, {"findings"});
  std::vector<const json*> shown;
  if (list != nullptr && list->is_array())
    for (const auto& f : *list) {
      const std::string sev = text_at(f, {"severity"});
      const json* applicable = at(f, {"applicable"});
      if (sev == "ok" ||
          (applicable != nullptr && applicable->is_boolean() && !applicable->get<bool>()))
        continue;
      shown.push_back(&f);
    }
  std::stable_sort(shown.begin(), shown.end(), [](const json* a, const json* b) {
    return severity_rank(text_at(*a, {"severity"})) < severity_rank(text_at(*b, {"severity"}));
  });
  p.raw("<p>").text(fmt::format("Profile {}: {} critical, {} warnings, {} info, {} ok.",
                                text_at(c, {"profile"}), text_at(c, {"summary", "critical"}),
                                text_at(c, {"summary", "warn"}), text_at(c, {"summary", "info"}),
                                text_at(c, {"summary", "ok"})));
  if (shown.empty()) {
    p.raw(" Nothing to fix.</p></section>\n");
    return;
  }
  p.raw(
      "</p>\n<table class=\"findings\"><thead><tr><th>Severity</th><th>Finding</th><th>Found"
      "</th><th>Fix</th></tr></thead><tbody>\n");
  for (const json* f : shown) {
    const std::string sev = text_at(*f, {"severity"});
    p.raw("<tr><td><span class=\"sev sev-")
        .text(sev)
        .raw("\">")
        .text(sev)
        .raw("</span></td><td><b>");
    p.text(text_at(*f, {"id"})).raw("</b><br>").text(text_at(*f, {"summary"})).raw("</td><td>");
    const std::string actual = text_at(*f, {"actual"}), expected = text_at(*f, {"expected"});
    if (!actual.empty()) p.text(actual);
    if (!expected.empty()) p.raw("<br><span class=\"dim\">expected ").text(expected).raw("</span>");
    p.raw("</td><td>");
    const std::string fix = text_at(*f, {"fix", "command"});
    if (!fix.empty()) p.raw("<code>").text(fix).raw("</code>");
    p.raw("</td></tr>\n");
  }
  p.raw("</tbody></table></section>\n");
}

void evidence_item(Page& p, const json& e) {
  if (e.is_string()) {
    p.text(e.get<std::string>());
  } else if (e.is_object()) {
    bool first = true;
    for (const auto& [k, v] : e.items()) {
      if (!first) p.raw("; ");
      first = false;
      p.raw("<b>").text(k).raw("</b>: ").text(v.is_string() ? v.get<std::string>() : v.dump());
    }
  } else {
    p.text(e.dump());
  }
}

// The profile document is shown generically: its verdict, summary and evidence when it has
// them (dltune profile defines them, issue 9), else the JSON as it is.
void profile(Page& p, const ReportData& d) {
  if (!d.profile) return;
  const json& j = *d.profile;
  p.raw("<section id=\"profile\"><h2>Bottleneck verdict (dltune profile)</h2>\n");
  const std::string verdict = text_at(j, {"verdict"}), summary = text_at(j, {"summary"});
  const json* evidence = at(j, {"evidence"});
  if (verdict.empty() && summary.empty() && evidence == nullptr) {
    p.raw("<pre>")
        .text(j.dump(2, ' ', false, json::error_handler_t::replace))
        .raw("</pre></section>\n");
    return;
  }
  if (!verdict.empty()) p.raw("<p class=\"verdict\">").text(verdict).raw("</p>\n");
  if (!summary.empty()) p.raw("<p>").text(summary).raw("</p>\n");
  if (evidence != nullptr) {
    p.raw("<ul class=\"evidence\">\n");
    if (evidence->is_array()) {
      for (const auto& e : *evidence) {
        p.raw("<li>");
        evidence_item(p, e);
        p.raw("</li>\n");
      }
    } else {
      p.raw("<li>");
      evidence_item(p, *evidence);
      p.raw("</li>\n");
    }
    p.raw("</ul>\n");
  }
  p.raw("</section>\n");
}

std::string elapsed(std::int64_t ms) {
  const bool neg = ms < 0;
  std::int64_t s = (neg ? -ms : ms) / 1000;
  const std::int64_t h = s / 3600, m = s / 60 % 60;
  s %= 60;
  std::string t = h > 0   ? fmt::format("{}h{:02}m{:02}s", h, m, s)
                  : m > 0 ? fmt::format("{}m{:02}s", m, s)
                          : fmt::format("{}s", s);
  return (neg ? "-" : "+") + t;
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
    p.raw("<tr><td>").text(local_time(m.time_ms * 1'000'000)).raw("</td><td>");
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
      p.raw("<figure class=\"chart\"><figcaption>").text(c.title).raw("</figcaption>");
      p.raw("<div class=\"plot\"><canvas id=\"chart-")
          .text(c.id)
          .raw("\"></canvas></div></figure>\n");
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
  p.text(d.info.scope).raw(" · ").text(local_time(d.from_ms * 1'000'000)).raw(" to ");
  p.text(local_time(d.to_ms * 1'000'000))
      .raw(" (")
      .text(duration((d.to_ms - d.from_ms) * 1'000'000));
  p.raw(")</p>\n</header>\n<main>\n<div class=\"cards\">\n");
  recording_card(p, d, o);
  host_card(p, d);
  p.raw("</div>\n");
  profile(p, d);
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

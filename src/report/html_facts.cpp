// The recorded documents in the HTML page (html_page.hpp): env's key facts, the check findings
// that need attention, and the profile verdict, read defensively (a key that is missing or of
// another type is left out, never an error: the documents come from other dltune versions too).
#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "report/html_page.hpp"

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

int severity_rank(const std::string& s) {
  return s == "critical" ? 0 : s == "warn" ? 1 : s == "info" ? 2 : 3;
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

void findings_table(Page& p, const std::vector<const json*>& rows) {
  p.raw(
      "<table class=\"findings\"><thead><tr><th>Severity</th><th>Finding</th><th>Found</th>"
      "<th>Fix</th></tr></thead><tbody>\n");
  for (const json* f : rows) {
    const std::string sev = text_at(*f, {"severity"});
    p.raw("<tr><td><span class=\"sev sev-").text(sev).raw("\">").text(sev);
    p.raw("</span></td><td><b>").text(text_at(*f, {"id"})).raw("</b><br>");
    p.text(text_at(*f, {"summary"})).raw("</td><td>");
    const std::string actual = text_at(*f, {"actual"}), expected = text_at(*f, {"expected"});
    if (!actual.empty()) p.text(actual);
    if (!expected.empty()) p.raw("<br><span class=\"dim\">expected ").text(expected).raw("</span>");
    p.raw("</td><td>");
    const std::string fix = text_at(*f, {"fix", "command"});
    if (!fix.empty()) p.raw("<code>").text(fix).raw("</code>");
    p.raw("</td></tr>\n");
  }
  p.raw("</tbody></table>\n");
}

}  // namespace

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
  p.raw("</p>\n");
  // Critical and warn in the open; info findings (advice, not faults) folded, so that the charts
  // stay near the top of the page.
  const auto info = std::find_if(shown.begin(), shown.end(), [](const json* f) {
    return severity_rank(text_at(*f, {"severity"})) >= severity_rank("info");
  });
  if (info != shown.begin()) findings_table(p, {shown.begin(), info});
  if (info != shown.end()) {
    p.raw("<details><summary>")
        .text(fmt::format("{} informational finding{}", shown.end() - info,
                          shown.end() - info == 1 ? "" : "s"))
        .raw("</summary>\n");
    findings_table(p, {info, shown.end()});
    p.raw("</details>\n");
  }
  p.raw("</section>\n");
}

// A distributed job's ranks (profile's `ranks`), one row each with its verdict and its main
// thread's time on a CPU, the straggler marked with its cause and action (`straggler`).
void ranks(Page& p, const json& j) {
  const json* all = at(j, {"ranks"});
  if (all == nullptr || !all->is_array() || all->empty()) return;
  const json* straggler = at(j, {"straggler"});
  const auto straggler_pid = straggler != nullptr && straggler->is_object() &&
                                     straggler->contains("pid") && (*straggler)["pid"].is_number()
                                 ? (*straggler)["pid"].get<std::int64_t>()
                                 : std::int64_t{-1};
  p.raw("<h3>Ranks</h3>\n");
  if (const auto compared = text_at(j, {"ranks_compared"}); !compared.empty())
    p.raw("<p>").text(compared).raw("</p>\n");
  p.raw(
      "<table class=\"ranks\"><tr><th>rank</th><th>pid</th><th>verdict</th><th>main thread on a "
      "CPU</th><th></th></tr>\n");
  for (const auto& r : *all) {
    const json* pid = at(r, {"job", "pid"});
    const auto pid_value = pid != nullptr && pid->is_number() ? pid->get<std::int64_t>() : -1;
    const bool marked = pid_value >= 0 && pid_value == straggler_pid;
    const json* on_cpu = at(r, {"signals", "main.on_cpu", "value"});
    const json* rank = at(r, {"job", "rank"});
    p.raw(marked ? "<tr class=\"straggler\"><td>" : "<tr><td>")
        .text(rank != nullptr && rank->is_number_integer()
                  ? std::to_string(rank->get<std::int64_t>())
                  : std::string("-"))
        .raw("</td><td>")
        .text(pid_value >= 0 ? std::to_string(pid_value) : std::string("?"))
        .raw("</td><td>")
        .text(text_at(r, {"verdict"}))
        .raw("</td><td>")
        .text(on_cpu != nullptr && on_cpu->is_number()
                  ? fmt::format("{:.0f}%", on_cpu->get<double>())
                  : std::string("-"))
        .raw("</td><td>")
        .text(marked ? "straggler: " + text_at(*straggler, {"cause"}) +
                           " Action: " + text_at(*straggler, {"action"})
                     : std::string())
        .raw("</td></tr>\n");
  }
  p.raw("</table>\n");
}

// The profile document is shown generically: its verdict, summary and evidence when it has
// them (dltune profile defines them), else the JSON as it is.
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
  ranks(p, j);
  p.raw("</section>\n");
}

}  // namespace dltune::report

#include "audit/check.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "audit/baseline.hpp"
#include "audit/rules.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/sysctl_files.hpp"

namespace dltune::audit {

namespace {

bool listed(const std::vector<std::string>& v, const std::string& id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

}  // namespace

namespace {

// "dltune tune apply --only X" -> "dltune tune apply -p PROFILE --only X", with
// "--set X=VALUE" too when the value came from check's --set (else tune would apply the
// profile's own value).
void name_profile(Finding& f, const std::string& profile_arg, const settings::ProfileEntry& entry) {
  if (!f.fix) return;
  constexpr std::string_view kApply = "dltune tune apply";
  auto& command = f.fix->command;
  const auto at = command.find(kApply);
  if (at == std::string::npos) return;
  std::string options = " -p " + text::shell_quote(profile_arg);
  if (entry.origin == "--set")
    options += " --set " + text::shell_quote(entry.key + "=" + entry.expected.text());
  command.insert(at + kApply.size(), options);
}

}  // namespace

namespace {

// Counted by severity, then kept in the report.
void add(CheckReport& r, Finding f) {
  if (f.applicable && f.unknown) ++r.unknown;
  if (!f.applicable)
    ++r.not_applicable;
  else if (f.severity == Severity::kOk)
    ++r.ok;
  else if (f.severity == Severity::kInfo)
    ++r.info;
  else if (f.severity == Severity::kWarn)
    ++r.warn;
  else
    ++r.critical;
  r.findings.push_back(std::move(f));
}

}  // namespace

Result<CheckReport> run_check(const inventory::HostFacts& facts, const host::Root& root,
                              const settings::Profile& profile, const CheckOptions& options) {
  const std::string baseline_path = options.baseline.value_or(profile.baseline);
  std::optional<Baseline> baseline;
  if (!baseline_path.empty()) {
    auto b = load_baseline(baseline_path);
    if (!b) return tl::unexpected(b.error());
    baseline = std::move(*b);
  }
  const auto is_baseline_id = [&](const std::string& id) {
    return baseline && std::find(std::begin(kBaselineIds), std::end(kBaselineIds), id) !=
                           std::end(kBaselineIds);
  };
  for (const auto* ids : {&options.only, &options.skip}) {
    for (const auto& id : *ids) {
      if (profile.find(id) == nullptr && !is_baseline_id(id)) {
        std::vector<std::string> known;
        for (const auto& e : profile.entries) known.push_back(e.key);
        if (baseline) known.insert(known.end(), std::begin(kBaselineIds), std::end(kBaselineIds));
        return fail(fmt::format("profile {} has no setting", profile.name),
                    fmt::format("{} (it has: {})", id, fmt::join(known, ", ")));
      }
    }
  }
  settings::SysctlFiles sysctl_files(root);
  AuditInput in{facts, root, facts.os.container.has_value(), options.data_paths, &sysctl_files};
  CheckReport r;
  r.profile = profile.name;
  r.chain = profile.chain;
  for (const auto& entry : profile.entries) {
    if (!options.only.empty() && !listed(options.only, entry.key)) continue;
    if (listed(options.skip, entry.key)) continue;
    const RuleFn judge_entry = rule_for(entry.key);
    if (judge_entry == nullptr) continue;  // load_profile validated every key
    for (auto& f : judge_entry(in, entry)) {
      name_profile(f, options.profile_arg.empty() ? profile.name : options.profile_arg, entry);
      f.origin = entry.origin_text();
      f.stakes = settings::severity_from(entry.severity).value_or(Severity::kWarn);
      add(r, std::move(f));
    }
  }
  if (baseline)
    for (auto& f : judge_baseline(*baseline, facts)) {
      if (!options.only.empty() && !listed(options.only, f.id)) continue;
      if (listed(options.skip, f.id)) continue;
      add(r, std::move(f));
    }
  return r;
}

int exit_code(const CheckReport& r) {
  if (r.critical > 0) return 2;
  if (r.warn > 0) return 1;
  return 0;
}

std::vector<Finding> failing(const CheckReport& r, settings::Severity at_least) {
  std::vector<Finding> out;
  for (const auto& f : r.findings)
    if (f.applicable && f.severity >= at_least) out.push_back(f);
  return out;
}

std::vector<Finding> unknown(const CheckReport& r, settings::Severity at_least) {
  std::vector<Finding> out;
  for (const auto& f : r.findings)
    if (f.applicable && f.unknown && f.stakes >= at_least) out.push_back(f);
  return out;
}

NpdVerdict npd_verdict(const CheckReport& r, settings::Severity at_least) {
  if (const auto f = failing(r, at_least); !f.empty())
    return {1, short_reason(f, "dltune: ", kNpdMessageMax)};
  if (const auto u = unknown(r, at_least); !u.empty())
    return {2, short_reason(u, "dltune: cannot judge: ", kNpdMessageMax)};
  return {0, fmt::format("dltune: no finding at or above {} (profile {})",
                         settings::severity_name(at_least), r.profile)};
}

NpdVerdict npd_cannot_judge(const std::string& why) {
  return {2, "dltune: cannot judge the host: " + why};
}

std::string short_reason(const std::vector<Finding>& failing, std::string_view prefix,
                         std::size_t max) {
  if (failing.empty()) return {};
  // The first finding's summary, led by its id unless it starts with it already.
  const auto& first = failing.front();
  std::string head = std::string(prefix) +
                     (first.summary.rfind(first.id + " ", 0) == 0 ? "" : first.id + ": ") +
                     first.summary;
  if (head.size() > max) head = head.substr(0, max > 3 ? max - 3 : 0) + "...";
  const std::size_t others = failing.size() - 1;
  // The other ids, as many as fit; the rest counted.
  for (std::size_t named = others; others > 0; --named) {
    std::string out = fmt::format("{}; +{}: ", head, others);
    for (std::size_t i = 1; i <= named; ++i) out += (i == 1 ? "" : ", ") + failing[i].id;
    if (named < others) out += fmt::format("{}{} more", named == 0 ? "" : ", ", others - named);
    if (out.size() <= max) return out;
    if (named == 0) break;
  }
  return head;
}

inventory::Json to_json(const CheckReport& r, const inventory::HostFacts& facts) {
  inventory::Json j;
  j["schema"] = "dltune.check/1";
  j["dltune_version"] = DLTUNE_VERSION;
  j["root"] = facts.root;
  j["checked_at"] = facts.collected_at;
  if (facts.os.hostname) j["hostname"] = *facts.os.hostname;
  j["profile"] = r.profile;
  j["profile_chain"] = r.chain;
  j["summary"] = inventory::Json{{"ok", r.ok},
                                 {"info", r.info},
                                 {"warn", r.warn},
                                 {"critical", r.critical},
                                 {"not_applicable", r.not_applicable},
                                 {"unknown", r.unknown}};
  j["exit_code"] = exit_code(r);
  inventory::Json fs = inventory::Json::array();
  for (const auto& f : r.findings) fs.push_back(to_json(f));
  j["findings"] = std::move(fs);
  inventory::Json problems = inventory::Json::array();
  for (const auto& p : facts.problems)
    problems.push_back(inventory::Json{{"fact", p.fact}, {"path", p.path}, {"reason", p.reason}});
  j["problems"] = std::move(problems);
  return j;
}

namespace {

// ECMA-48 colours (SGR): ok green, info cyan, warn yellow, critical bold red, unknown magenta,
// n/a dim. A finding that could not be judged says "unknown", never its (info) severity.
std::string severity_tag(const Finding& f, bool color) {
  const bool unknown = f.applicable && f.unknown && f.severity <= Severity::kInfo;
  const std::string name = !f.applicable ? "n/a" : unknown ? "unknown" : severity_name(f.severity);
  const std::string padded = fmt::format("{:<8}", name);
  if (!color) return padded;
  const char* sgr = !f.applicable                   ? "2"
                    : unknown                       ? "35"
                    : f.severity == Severity::kOk   ? "32"
                    : f.severity == Severity::kInfo ? "36"
                    : f.severity == Severity::kWarn ? "33"
                                                    : "1;31";
  return fmt::format("\x1b[{}m{}\x1b[0m{}", sgr, name, padded.substr(name.size()));
}

// The summary, and the finding's id when the summary does not start with it: what --only,
// --skip and tune take.
std::string headline(const Finding& f) {
  if (f.summary.starts_with(f.id)) return f.summary;
  return fmt::format("{}  [{}]", f.summary, f.id);
}

}  // namespace

std::string render_text(const CheckReport& r, const TextStyle& style) {
  const bool verbose = style.verbose;
  constexpr std::size_t kIndent = 18;  // "            why: "'s column, for the wrapped lines
  static const std::vector<std::pair<const char*, const char*>> kAreas = {
      {"kernel", "Kernel"},   {"cpu", "CPU"},
      {"memory", "Memory"},   {"limits", "Limits"},
      {"storage", "Storage"}, {"network", "Network"},
      {"gpu", "GPUs"},        {"environment", "Training environment"}};
  std::string out =
      fmt::format("dltune check: profile {}{}\n", r.profile,
                  r.chain.size() > 1 ? fmt::format(" ({})", fmt::join(r.chain, " > ")) : "");
  // Where each setting comes from, when the profile is made of more than one (includes, --set).
  bool mixed = r.chain.size() > 1;
  for (const auto& f : r.findings) mixed = mixed || f.origin != r.findings.front().origin;
  for (const auto& [area, title] : kAreas) {
    std::vector<const Finding*> in_area;
    for (const auto& f : r.findings)
      if (f.area == area) in_area.push_back(&f);
    if (in_area.empty()) continue;
    // A whole area that does not apply for one reason ("no NVIDIA GPU on this host") is one line.
    const bool one_reason =
        in_area.size() > 1 && std::all_of(in_area.begin(), in_area.end(), [&](const Finding* f) {
          return !f->applicable && f->summary == in_area.front()->summary;
        });
    if (one_reason && !verbose) {
      std::vector<std::string> ids;
      for (const auto* f : in_area) ids.push_back(f->id);
      out += fmt::format(
          "\n{}\n  {}  {}\n{}{}\n", title, severity_tag(*in_area.front(), style.color),
          in_area.front()->summary, std::string(kIndent - 6, ' '),
          text::wrap(fmt::format("({})", fmt::join(ids, ", ")), kIndent - 6, style.width));
      continue;
    }
    std::string block;
    for (const auto* fp : in_area) {
      const Finding& f = *fp;
      const bool quiet = f.severity == Severity::kOk || !f.applicable;
      block += fmt::format("  {}  {}\n", severity_tag(f, style.color), headline(f));
      if (quiet && !verbose) continue;
      for (const auto& e : f.evidence)
        block += fmt::format("            evidence: {} = {}\n", e.path, e.value);
      if (verbose || f.severity >= Severity::kWarn)
        block += fmt::format("            why: {}\n",
                             f.reason.empty() ? "(no reason given)"
                                              : text::wrap(f.reason, kIndent - 1, style.width));
      if (mixed && !f.origin.empty() && (verbose || f.severity >= Severity::kWarn))
        block += fmt::format("            from: {}\n", f.origin);
      for (const auto& n : f.notes) block += fmt::format("            note: {}\n", n);
      if (f.fix) block += fmt::format("            fix: {}\n", f.fix->command);
    }
    if (!block.empty()) out += fmt::format("\n{}\n{}", title, block);
  }
  out += fmt::format("\n{} ok, {} info, {} warn, {} critical, {} not applicable{}\n", r.ok, r.info,
                     r.warn, r.critical, r.not_applicable,
                     r.unknown > 0 ? fmt::format("; {} unknown (not judged)", r.unknown) : "");
  return out;
}

}  // namespace dltune::audit

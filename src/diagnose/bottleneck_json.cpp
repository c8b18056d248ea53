// A verdict as JSON (docs/profile.md, "verdicts").
#include "diagnose/bottleneck.hpp"

#include <fmt/format.h>

#include "core/json.hpp"

namespace dltune::diagnose {

nlohmann::json to_json(const Profile& p) {
  using nlohmann::json;
  const auto verdict_json = [](const Verdict& v) {
    json ev = json::array();
    for (const auto& e : v.evidence)
      ev.push_back({{"signal", std::string(info(e.signal).name)},
                    {"value", e.value},
                    {"condition", e.condition},
                    {"held", e.held},
                    {"samples", e.samples},
                    {"supporting", e.supporting},
                    {"text", e.text}});
    return json{{"rule", v.rule},       {"verdict", v.verdict}, {"title", v.title},
                {"summary", v.summary}, {"healthy", v.healthy}, {"confidence", v.confidence},
                {"score", v.score},     {"action", v.action},   {"run", v.run},
                {"evidence", ev},       {"causes", v.causes}};
  };
  json out;
  out["schema"] = "dltune.profile/1";
  // The keys `dltune report` shows: verdict (a line for people), summary, evidence (strings).
  out["verdict"] = fmt::format("{} (confidence {})", p.verdict.title, p.verdict.confidence);
  out["summary"] =
      p.verdict.summary + (p.verdict.action.empty() ? "" : " Try first: " + p.verdict.action);
  json ev = json::array();
  for (const auto& e : p.verdict.evidence) ev.push_back(e.text);
  out["evidence"] = ev;
  out["result"] = verdict_json(p.verdict);
  json also = json::array();
  for (const auto& v : p.also) also.push_back(verdict_json(v));
  out["also"] = also;
  json also_try = json::array();
  for (const auto& a : p.also_try) {
    json ev = json::array();
    for (const auto& e : a.evidence) ev.push_back(e.text);
    also_try.push_back({{"lever", a.lever},
                        {"title", a.title},
                        {"why", a.why},
                        {"measured", a.measured},
                        {"bench", a.bench},
                        {"evidence", ev}});
  }
  out["also_try"] = also_try;
  json near = json::array();
  for (const auto& m : p.near_misses)
    near.push_back({{"rule", m.rule},
                    {"verdict", m.verdict},
                    {"title", m.title},
                    {"met", m.met},
                    {"total", m.total},
                    {"lacking", m.lacking},
                    {"disambiguate", m.disambiguate}});
  out["near_misses"] = near;
  out["window"] = {{"samples", p.samples},
                   {"skipped", p.skipped},
                   {"start_wall_ns", p.start_ns},
                   {"end_wall_ns", p.end_ns},
                   {"seconds", static_cast<double>(p.end_ns - p.start_ns) / 1e9}};
  json signals = json::object();
  for (const auto& i : signal_table()) {
    const auto& v = p.values[static_cast<std::size_t>(i.signal)];
    signals[std::string(i.name)] =
        v ? json{{"value", *v},
                 {"unit", i.unit},
                 {"samples", p.present[static_cast<std::size_t>(i.signal)]}}
          : json(nullptr);
  }
  out["signals"] = signals;
  return out;
}

}  // namespace dltune::diagnose

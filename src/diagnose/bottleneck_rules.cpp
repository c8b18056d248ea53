// Bottleneck rules: knowledge/bottlenecks.toml parsed into Rules (diagnose/bottleneck.hpp).
#include "diagnose/bottleneck.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/embedded.hpp"
#include "core/toml_parse.hpp"

namespace dltune::diagnose {

namespace {

struct Parser {
  std::string name;
  std::string where;  // "[[rule]] input-bound"

  tl::unexpected<Error> bad(const std::string& what) const {
    return fail(what, fmt::format("{}: {}", name, where));
  }

  Result<void> placeholders(std::string_view text, const std::string& key) const {
    for (std::size_t i = text.find('{'); i != std::string_view::npos; i = text.find('{', i + 1)) {
      const auto end = text.find('}', i);
      if (end == std::string_view::npos) return bad(fmt::format("{}: an unclosed '{{'", key));
      const auto sig = text.substr(i + 1, end - i - 1);
      if (!signal_by_name(sig))
        return bad(
            fmt::format("{}: {{{}}} names no signal (docs/profile.md lists them)", key, sig));
    }
    return {};
  }

  Result<Condition> condition(const toml::node& n, const std::string& key) const {
    const auto* t = n.as_table();
    if (t == nullptr) return bad(key + ": expected a table {signal = ..., min = ... | max = ...}");
    Condition c;
    for (const auto& [k, v] : *t) {
      const std::string kk(k.str());
      if (kk == "signal") {
        const auto s = v.value<std::string>();
        if (!s) return bad(key + ".signal: expected a string");
        const auto sig = signal_by_name(*s);
        if (!sig) return bad(fmt::format("{}.signal: '{}' is not a signal", key, *s));
        c.signal = *sig;
      } else if (kk == "min" || kk == "max") {
        const auto d = v.value<double>();
        if (!d || !std::isfinite(*d)) return bad(fmt::format("{}.{}: expected a number", key, kk));
        (kk == "min" ? c.min : c.max) = *d;
      } else if (kk == "optional") {
        const auto b = v.value<bool>();
        if (!b) return bad(key + ".optional: expected true or false");
        c.optional = *b;
      } else {
        return bad(fmt::format("{}: unknown key '{}' (signal, min, max, optional)", key, kk));
      }
    }
    if (!t->contains("signal")) return bad(key + ": no signal");
    if (!c.min && !c.max) return bad(key + ": neither min nor max");
    if (c.min && c.max && *c.min > *c.max) return bad(key + ": min is above max");
    return c;
  }

  Result<std::vector<Condition>> conditions(const toml::table& t, const char* key) const {
    std::vector<Condition> out;
    const auto* n = t.get(key);
    if (n == nullptr) return out;
    const auto* a = n->as_array();
    if (a == nullptr) return bad(fmt::format("{}: expected an array of conditions", key));
    for (std::size_t i = 0; i < a->size(); ++i) {
      auto c = condition(*a->get(i), fmt::format("{}[{}]", key, i));
      if (!c) return tl::unexpected(c.error());
      out.push_back(*c);
    }
    return out;
  }

  Result<std::string> text(const toml::table& t, const char* key, bool required) const {
    const auto* n = t.get(key);
    if (n == nullptr) {
      if (required) return bad(fmt::format("no {}", key));
      return std::string();
    }
    const auto s = n->value<std::string>();
    if (!s) return bad(fmt::format("{}: expected a string", key));
    if (required && s->empty()) return bad(fmt::format("{}: empty", key));
    return *s;
  }

  Result<Rule> rule(const toml::table& t, std::size_t index) {
    where = fmt::format("[[rule]] #{}", index + 1);
    static const std::set<std::string> kKeys = {"id",      "verdict", "title",       "summary",
                                                "healthy", "require", "any",         "support",
                                                "exclude", "action",  "disambiguate"};
    for (const auto& [k, v] : t)
      if (kKeys.count(std::string(k.str())) == 0)
        return bad(fmt::format("unknown key '{}'", k.str()));
    Rule r;
    auto id = text(t, "id", true);
    if (!id) return tl::unexpected(id.error());
    r.id = *id;
    where = "[[rule]] " + r.id;
    for (auto [key, field] : {std::pair{"verdict", &r.verdict}, std::pair{"title", &r.title},
                              std::pair{"summary", &r.summary}}) {
      auto s = text(t, key, true);
      if (!s) return tl::unexpected(s.error());
      *field = *s;
    }
    auto dis = text(t, "disambiguate", false);
    if (!dis) return tl::unexpected(dis.error());
    r.disambiguate = *dis;
    if (const auto* h = t.get("healthy")) {
      const auto b = h->value<bool>();
      if (!b) return bad("healthy: expected true or false");
      r.healthy = *b;
    }
    for (auto [key, field] : {std::pair{"require", &r.require}, std::pair{"any", &r.any},
                              std::pair{"support", &r.support}, std::pair{"exclude", &r.exclude}}) {
      auto c = conditions(t, key);
      if (!c) return tl::unexpected(c.error());
      *field = std::move(*c);
    }
    if (r.require.empty() && r.any.empty()) return bad("no require or any conditions");
    if (auto p = placeholders(r.summary, "summary"); !p) return tl::unexpected(p.error());
    const auto* actions = t.get("action");
    if (actions == nullptr || !actions->is_array_of_tables() || actions->as_array()->empty())
      return bad("no [[rule.action]]: every verdict says what to try first");
    const auto& arr = *actions->as_array();
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const auto& at = *arr.get(i)->as_table();
      const std::string k = fmt::format("action[{}]", i);
      for (const auto& [kk, v] : at)
        if (kk.str() != "when" && kk.str() != "text" && kk.str() != "run")
          return bad(fmt::format("{}: unknown key '{}' (when, text, run)", k, kk.str()));
      Action a;
      auto w = conditions(at, "when");
      if (!w) return tl::unexpected(w.error());
      a.when = std::move(*w);
      auto tx = text(at, "text", true);
      if (!tx) return tl::unexpected(tx.error());
      a.text = *tx;
      auto run = text(at, "run", false);
      if (!run) return tl::unexpected(run.error());
      a.run = *run;
      if (auto p = placeholders(a.text, k + ".text"); !p) return tl::unexpected(p.error());
      if (auto p = placeholders(a.run, k + ".run"); !p) return tl::unexpected(p.error());
      r.actions.push_back(std::move(a));
    }
    if (!r.actions.back().when.empty())
      return bad("the last [[rule.action]] must have no `when`: some action always applies");
    return r;
  }

  Result<Lever> lever(const toml::table& t, std::size_t index) {
    where = fmt::format("[[lever]] #{}", index + 1);
    static const std::set<std::string> kKeys = {"id",  "title",    "when", "after",
                                                "why", "measured", "bench"};
    for (const auto& [k, v] : t)
      if (kKeys.count(std::string(k.str())) == 0)
        return bad(fmt::format("unknown key '{}' (id, title, when, after, why, measured, bench)",
                               k.str()));
    Lever l;
    auto id = text(t, "id", true);
    if (!id) return tl::unexpected(id.error());
    l.id = *id;
    where = "[[lever]] " + l.id;
    for (auto [key, field] : {std::pair{"title", &l.title}, std::pair{"why", &l.why},
                              std::pair{"measured", &l.measured}, std::pair{"bench", &l.bench}}) {
      auto s = text(t, key, true);
      if (!s) return tl::unexpected(s.error());
      *field = *s;
    }
    auto w = conditions(t, "when");
    if (!w) return tl::unexpected(w.error());
    l.when = std::move(*w);
    if (l.when.empty()) return bad("no `when` conditions");
    if (const auto* after = t.get("after")) {
      const auto* arr = after->as_array();
      if (arr == nullptr) return bad("after: expected a list of verdicts or rule ids");
      for (const auto& e : *arr) {
        const auto v = e.value<std::string>();
        if (!v) return bad("after: expected a list of verdicts or rule ids");
        l.after.push_back(*v);
      }
    }
    if (auto p = placeholders(l.why, "why"); !p) return tl::unexpected(p.error());
    if (auto p = placeholders(l.bench, "bench"); !p) return tl::unexpected(p.error());
    return l;
  }
};

}  // namespace

std::string Condition::describe() const {
  const auto n = std::string(info(signal).name);
  if (min && max) return fmt::format("{} in [{}, {}]", n, *min, *max);
  if (min) return fmt::format("{} >= {}", n, *min);
  return fmt::format("{} <= {}", n, max.value_or(0));
}

Result<Rules> parse_rules(std::string_view toml_text, std::string_view name) {
  Parser parser{std::string(name), ""};
  auto parsed = parse_toml(toml_text, name);
  if (!parsed) return tl::unexpected(parsed.error());
  const toml::table& doc = *parsed;
  Rules out;
  for (const auto& [k, v] : doc) {
    const std::string key(k.str());
    if (key == "rule" || key == "lever") continue;
    if (key == "min_samples") {
      const auto* n = v.as_integer();  // not value<>: a float is converted unchecked (toml++)
      if (n == nullptr || n->get() < 1)
        return fail("min_samples: expected a whole number >= 1", std::string(name));
      out.min_samples = static_cast<std::size_t>(n->get());
    } else if (key == "confidence") {
      const auto* t = v.as_table();
      const auto hi = t ? (*t)["high"].value<double>() : std::nullopt;
      const auto me = t ? (*t)["medium"].value<double>() : std::nullopt;
      if (!hi || !me || *me > *hi || *me < 0 || *hi > 1)
        return fail("confidence: expected {high = H, medium = M} with 0 <= M <= H <= 1",
                    std::string(name));
      out.high = *hi;
      out.medium = *me;
    } else {
      return fail(fmt::format("unknown key '{}' (min_samples, confidence, rule, lever)", key),
                  std::string(name));
    }
  }
  const auto* rules = doc.get("rule");
  if (rules == nullptr || !rules->is_array_of_tables() || rules->as_array()->empty())
    return fail("no [[rule]] tables", std::string(name));
  std::set<std::string> ids;
  const auto& arr = *rules->as_array();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    auto r = parser.rule(*arr.get(i)->as_table(), i);
    if (!r) return tl::unexpected(r.error());
    if (!ids.insert(r->id).second)
      return fail(fmt::format("[[rule]] {}: the id is used twice", r->id), std::string(name));
    out.rules.push_back(std::move(*r));
  }
  if (const auto* levers = doc.get("lever")) {
    if (!levers->is_array_of_tables())
      return fail("lever: expected [[lever]] tables", std::string(name));
    const auto& la = *levers->as_array();
    for (std::size_t i = 0; i < la.size(); ++i) {
      auto l = parser.lever(*la.get(i)->as_table(), i);
      if (!l) return tl::unexpected(l.error());
      if (!ids.insert(l->id).second)
        return fail(fmt::format("[[lever]] {}: the id is used twice", l->id), std::string(name));
      for (const auto& a : l->after)
        if (std::none_of(out.rules.begin(), out.rules.end(),
                         [&](const Rule& r) { return r.id == a || r.verdict == a; }) &&
            a != "inconclusive" && a != "mixed")
          return fail(fmt::format("[[lever]] {}: after: '{}' is no rule id or verdict", l->id, a),
                      std::string(name));
      out.levers.push_back(std::move(*l));
    }
  }
  return out;
}

const Result<Rules>& builtin_rules() {
  static const Result<Rules> kRules = load_knowledge<Rules>(
      "bottlenecks",
      [](std::string_view text, const std::string& where) { return parse_rules(text, where); });
  return kRules;
}

}  // namespace dltune::diagnose

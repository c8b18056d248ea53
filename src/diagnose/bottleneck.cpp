// Bottleneck rules: parsing knowledge/bottlenecks.toml and evaluating a window
// (diagnose/bottleneck.hpp).
#include "diagnose/bottleneck.hpp"
#include "core/toml_parse.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/embedded.hpp"
#include "core/json.hpp"
#include "monitor/roles.hpp"

namespace dltune::diagnose {

namespace {

std::string threshold_text(Signal s, const Condition& c) {
  if (c.min && c.max)
    return fmt::format("{} to {}", format_value(s, *c.min), format_value(s, *c.max));
  if (c.min) return ">= " + format_value(s, *c.min);
  return "<= " + format_value(s, c.max.value_or(0));
}

// ---- parsing -----------------------------------------------------------------------------------

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

// ---- evaluation --------------------------------------------------------------------------------

struct Check {
  bool present = false, holds = false;
  double value = 0, held = 0;
  std::size_t samples = 0;
};

class Evaluator {
 public:
  Evaluator(const Window& w, std::size_t first, Profile& p) : w_(w), first_(first), p_(p) {}

  Check check(const Condition& c) const {
    Check out;
    const auto i = static_cast<std::size_t>(c.signal);
    if (!p_.values[i]) return out;
    out.present = true;
    out.value = *p_.values[i];
    out.holds = c.holds(out.value);
    out.samples = p_.present[i];
    if (info(c.signal).aggregate == Aggregate::kSum) {
      out.held = out.holds ? 1.0 : 0.0;
      return out;
    }
    std::size_t n = 0, ok = 0;
    for (std::size_t s = first_; s < w_.samples.size(); ++s) {
      const auto& v = w_.samples[s][i];
      if (!v) continue;
      ++n;
      if (c.holds(*v)) ++ok;
    }
    out.held = n > 0 ? static_cast<double>(ok) / static_cast<double>(n) : 0.0;
    return out;
  }

  Evidence evidence(const Condition& c, const Check& k, bool supporting) const {
    Evidence e;
    e.signal = c.signal;
    e.value = k.value;
    e.condition = c.describe();
    e.held = k.held;
    e.samples = k.samples;
    e.supporting = supporting;
    const auto& inf = info(c.signal);
    if (inf.aggregate == Aggregate::kSum)
      e.text = fmt::format("{}: {} in the window", inf.label, format_value(c.signal, k.value));
    else
      e.text = fmt::format("{}: {} (needs {}), held in {:.0f}% of {} samples", inf.label,
                           format_value(c.signal, k.value), threshold_text(c.signal, c),
                           k.held * 100, k.samples);
    return e;
  }

 private:
  const Window& w_;
  std::size_t first_;
  Profile& p_;
};

std::string level(const Rules& rules, double score, std::size_t samples) {
  if (samples < rules.min_samples) return "low";
  if (score >= rules.high) return "high";
  if (score >= rules.medium) return "medium";
  return "low";
}

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

void WindowBuilder::add(monitor::Sample&& s, const PyTally* py) {
  const monitor::Process* main = nullptr;
  std::size_t workers = 0, children = 0;
  for (const auto& p : s.processes) {
    if (p.state == 'Z' || p.state == 'X') continue;  // ended, not yet reaped by its parent
    if (p.role == monitor::Role::kMain) main = &p;
    if (p.role == monitor::Role::kWorker) ++workers;
    if (p.role == monitor::Role::kChild) ++children;
  }
  if (main != nullptr) {
    if (job_.main == 0) {
      job_.main = main->pid;
      job_.comm = main->comm;
      job_.cmdline = main->cmdline;
    }
    if (!job_.rank) job_.rank = main->rank;
    ++job_.samples_with_main;
    job_.max_workers = std::max(job_.max_workers, workers);
    job_.max_children = std::max(job_.max_children, children);
  } else if (job_.main != 0) {
    job_.main_gone = true;
  }
  note_gpus(s);
  if (previous_) {
    const auto m = monitor::Model::from(s, &*previous_);
    if (m.has_rates) {
      w_.wall_ns.push_back(s.wall_ns);
      w_.samples.push_back(signals_of(m));
      if (const auto& table = builtin_py_activities(); py != nullptr && table)
        set_py_signals(w_.samples.back(), *py, *table);
    }
  }
  previous_ = std::move(s);
}

void WindowBuilder::note_gpus(const monitor::Sample& s) {
  for (const auto& g : s.gpus) {
    std::uint64_t bytes = 0;
    bool used = false;
    for (const auto& gp : g.processes) {
      // The sample's processes are sorted by pid.
      const auto it =
          std::lower_bound(s.processes.begin(), s.processes.end(), gp.pid,
                           [](const monitor::Process& p, pid_t pid) { return p.pid < pid; });
      if (it == s.processes.end() || it->pid != gp.pid) continue;
      if (it->role != monitor::Role::kMain && it->role != monitor::Role::kWorker &&
          it->role != monitor::Role::kChild)
        continue;
      used = true;
      bytes += gp.used_memory_bytes.value_or(0);
    }
    if (!used) continue;
    auto u = std::find_if(job_.gpus.begin(), job_.gpus.end(),
                          [&](const JobSeen::GpuUse& x) { return x.index == g.index; });
    if (u == job_.gpus.end()) {
      JobSeen::GpuUse fresh;
      fresh.index = g.index;
      fresh.uuid = g.uuid;
      job_.gpus.push_back(std::move(fresh));
      std::sort(
          job_.gpus.begin(), job_.gpus.end(),
          [](const JobSeen::GpuUse& a, const JobSeen::GpuUse& b) { return a.index < b.index; });
      u = std::find_if(job_.gpus.begin(), job_.gpus.end(),
                       [&](const JobSeen::GpuUse& x) { return x.index == g.index; });
    }
    u->peak_memory_bytes = std::max(u->peak_memory_bytes, bytes);
  }
}

bool is_rank_launcher(std::string_view cmdline) {
  return monitor::is_rank_launcher(cmdline);
}

std::vector<pid_t> ranks_of(const monitor::Sample& s) {
  std::vector<pid_t> out;
  const monitor::Process* main = nullptr;
  for (const auto& p : s.processes)
    if (p.role == monitor::Role::kMain) main = &p;
  if (main == nullptr) return out;
  if (is_rank_launcher(main->cmdline)) {
    for (const auto& p : s.processes)
      if (p.ppid == main->pid && p.state != 'Z') out.push_back(p.pid);
    return out;
  }
  // A job's group whose launcher is outside it (`dltune run --nproc N` records the job's group;
  // srun -n N in a Slurm job's): processes of the main one's command line whose parents are not
  // in the group (or are Slurm's slurmstepd) are ranks, when there are several.
  const auto outside = [&](pid_t ppid) {
    const auto it = std::lower_bound(s.processes.begin(), s.processes.end(), ppid,
                                     [](const monitor::Process& p, pid_t v) { return p.pid < v; });
    return it == s.processes.end() || it->pid != ppid || it->comm == "slurmstepd";
  };
  for (const auto& p : s.processes)
    if (p.state != 'Z' && p.cmdline == main->cmdline && outside(p.ppid)) out.push_back(p.pid);
  if (out.size() < 2) out.clear();
  return out;
}

monitor::Sample rerooted(const monitor::Sample& s, pid_t rank) {
  monitor::Sample out = s;
  out.processes.clear();
  std::map<pid_t, pid_t> parent;
  for (const auto& p : s.processes) parent[p.pid] = p.ppid;
  const auto in_subtree = [&](pid_t pid) {
    for (int depth = 0; depth < 64 && pid > 0; ++depth) {
      if (pid == rank) return true;
      const auto it = parent.find(pid);
      if (it == parent.end()) return false;
      pid = it->second;
    }
    return false;
  };
  const monitor::Process* root = nullptr;
  for (const auto& p : s.processes)
    if (p.pid == rank) root = &p;
  if (root == nullptr) return out;
  for (const auto& p : s.processes) {
    out.processes.push_back(p);
    auto& role = out.processes.back().role;
    if (p.pid == rank)
      role = monitor::Role::kMain;
    else if (in_subtree(p.pid))
      role = monitor::descendant_role(p.comm, p.cmdline, root->cmdline);
    else  // the launcher and the other ranks: sampled, not this rank's
      role = monitor::Role::kOther;
  }
  return out;
}

void JobWindows::add(monitor::Sample&& s, const PyTally* py,
                     const std::map<pid_t, PyTally>* rank_py) {
  for (pid_t r : ranks_of(s)) ranks_.try_emplace(r);
  for (auto& [rank, b] : ranks_) {
    const pid_t pid = rank;  // clang 14 cannot capture a structured binding
    auto mine = rerooted(s, pid);
    // A rank that ended: its window is the time it lived, not the others' time after it.
    if (std::none_of(mine.processes.begin(), mine.processes.end(), [&](const monitor::Process& p) {
          return p.pid == pid && p.state != 'Z' && p.state != 'X';
        })) {
      b.end();
      continue;
    }
    const PyTally* tally = nullptr;
    if (rank_py != nullptr)
      if (const auto it = rank_py->find(pid); it != rank_py->end()) tally = &it->second;
    b.add(std::move(mine), tally);
  }
  job_.add(std::move(s), py);
}

std::size_t steady_start(const Window& w, std::int64_t skip_ns) {
  const std::size_t n = w.samples.size();
  if (n == 0) return 0;
  std::size_t first = 0;
  while (first < n && w.wall_ns[first] - w.wall_ns[0] < skip_ns) ++first;
  const auto workers = static_cast<std::size_t>(Signal::kWorkersCount);
  for (std::size_t i = 0; i < n / 2; ++i) {
    const auto& c = w.samples[i][workers];
    if (c && *c >= 1) {
      first = std::max(first, i);
      break;
    }
  }
  // Never leave out so much that nothing is left to judge.
  return std::min(first, n > 4 ? n - 4 : 0);
}

std::string expand(std::string_view text, const SignalValues& values) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto open = text.find('{', i);
    const auto close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, open - i));
    const auto sig = signal_by_name(text.substr(open + 1, close - open - 1));
    const auto& v = sig ? values[static_cast<std::size_t>(*sig)] : std::nullopt;
    out += v ? format_value(*sig, *v) : "(not measured)";
    i = close + 1;
  }
  return out;
}

namespace {

Profile judge(const Rules& rules, const Window& w, std::size_t first) {
  Profile p;
  first = std::min(first, w.samples.size());
  p.skipped = first;
  p.samples = w.samples.size() - first;
  if (p.samples > 0) {
    p.start_ns = w.wall_ns[first];
    p.end_ns = w.wall_ns.back();
  }
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    const auto agg = signal_table()[i].aggregate;
    double acc = 0;
    std::size_t n = 0;
    for (std::size_t s = first; s < w.samples.size(); ++s) {
      const auto& v = w.samples[s][i];
      if (!v) continue;
      if (n == 0)
        acc = *v;
      else if (agg == Aggregate::kMax)
        acc = std::max(acc, *v);
      else if (agg == Aggregate::kMin)
        acc = std::min(acc, *v);
      else
        acc += *v;
      ++n;
    }
    p.present[i] = n;
    if (n > 0) p.values[i] = agg == Aggregate::kMean ? acc / static_cast<double>(n) : acc;
  }
  // Derived from the window, not sample by sample: the workers that the idle CPUs allow.
  {
    const auto& workers = p.values[static_cast<std::size_t>(Signal::kWorkersCount)];
    const auto& idle = p.values[static_cast<std::size_t>(Signal::kHostIdleCpus)];
    auto& suggest = p.values[static_cast<std::size_t>(Signal::kSuggestWorkers)];
    if (workers && idle) suggest = *workers + std::max(1.0, std::floor(*idle + 0.2));
  }

  Evaluator ev(w, first, p);
  std::vector<Verdict> matches;
  for (const auto& r : rules.rules) {
    NearMiss miss{r.id, r.verdict, r.title, 0, 0, {}, r.disambiguate};
    Verdict v{r.id, r.verdict, r.title, expand(r.summary, p.values), r.healthy, 1.0, "",
              {},   "",        ""};
    bool ok = true;
    const auto lacking = [&](const Condition& c, const Check& k) {
      const auto& inf = info(c.signal);
      miss.lacking.push_back(k.present ? fmt::format("{} was {} (needs {})", inf.name,
                                                     format_value(c.signal, k.value),
                                                     threshold_text(c.signal, c))
                                       : fmt::format("{} was not measured", inf.name));
    };
    for (const auto& c : r.require) {
      const auto k = ev.check(c);
      if (!k.present && c.optional) continue;
      ++miss.total;
      if (k.holds) {
        ++miss.met;
        v.score = std::min(v.score, k.held);
        v.evidence.push_back(ev.evidence(c, k, false));
      } else {
        ok = false;
        lacking(c, k);
      }
    }
    if (!r.any.empty()) {
      ++miss.total;
      double best = -1;
      std::optional<Evidence> best_e;
      for (const auto& c : r.any) {
        const auto k = ev.check(c);
        if (k.holds && k.held > best) {
          best = k.held;
          best_e = ev.evidence(c, k, false);
        }
      }
      if (best_e) {
        ++miss.met;
        v.score = std::min(v.score, best);
        v.evidence.push_back(*best_e);
      } else {
        ok = false;
        std::vector<std::string> names;
        for (const auto& c : r.any) names.push_back(c.describe());
        miss.lacking.push_back("none of: " + fmt::format("{}", fmt::join(names, "; ")));
      }
    }
    for (const auto& c : r.exclude) {
      const auto k = ev.check(c);
      if (k.holds) {
        ok = false;
        miss.lacking.push_back(
            fmt::format("ruled out by {} ({})", c.describe(), format_value(c.signal, k.value)));
      }
    }
    if (ok) {
      for (const auto& c : r.support) {
        const auto k = ev.check(c);
        if (k.holds) v.evidence.push_back(ev.evidence(c, k, true));
      }
      v.confidence = level(rules, v.score, p.samples);
      for (const auto& a : r.actions) {
        if (std::all_of(a.when.begin(), a.when.end(),
                        [&](const Condition& c) { return ev.check(c).holds; })) {
          v.action = expand(a.text, p.values);
          v.run = expand(a.run, p.values);
          break;
        }
      }
      matches.push_back(std::move(v));
    } else if (miss.total > 0 && miss.met * 2 >= miss.total) {
      p.near_misses.push_back(std::move(miss));
    }
  }
  std::stable_sort(
      p.near_misses.begin(), p.near_misses.end(),
      [](const NearMiss& a, const NearMiss& b) { return a.met * b.total > b.met * a.total; });
  if (p.near_misses.size() > 3) p.near_misses.resize(3);

  if (matches.empty()) {
    p.verdict.rule = p.verdict.verdict = "inconclusive";
    p.verdict.title = "Inconclusive: no bottleneck rule matched";
    p.verdict.confidence = "low";
    p.verdict.score = 0;
    std::string nearest;
    if (!p.near_misses.empty())
      nearest = fmt::format(" The nearest was {} ({} of {} conditions).", p.near_misses[0].title,
                            p.near_misses[0].met, p.near_misses[0].total);
    p.verdict.summary = fmt::format("Over {} samples the signals did not settle on one cause.{}",
                                    p.samples, nearest);
    p.verdict.action =
        p.near_misses.empty() || p.near_misses[0].disambiguate.empty()
            ? "Profile a longer stretch of steady training (--duration), after start-up."
            : p.near_misses[0].disambiguate;
    return p;
  }
  if (matches.size() >= 2 && matches[0].confidence == "low" && !matches[0].healthy &&
      !matches[1].healthy) {
    Verdict mixed = matches[0];
    mixed.rule = mixed.verdict = "mixed";
    mixed.title = fmt::format("Mixed: {} and {}", matches[0].title, matches[1].title);
    mixed.summary = fmt::format(
        "Two causes showed, neither steadily: {} {} Try the first action, then profile again.",
        matches[0].summary, matches[1].summary);
    for (const auto& e : matches[1].evidence) mixed.evidence.push_back(e);
    mixed.healthy = false;
    p.verdict = std::move(mixed);
    p.also.assign(matches.begin() + 1, matches.end());
    return p;
  }
  p.verdict = std::move(matches[0]);
  // A healthy match beside a fault is no news ("compute-bound" while swapping): left out.
  for (auto it = matches.begin() + 1; it != matches.end(); ++it)
    if (!it->healthy || p.verdict.healthy) p.also.push_back(std::move(*it));
  return p;
}

}  // namespace

Profile analyze(const Rules& rules, const Window& w, std::size_t first) {
  Profile p = judge(rules, w, first);
  first = std::min(first, w.samples.size());
  Evaluator ev(w, first, p);
  for (const auto& l : rules.levers) {
    if (std::find(l.after.begin(), l.after.end(), p.verdict.rule) != l.after.end() ||
        std::find(l.after.begin(), l.after.end(), p.verdict.verdict) != l.after.end())
      continue;
    AlsoTry a{l.id, l.title, expand(l.why, p.values), l.measured, expand(l.bench, p.values), {}};
    bool all = true;
    for (const auto& c : l.when) {
      const auto k = ev.check(c);
      if (!k.holds) {
        all = false;
        break;
      }
      a.evidence.push_back(ev.evidence(c, k, false));
    }
    if (all) p.also_try.push_back(std::move(a));
  }
  return p;
}

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
                {"evidence", ev}};
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

// A window judged by the rules: each rule's conditions checked over the steady samples, the
// leading verdict with its evidence and action, the levers worth trying (diagnose/bottleneck.hpp).
#include "diagnose/bottleneck.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace dltune::diagnose {

namespace {

std::string threshold_text(Signal s, const Condition& c) {
  if (c.min && c.max)
    return fmt::format("{} to {}", format_value(s, *c.min), format_value(s, *c.max));
  if (c.min) return ">= " + format_value(s, *c.min);
  return "<= " + format_value(s, c.max.value_or(0));
}

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
    Verdict v{r.id, r.verdict, r.title, expand(r.summary, p.values), r.healthy, 1.0, "", {},
              "",   "",        {r.id}};
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
    mixed.causes = {matches[0].rule, matches[1].rule};
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

}  // namespace dltune::diagnose

#include "bench/comparison.hpp"
#include "core/json.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

namespace dltune::bench {

namespace {

using nlohmann::json;

constexpr int kMinRuns = 3;

bool usable(const Run& r) {
  return r.excluded.empty() && r.metrics.has_value();
}

// Why a run cannot be compared, before pairing: it did not run, failed, or was cut off.
std::string exclusion(const Run& r) {
  if (r.warmup) return "warm-up run";
  if (!r.metrics) return "could not be read: " + r.read_error;
  if (r.metrics->exit_status.value_or(0) != 0)
    return fmt::format("the job exited with status {}: a failed run is left out",
                       *r.metrics->exit_status);
  if (!r.metrics->finished)
    return "the recording was cut off (dltune stopped before the job ended)";
  return {};
}

// Bench's rounds: a round whose A or B was left out leaves out its partner as well.
void pair_by_round(std::vector<Run>& runs) {
  std::map<int, std::pair<Run*, Run*>> rounds;
  for (auto& r : runs) {
    if (r.warmup || r.pair <= 0) continue;
    auto& slot = rounds[r.pair];
    (r.side == 'A' ? slot.first : slot.second) = &r;
  }
  for (auto& r : runs)
    if (!r.warmup && r.pair <= 0 && r.excluded.empty()) r.excluded = "not part of a round";
  for (auto& [round, slot] : rounds) {
    Run* a = slot.first;
    Run* b = slot.second;
    const bool a_ok = a != nullptr && usable(*a), b_ok = b != nullptr && usable(*b);
    if (a_ok && !b_ok) a->excluded = fmt::format("its partner (B, round {}) was left out", round);
    if (b_ok && !a_ok) b->excluded = fmt::format("its partner (A, round {}) was left out", round);
  }
}

// Runs made by hand: paired when A and B alternate in time, as many of each; the i-th A with
// the i-th B. Returns whether they were paired (and numbers the pairs).
bool pair_by_time(std::vector<Run>& runs) {
  std::vector<Run*> used;
  for (auto& r : runs)
    if (usable(r)) used.push_back(&r);
  std::stable_sort(used.begin(), used.end(), [](const Run* x, const Run* y) {
    return x->metrics->started_wall_ns < y->metrics->started_wall_ns;
  });
  // A B A B and A B B A alike: each two runs in a row, one of each side.
  if (used.size() < 2 || used.size() % 2 != 0) return false;
  for (std::size_t i = 1; i < used.size(); i += 2)
    if (used[i]->side == used[i - 1]->side) return false;
  for (std::size_t i = 0; i < used.size(); ++i) used[i]->pair = static_cast<int>(i / 2) + 1;
  return true;
}

MetricComparison compare_metric(Metric m, const std::vector<const Run*>& a,
                                const std::vector<const Run*>& b, bool paired, double confidence) {
  MetricComparison mc;
  mc.metric = m;
  bool missing = false;
  for (const auto* r : a) {
    if (const auto& v = (*r->metrics)[m])
      mc.a.push_back(*v);
    else
      missing = true;
  }
  for (const auto* r : b) {
    if (const auto& v = (*r->metrics)[m])
      mc.b.push_back(*v);
    else
      missing = true;
  }
  if (!mc.a.empty()) mc.median_a = median(mc.a);
  if (!mc.b.empty()) mc.median_b = median(mc.b);
  if (mc.a.empty() && mc.b.empty()) {
    mc.note = "not measured";
    return mc;
  }
  if (missing) {
    mc.note = "not measured in every run";
    return mc;
  }
  if (mc.a.size() < kMinRuns || mc.b.size() < kMinRuns) {
    mc.note = "too few runs";
    return mc;
  }
  const auto zero = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
  };
  if (zero(mc.a) && zero(mc.b)) {
    mc.note = "none in any run";
    return mc;
  }
  // A ratio of near-nothing (0.1% of PSI against 0.3%) is noise dressed as a large effect.
  const double floor = info(m).ratio_floor;
  const auto above = [&](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [&](double x) { return x > floor && std::isfinite(x); });
  };
  if (!above(mc.a) || !above(mc.b)) {
    mc.note = floor > 0
                  ? fmt::format("at or below {} in some runs: no ratio", format_metric(m, floor))
                  : "zero in some runs: no ratio";
    return mc;
  }
  auto e = paired ? paired_ratio(mc.a, mc.b, confidence) : unpaired_ratio(mc.a, mc.b, confidence);
  if (!e) {
    mc.note = e.error().message();
    return mc;
  }
  mc.estimate = *e;
  const auto& mi = info(m);
  mc.verdict = verdict(*e, mi.higher_is_better, mi.higher_is_better ? "higher" : "lower",
                       mi.higher_is_better ? "lower" : "higher");
  return mc;
}

}  // namespace

Result<Comparison> compare_runs(std::vector<Run> runs, const CompareOptions& options) {
  Comparison c;
  c.label_a = options.label_a;
  c.label_b = options.label_b;
  c.confidence = options.confidence;
  for (const auto& r : runs)
    if (r.side != 'A' && r.side != 'B') return fail("a run's side is not A or B", r.recording);
  for (auto& r : runs)
    if (r.excluded.empty()) r.excluded = exclusion(r);
  if (options.paired_by_round) {
    pair_by_round(runs);
    c.paired = true;
  } else {
    c.paired = pair_by_time(runs);
    // Said only of runs that could have been paired: too few usable runs are said below.
    const auto usable_runs = std::count_if(runs.begin(), runs.end(), usable);
    if (!c.paired && usable_runs >= 2)
      c.notes.push_back(
          "the runs of A and B were not made in turn (A B A B or A B B A, as many of each): "
          "compared "
          "as independent samples, which needs more runs for the same resolution than pairs run "
          "back to back");
  }
  std::vector<const Run*> a, b;
  {
    std::vector<const Run*> used;
    for (const auto& r : runs)
      if (usable(r)) used.push_back(&r);
    if (c.paired)
      std::stable_sort(used.begin(), used.end(),
                       [](const Run* x, const Run* y) { return x->pair < y->pair; });
    for (const auto* r : used) (r->side == 'A' ? a : b).push_back(r);
  }
  c.used_a = static_cast<int>(a.size());
  c.used_b = static_cast<int>(b.size());

  // The job's rate when every run printed one, else wall time.
  const bool all_rates =
      !a.empty() && !b.empty() &&
      std::all_of(a.begin(), a.end(),
                  [](const Run* r) { return (*r->metrics)[Metric::kRate].has_value(); }) &&
      std::all_of(b.begin(), b.end(),
                  [](const Run* r) { return (*r->metrics)[Metric::kRate].has_value(); });
  c.primary = all_rates ? Metric::kRate : Metric::kWall;
  if (!all_rates && (!a.empty() || !b.empty()))
    c.notes.push_back(
        "not every run printed a rate (tqdm's it/s, or --rate-regex): wall time is compared "
        "instead");
  for (const auto* r : a) {
    if (!r->metrics->rate_unit.empty()) {
      c.rate_unit = r->metrics->rate_unit;
      break;
    }
  }
  for (const auto& mi : metric_table()) {
    auto mc = compare_metric(mi.metric, a, b, c.paired, c.confidence);
    if (mc.note == "not measured" && mi.metric != c.primary) continue;
    c.metrics.push_back(std::move(mc));
  }
  c.runs = std::move(runs);

  const int failed = static_cast<int>(std::count_if(
      c.runs.begin(), c.runs.end(), [](const Run& r) { return !r.warmup && !r.excluded.empty(); }));
  if (c.used_a < kMinRuns || c.used_b < kMinRuns) {
    c.verdict_text = fmt::format(
        "no verdict: {} usable run{} of A and {} of B{}; a confidence interval needs at least {} "
        "of each",
        c.used_a, c.used_a == 1 ? "" : "s", c.used_b,
        failed > 0 ? fmt::format(" ({} left out)", failed) : "", kMinRuns);
    return c;
  }
  const auto primary =
      std::find_if(c.metrics.begin(), c.metrics.end(),
                   [&](const MetricComparison& m) { return m.metric == c.primary; });
  if (primary == c.metrics.end() || !primary->estimate) {
    c.verdict_text = fmt::format("no verdict: {} {}", info(c.primary).label,
                                 primary == c.metrics.end() ? "was not measured" : primary->note);
    return c;
  }
  c.verdict = verdict(*primary->estimate, info(c.primary).higher_is_better, "faster", "slower");
  c.verdict_text = c.verdict->text;
  if (c.verdict->kind == Verdict::Kind::kNoEffect)
    c.verdict_text += "; " + more_runs_text(*c.verdict, std::min(c.used_a, c.used_b));
  return c;
}

json to_json(const Comparison& c) {
  json metrics = json::array();
  for (const auto& m : c.metrics) {
    const auto& mi = info(m.metric);
    json x{{"id", mi.id},
           {"label", mi.label},
           {"unit", m.metric == Metric::kRate ? c.rate_unit : std::string(mi.unit)},
           {"higher_is_better", mi.higher_is_better},
           {"a", m.a},
           {"b", m.b},
           {"median_a", m.median_a ? json(*m.median_a) : json(nullptr)},
           {"median_b", m.median_b ? json(*m.median_b) : json(nullptr)}};
    if (m.estimate) {
      x["ratio"] = m.estimate->ratio;
      x["low"] = m.estimate->low;
      x["high"] = m.estimate->high;
      x["achieved_confidence"] = m.estimate->achieved;
      x["method"] = method_name(m.estimate->method);
    }
    if (m.verdict)
      x["verdict"] = m.verdict->kind == Verdict::Kind::kBetter  ? "better"
                     : m.verdict->kind == Verdict::Kind::kWorse ? "worse"
                                                                : "no-effect";
    if (!m.note.empty()) x["note"] = m.note;
    metrics.push_back(std::move(x));
  }
  json runs = json::array();
  for (const auto& r : c.runs) {
    json x{{"side", std::string(1, r.side)},
           {"pair", r.pair},
           {"warmup", r.warmup},
           {"recording", r.recording},
           {"used", r.excluded.empty() && r.metrics.has_value()}};
    if (!r.log.empty()) x["log"] = r.log;
    if (!r.excluded.empty()) x["excluded"] = r.excluded;
    if (r.metrics) {
      x["exit_status"] = r.metrics->exit_status ? json(*r.metrics->exit_status) : json(nullptr);
      json values = json::object();
      for (const auto& mi : metric_table())
        if (const auto& v = (*r.metrics)[mi.metric]) values[std::string(mi.id)] = *v;
      x["metrics"] = std::move(values);
    }
    runs.push_back(std::move(x));
  }
  json verdict_json{{"text", c.verdict_text}, {"metric", info(c.primary).id}};
  if (c.verdict) {
    verdict_json["kind"] = c.verdict->kind == Verdict::Kind::kBetter  ? "b-better"
                           : c.verdict->kind == Verdict::Kind::kWorse ? "b-worse"
                                                                      : "no-effect";
    verdict_json["effect"] = c.verdict->effect;
    verdict_json["effect_low"] = c.verdict->effect_low;
    verdict_json["effect_high"] = c.verdict->effect_high;
    if (c.verdict->kind == Verdict::Kind::kNoEffect) {
      verdict_json["resolution"] = c.verdict->resolution;
      verdict_json["pairs_for_resolution"] =
          c.verdict->pairs_for_resolution ? json(*c.verdict->pairs_for_resolution) : json(nullptr);
    }
  } else {
    verdict_json["kind"] = "too-few-runs";
  }
  const auto primary =
      std::find_if(c.metrics.begin(), c.metrics.end(),
                   [&](const MetricComparison& m) { return m.metric == c.primary; });
  json out{{"schema", "dltune.compare/1"},
           {"a", c.label_a},
           {"b", c.label_b},
           {"paired", c.paired},
           {"confidence", c.confidence},
           {"used_a", c.used_a},
           {"used_b", c.used_b},
           {"primary", info(c.primary).id},
           {"verdict", std::move(verdict_json)},
           {"metrics", std::move(metrics)},
           {"runs", std::move(runs)},
           {"notes", c.notes}};
  if (primary != c.metrics.end() && primary->estimate) {
    out["method"] = method_name(primary->estimate->method);
    out["method_text"] = method_text(primary->estimate->method);
  }
  return out;
}

std::string render_text(const Comparison& c) {
  std::string out = fmt::format("A: {}\nB: {}\n", c.label_a, c.label_b);
  const auto primary =
      std::find_if(c.metrics.begin(), c.metrics.end(),
                   [&](const MetricComparison& m) { return m.metric == c.primary; });
  if (c.paired)
    out += fmt::format("{} pair{} run back to back", c.used_a, c.used_a == 1 ? "" : "s");
  else
    out += fmt::format("{} run{} of A and {} of B, independent", c.used_a, c.used_a == 1 ? "" : "s",
                       c.used_b);
  if (primary != c.metrics.end() && primary->estimate)
    out += fmt::format("; {:g}% interval: {}", c.confidence * 100,
                       method_text(primary->estimate->method));
  out += "\n\n";
  out += fmt::format("  {:<20} {:>14} {:>14} {:>7}  {}\n", "", "A (median)", "B (median)", "B/A",
                     fmt::format("{:g}% interval", c.confidence * 100));
  for (const auto& m : c.metrics) {
    const auto value = [&](const std::optional<double>& v) {
      return v ? format_metric(m.metric, *v, c.rate_unit) : std::string("-");
    };
    std::string ratio = "-", interval = m.note;
    if (m.estimate) {
      ratio = fmt::format("{:.3f}", m.estimate->ratio);
      interval = fmt::format("{:.3f}\u2013{:.3f}", m.estimate->low, m.estimate->high);
      if (m.verdict && m.verdict->kind != Verdict::Kind::kNoEffect) interval += "  *";
    }
    out += fmt::format("  {:<20} {:>14} {:>14} {:>7}  {}\n",
                       std::string(info(m.metric).label) + (m.metric == c.primary ? " (1)" : ""),
                       value(m.median_a), value(m.median_b), ratio, interval);
  }
  out += "  (1) the verdict's metric; * the interval excludes 1\n\n";
  out += fmt::format("Verdict ({}): {}\n", info(c.primary).label, c.verdict_text);
  bool header = false;
  for (const auto& r : c.runs) {
    if (r.warmup || r.excluded.empty()) continue;
    if (!header) out += "\nLeft out:\n";
    header = true;
    out += fmt::format("  {} {}{}: {}{}\n", r.side, r.recording,
                       r.pair > 0 ? fmt::format(" (round {})", r.pair) : "", r.excluded,
                       r.log.empty() ? "" : fmt::format("; its output is in {}", r.log));
  }
  for (const auto& n : c.notes) out += "\nnote: " + n + "\n";
  return out;
}

}  // namespace dltune::bench

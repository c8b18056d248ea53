#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <utility>

#include <fmt/core.h>

namespace dltune::bench {
namespace {

// Rank intervals sort every Walsh average or difference: past this many (16 MiB of doubles) the
// t interval is used instead, which at such sample sizes is as good.
constexpr std::size_t kMaxRankPoints = std::size_t{1} << 21;
constexpr int kMaxPairs = 10000;

// ---- Estimates -----------------------------------------------------------------------------

struct Moments {
  double mean = 0, var = 0;  // var: the sample variance (n - 1)
};

Moments moments(const std::vector<double>& v) {
  Moments mo;
  for (double x : v) mo.mean += x;
  mo.mean /= static_cast<double>(v.size());
  for (double x : v) mo.var += (x - mo.mean) * (x - mo.mean);
  mo.var /= static_cast<double>(v.size() - 1);
  return mo;
}

double sorted_median(const std::vector<double>& v) {
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

std::optional<Error> check_confidence(double confidence) {
  if (confidence > 0.5 && confidence < 1) return std::nullopt;
  return Error{"the confidence must lie between 0.5 and 1 (both excluded):",
               fmt::format("{}", confidence)};
}

std::optional<Error> check_values(const std::vector<double>& v, const char* side) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || !(v[i] > 0)) {
      return Error{"every value must be a finite number above 0, not",
                   fmt::format("{} run {}: {}", side, i + 1, v[i])};
    }
  }
  return std::nullopt;
}

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](double x) { return std::log(x); });
  return out;
}

// The interval [k-th smallest, k-th largest] of the sorted points, and their median. Ties (values
// logged to a few digits) repeat points; the closed interval then covers at least as often.
void rank_interval(std::vector<double> points, int k, double& est, double& lo, double& hi) {
  std::sort(points.begin(), points.end());
  est = sorted_median(points);
  lo = points[static_cast<std::size_t>(k) - 1];
  hi = points[points.size() - static_cast<std::size_t>(k)];
}

void set_ratios(RatioEstimate& e, double est, double lo, double hi) {
  e.ratio = std::exp(est);
  e.low = std::exp(lo);
  e.high = std::exp(hi);
}

// ---- Words ---------------------------------------------------------------------------------

// A fraction as a percentage: no decimals at 10 % and above (after rounding), one below.
std::string percent(double x) {
  const double v = std::abs(100 * x);
  if (std::round(v * 10) / 10 >= 10) return fmt::format("{:.0f}%", v);
  return fmt::format("{:.1f}%", v);
}

std::string signed_percent(double x) {
  std::string magnitude = percent(x);
  if (magnitude == "0.0%") return magnitude;
  return (x < 0 ? "\u2212" : "+") + magnitude;
}

}  // namespace

const char* method_name(Method m) {
  switch (m) {
    case Method::kSignedRank:
      return "signed-rank";
    case Method::kStudentT:
      return "student-t";
    case Method::kMannWhitney:
      return "mann-whitney";
    case Method::kWelchT:
      return "welch-t";
  }
  return "unknown";
}

std::string method_text(Method m) {
  switch (m) {
    case Method::kSignedRank:
      return "Wilcoxon signed-rank interval on the paired ratios (Hodges\u2013Lehmann estimate; "
             "distribution-free)";
    case Method::kStudentT:
      return "Student-t interval on the mean log of the paired ratios (too few pairs for a "
             "distribution-free interval; assumes roughly log-normal noise)";
    case Method::kMannWhitney:
      return "Mann\u2013Whitney interval on the ratios of independent runs (Hodges\u2013Lehmann "
             "estimate; distribution-free)";
    case Method::kWelchT:
      return "Welch t interval on the difference of mean logs of independent runs (assumes "
             "roughly log-normal noise)";
  }
  return "unknown method";
}

Result<RatioEstimate> paired_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                   double confidence) {
  if (a.size() != b.size()) {
    return fail("paired runs need as many B runs as A runs, not",
                fmt::format("{} A and {} B", a.size(), b.size()));
  }
  if (a.size() < 3) {
    return fail("no confidence interval can be given from fewer than 3 pairs; got",
                fmt::format("{}", a.size()));
  }
  for (const auto& err : {check_values(a, "A"), check_values(b, "B"), check_confidence(confidence)})
    if (err) return tl::unexpected(*err);

  const int n = static_cast<int>(a.size());
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = std::log(b[i]) - std::log(a[i]);
  const Moments mo = moments(d);

  RatioEstimate e;
  e.confidence = confidence;
  e.paired = true;
  e.n_a = e.n_b = n;
  e.log_sd = std::sqrt(mo.var);
  const std::size_t walsh = a.size() * (a.size() + 1) / 2;
  const RankDepth depth = walsh <= kMaxRankPoints ? signed_rank_depth(n, confidence) : RankDepth{};
  double est = 0, lo = 0, hi = 0;
  if (depth.k >= 1) {
    std::vector<double> w;
    w.reserve(walsh);
    for (std::size_t i = 0; i < d.size(); ++i)
      for (std::size_t j = i; j < d.size(); ++j) w.push_back((d[i] + d[j]) / 2);
    rank_interval(std::move(w), depth.k, est, lo, hi);
    e.method = Method::kSignedRank;
    e.achieved = depth.achieved;
  } else {
    const double half = t_quantile((1 + confidence) / 2, n - 1) * e.log_sd / std::sqrt(n);
    est = mo.mean;
    lo = est - half;
    hi = est + half;
    e.method = Method::kStudentT;
    e.achieved = confidence;
  }
  set_ratios(e, est, lo, hi);
  return e;
}

Result<RatioEstimate> unpaired_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                     double confidence) {
  if (a.size() < 3 || b.size() < 3) {
    return fail("no confidence interval can be given from fewer than 3 runs on each side; got",
                fmt::format("{} A and {} B", a.size(), b.size()));
  }
  for (const auto& err : {check_values(a, "A"), check_values(b, "B"), check_confidence(confidence)})
    if (err) return tl::unexpected(*err);

  const std::vector<double> la = logs(a), lb = logs(b);
  const Moments ma = moments(la), mb = moments(lb);
  const double m = static_cast<double>(a.size()), n = static_cast<double>(b.size());

  RatioEstimate e;
  e.confidence = confidence;
  e.paired = false;
  e.n_a = static_cast<int>(a.size());
  e.n_b = static_cast<int>(b.size());
  e.log_sd = std::sqrt(((m - 1) * ma.var + (n - 1) * mb.var) / (m + n - 2));
  const std::size_t diffs = a.size() * b.size();
  const RankDepth depth =
      diffs <= kMaxRankPoints ? mann_whitney_depth(e.n_a, e.n_b, confidence) : RankDepth{};
  double est = 0, lo = 0, hi = 0;
  if (depth.k >= 1) {
    std::vector<double> diff;
    diff.reserve(diffs);
    for (double x : la)
      for (double y : lb) diff.push_back(y - x);
    rank_interval(std::move(diff), depth.k, est, lo, hi);
    e.method = Method::kMannWhitney;
    e.achieved = depth.achieved;
  } else {
    // Welch (1947); Satterthwaite (1946) for the degrees of freedom. Both samples constant:
    // no spread to estimate, and the interval is the point.
    const double va = ma.var / m, vb = mb.var / n;
    const double spread = (va * va / (m - 1) + vb * vb / (n - 1));
    const double df = spread > 0 ? (va + vb) * (va + vb) / spread : m + n - 2;
    const double half = t_quantile((1 + confidence) / 2, df) * std::sqrt(va + vb);
    est = mb.mean - ma.mean;
    lo = est - half;
    hi = est + half;
    e.method = Method::kWelchT;
    e.achieved = confidence;
  }
  set_ratios(e, est, lo, hi);
  return e;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*std::max_element(v.begin(), mid) + *mid) / 2;
}

std::optional<int> pairs_needed(double log_sd, double resolution, double confidence) {
  if (!(log_sd >= 0) || !std::isfinite(log_sd) || !(resolution > 0) || !std::isfinite(resolution) ||
      !(confidence > 0 && confidence < 1)) {
    return std::nullopt;
  }
  if (log_sd == 0) return 3;
  const double target = std::log1p(resolution);
  const double p = (1 + confidence) / 2;
  // t_{n-1} / sqrt(n) falls as n grows, so the smallest n that fits is found by bisection.
  const auto fits = [&](int n) { return t_quantile(p, n - 1) * log_sd / std::sqrt(n) <= target; };
  if (fits(3)) return 3;
  if (!fits(kMaxPairs)) return std::nullopt;
  int lo = 3, hi = kMaxPairs;  // !fits(lo), fits(hi)
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

Verdict verdict(const RatioEstimate& e, bool higher_is_better, const std::string& better_word,
                const std::string& worse_word) {
  Verdict v;
  if (higher_is_better) {
    v.effect = e.ratio - 1;
    v.effect_low = e.low - 1;
    v.effect_high = e.high - 1;
  } else {
    v.effect = 1 / e.ratio - 1;
    v.effect_low = 1 / e.high - 1;
    v.effect_high = 1 / e.low - 1;
  }
  if (v.effect_low > 0) {
    v.kind = Verdict::Kind::kBetter;
    v.text = fmt::format("B is {} by {} ({}\u2013{})", better_word, percent(v.effect),
                         percent(v.effect_low), percent(v.effect_high));
  } else if (v.effect_high < 0) {
    v.kind = Verdict::Kind::kWorse;
    v.text = fmt::format("B is {} by {} ({}\u2013{})", worse_word, percent(v.effect),
                         percent(v.effect_high), percent(v.effect_low));
  } else {
    v.kind = Verdict::Kind::kNoEffect;
    v.text = fmt::format("no measurable effect at this noise level ({}\u2013{})",
                         signed_percent(v.effect_low), signed_percent(v.effect_high));
    // The slack keeps 0.05 (stored as 0.05000000000000004) at 5 %.
    v.resolution = std::ceil(std::max(std::abs(v.effect), 0.01) * 100 - 1e-9) / 100;
    // Unpaired runs: the SD of a difference of two runs is sqrt(2) times that of one run, and
    // the pairs formula then gives runs per side (slightly more than needed: its df is n - 1,
    // Welch's nearer 2n - 2).
    const double sd = e.paired ? e.log_sd : std::numbers::sqrt2 * e.log_sd;
    v.pairs_for_resolution = pairs_needed(sd, v.resolution, e.confidence);
  }
  return v;
}

std::string more_runs_text(const Verdict& v, int pairs_so_far) {
  if (v.kind != Verdict::Kind::kNoEffect) return {};
  if (!v.pairs_for_resolution) {
    return "an effect this small cannot be resolved in a practical number of runs";
  }
  const int more = std::max(1, *v.pairs_for_resolution - pairs_so_far);
  return fmt::format("about {} more {} per side would resolve \u00b1{}%", more,
                     more == 1 ? "run" : "runs", std::lround(v.resolution * 100));
}

}  // namespace dltune::bench

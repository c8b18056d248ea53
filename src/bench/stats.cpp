#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <utility>

#include <fmt/format.h>

namespace dltune::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Rank intervals sort every Walsh average or difference: past this many (16 MiB of doubles) the
// t interval is used instead, which at such sample sizes is as good.
constexpr std::size_t kMaxRankPoints = std::size_t{1} << 21;
constexpr int kMaxExactSignedRank = 50;
// Steps of the exact Mann–Whitney recursion, (m+1)(n+1)(mn/2+1): a few hundredths of a second.
constexpr double kMaxExactMannWhitneyWork = 3e7;
constexpr int kMaxPairs = 10000;

// ---- Distributions -------------------------------------------------------------------------

double log_of(double x, double one_minus_x) {
  return x < 0.5 ? std::log(x) : std::log1p(-one_minus_x);
}

// The continued fraction 1/(1 + d1/(1 + d2/(1 + ...))) of the regularized incomplete beta
// function (DLMF 8.17.22), by the modified Lentz method (Press et al., Numerical Recipes, 3rd ed.,
// §5.2). It converges quickly for x < (a + 1)/(a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double f = kTiny, c = kTiny, d = 0;
  for (int j = 1; j <= 20000; ++j) {
    double num = 1;  // the numerator of the j-th step: 1, then d_1, d_2, ...
    if (j > 1) {
      const int i = j - 1;
      const double m = i / 2;
      num = i % 2 == 1 ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                       : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    }
    d = 1 + num * d;
    d = 1 / (std::abs(d) < kTiny ? kTiny : d);
    c = 1 + num / c;
    if (std::abs(c) < kTiny) c = kTiny;
    f *= c * d;
    if (std::abs(c * d - 1) < 1e-15) break;
  }
  return f;
}

// I_x(a, b), with y = 1 - x passed separately so that neither loses digits near 1.
double incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const double front = std::exp(a * log_of(x, y) + b * log_of(y, x) + std::lgamma(a + b) -
                                std::lgamma(a) - std::lgamma(b));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, y) / b;
}

// P(T > t) for t >= 0: I_{df/(df+t²)}(df/2, 1/2) / 2 (Abramowitz & Stegun 26.7.1 with 26.5.27).
double t_upper(double t, double df) {
  if (std::isinf(t)) return 0;
  const double t2 = t * t;
  return 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

double t_density(double t, double df) {
  return std::exp(std::lgamma((df + 1) / 2) - std::lgamma(df / 2) -
                  0.5 * std::log(df * std::numbers::pi) - (df + 1) / 2 * std::log1p(t * t / df));
}

double normal_upper(double z) {
  return 0.5 * std::erfc(z / std::numbers::sqrt2);
}
double normal_cdf(double z) {
  return normal_upper(-z);
}
double normal_density(double z) {
  return std::exp(-z * z / 2) / std::sqrt(2 * std::numbers::pi);
}

// The t > 0 with upper(t) = q (0 < q < 0.5), for a decreasing tail with this density: Newton's
// method kept inside a bisection bracket, so that it converges from any start.
template <class Upper, class Density>
double invert_upper_tail(double q, double guess, Upper upper, Density density) {
  double lo = 0, hi = std::max(2 * guess, 1.0);
  while (upper(hi) > q && hi < 1e300) {
    lo = hi;
    hi *= 2;
  }
  double t = guess > lo && guess < hi ? guess : (lo + hi) / 2;
  for (int i = 0; i < 300; ++i) {
    const double f = upper(t) - q;
    if (f == 0) return t;
    (f > 0 ? lo : hi) = t;
    double next = t + f / density(t);
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (std::abs(next - t) <= 1e-15 * t) return next;
    t = next;
  }
  return t;
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return p <= 0 ? -kInf : p >= 1 ? kInf : kNaN;
  if (p == 0.5) return 0;
  const double q = std::min(p, 1 - p);
  const double z = invert_upper_tail(q, std::sqrt(-2 * std::log(q)), normal_upper, normal_density);
  return p < 0.5 ? -z : z;
}

// ---- Rank statistics -----------------------------------------------------------------------

// The largest k whose interval [k-th smallest, k-th largest] still covers with probability
// 1 - 2 P(T <= k - 1) >= confidence, for T the rank statistic under the null hypothesis
// (Hollander & Wolfe, Nonparametric Statistical Methods, 2nd ed., §3.3 and §4.3; Bauer 1972,
// JASA 67, "Constructing confidence sets using rank statistics"). cdf[t] = P(T <= t).
RankDepth depth_from_cdf(const std::vector<double>& cdf, double confidence) {
  RankDepth depth{0, 1 - 2 * cdf[0]};
  for (std::size_t k = 1; k <= cdf.size(); ++k) {
    const double cover = 1 - 2 * cdf[k - 1];
    // Slack for rounding: a coverage that is exactly the one asked for counts.
    if (cover < confidence - 1e-12) break;
    depth = RankDepth{static_cast<int>(k), cover};
  }
  return depth;
}

// The same with T approximately normal (mean, sd), with continuity correction:
// P(T <= k - 1) = Phi((k - 1/2 - mean) / sd).
RankDepth depth_from_normal(double mean, double sd, double confidence) {
  const double z = normal_quantile((1 + confidence) / 2);
  const double k = std::floor(mean + 0.5 - z * sd);
  const auto cover = [&](double kk) { return 1 - 2 * normal_cdf((kk - 0.5 - mean) / sd); };
  if (k < 1) return RankDepth{0, cover(1)};
  return RankDepth{static_cast<int>(k), cover(k)};
}

// P(T <= t) for the signed-rank statistic of n untied values: each rank r joins the sum with
// probability 1/2, so the distribution is built one rank at a time (in probabilities, not counts,
// so that nothing overflows; for n <= 50 the values are exact dyadic fractions).
std::vector<double> signed_rank_cdf(int n) {
  const std::size_t top = static_cast<std::size_t>(n) * (n + 1) / 2;
  std::vector<double> p(top + 1, 0.0);
  p[0] = 1;
  for (std::size_t r = 1; r <= static_cast<std::size_t>(n); ++r) {
    for (std::size_t s = r * (r + 1) / 2; s >= r; --s) p[s] = 0.5 * (p[s] + p[s - r]);
    for (std::size_t s = 0; s < r; ++s) p[s] *= 0.5;
  }
  for (std::size_t s = 1; s <= top; ++s) p[s] += p[s - 1];
  return p;
}

// P(U <= u) for u <= mn/2, U the Mann–Whitney count of pairs with the second sample's value above
// the first's. The largest of i + j values is from the second sample with probability j/(i+j),
// and then exceeds all i of the first: P_ij(u) = j/(i+j) P_i,j-1(u-i) + i/(i+j) P_i-1,j(u)
// (Mann & Whitney 1947). U's distribution is symmetric about mn/2 and the same for (n, m), so
// the lower half suffices and the layers run over the smaller sample.
std::vector<double> mann_whitney_cdf(int m, int n) {
  const int big = std::max(m, n), small = std::min(m, n);
  const std::size_t width = static_cast<std::size_t>(big) * small / 2 + 1;
  std::vector<double> prev((small + 1) * width, 0.0), cur(prev.size(), 0.0);
  for (int j = 0; j <= small; ++j) prev[j * width] = 1;  // no first-sample values: U = 0
  for (int i = 1; i <= big; ++i) {
    std::fill(cur.begin(), cur.end(), 0.0);
    cur[0] = 1;
    for (int j = 1; j <= small; ++j) {
      const double second = static_cast<double>(j) / (i + j), first = 1 - second;
      double* out = &cur[j * width];
      const double* left = &cur[(j - 1) * width];
      const double* up = &prev[j * width];
      for (std::size_t u = 0; u < width; ++u) {
        out[u] = first * up[u] + (u >= static_cast<std::size_t>(i) ? second * left[u - i] : 0);
      }
    }
    std::swap(prev, cur);
  }
  std::vector<double> cdf(prev.begin() + small * width, prev.end());
  for (std::size_t u = 1; u < width; ++u) cdf[u] += cdf[u - 1];
  return cdf;
}

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

double t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  return t >= 0 ? 1 - t_upper(t, df) : t_upper(-t, df);
}

double t_quantile(double p, double df) {
  if (std::isnan(p) || !(df > 0)) return kNaN;
  if (p <= 0 || p >= 1) return p <= 0 ? -kInf : kInf;
  if (p == 0.5) return 0;
  const double z = normal_quantile(std::max(p, 1 - p));
  double t = 0;
  if (df >= 1e5) {
    // The Cornish–Fisher expansion in 1/df (Abramowitz & Stegun 26.7.5): past 1e5 its error is
    // far below 1e-12, while the incomplete beta's log-gamma terms start to lose digits.
    const double z2 = z * z;
    const double g1 = (z2 + 1) * z / 4;
    const double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
    t = z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
  } else {
    const auto upper = [df](double x) { return t_upper(x, df); };
    const auto density = [df](double x) { return t_density(x, df); };
    t = invert_upper_tail(std::min(p, 1 - p), z + (z * z + 1) * z / (4 * df), upper, density);
  }
  return p < 0.5 ? -t : t;
}

RankDepth signed_rank_depth(int n, double confidence, NullDistribution how) {
  if (n < 1 || !(confidence > 0 && confidence < 1)) return {};
  if (how == NullDistribution::kExact ||
      (how == NullDistribution::kAuto && n <= kMaxExactSignedRank)) {
    return depth_from_cdf(signed_rank_cdf(n), confidence);
  }
  const double nn = n;
  return depth_from_normal(nn * (nn + 1) / 4, std::sqrt(nn * (nn + 1) * (2 * nn + 1) / 24),
                           confidence);
}

RankDepth mann_whitney_depth(int m, int n, double confidence, NullDistribution how) {
  if (m < 1 || n < 1 || !(confidence > 0 && confidence < 1)) return {};
  const double mm = m, nn = n;
  const double work = (mm + 1) * (nn + 1) * (mm * nn / 2 + 1);
  if (how == NullDistribution::kExact ||
      (how == NullDistribution::kAuto && work <= kMaxExactMannWhitneyWork)) {
    return depth_from_cdf(mann_whitney_cdf(m, n), confidence);
  }
  return depth_from_normal(mm * nn / 2, std::sqrt(mm * nn * (mm + nn + 1) / 12), confidence);
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
  if (v.empty()) return kNaN;
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

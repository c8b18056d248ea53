#include "bench/distributions.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

namespace dltune::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxExactSignedRank = 50;
// Steps of the exact Mann–Whitney recursion, (m+1)(n+1)(mn/2+1): a few hundredths of a second.
constexpr double kMaxExactMannWhitneyWork = 3e7;

// ---- Student-t and normal ------------------------------------------------------------------

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

}  // namespace

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

}  // namespace dltune::bench

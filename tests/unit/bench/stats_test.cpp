#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dltune::bench::stats_test {
namespace {

// Normal deviates from a fixed-seed mt19937_64 by Box–Muller, written out here because
// std::normal_distribution differs between standard libraries (the engine does not).
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : engine_(seed) {}
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2 * std::log(uniform()));
    const double angle = 2 * std::numbers::pi * uniform();
    spare_ = r * std::sin(angle);
    has_spare_ = true;
    return r * std::cos(angle);
  }

 private:
  // In (0, 1): the top 53 bits, offset by half a step so that log() never sees 0.
  double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1p-53; }

  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// Values around `level` with lognormal noise of this SD on the log scale.
std::vector<double> runs(Noise& noise, int n, double level, double log_sd) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(level * std::exp(log_sd * noise.normal()));
  return v;
}

std::vector<double> times(const std::vector<double>& v, const std::vector<double>& factors) {
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(v[i] * factors[i]);
  return out;
}

// Exhaustive null distributions, independent of the library's recursions.
std::vector<double> brute_signed_rank_cdf(int n) {
  std::vector<double> count(n * (n + 1) / 2 + 1, 0.0);
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    int sum = 0;
    for (int r = 1; r <= n; ++r)
      if (mask & (1u << (r - 1))) sum += r;
    count[sum] += 1;
  }
  for (std::size_t s = 1; s < count.size(); ++s) count[s] += count[s - 1];
  for (double& c : count) c /= static_cast<double>(1u << n);
  return count;
}

std::vector<double> brute_mann_whitney_cdf(int m, int n) {
  std::vector<double> count(m * n + 1, 0.0);
  double total = 0;
  for (unsigned mask = 0; mask < (1u << (m + n)); ++mask) {
    if (__builtin_popcount(mask) != m) continue;  // the bits set are the first sample's places
    int u = 0, first_below = 0;
    for (int place = 0; place < m + n; ++place) {
      if (mask & (1u << place))
        ++first_below;
      else
        u += first_below;
    }
    count[u] += 1;
    total += 1;
  }
  for (std::size_t s = 1; s < count.size(); ++s) count[s] += count[s - 1];
  for (double& c : count) c /= total;
  return count;
}

// The largest k with 1 - 2 cdf[k-1] >= confidence.
RankDepth brute_depth(const std::vector<double>& cdf, double confidence) {
  RankDepth d{0, 1 - 2 * cdf[0]};
  for (std::size_t k = 1; k <= cdf.size() && 1 - 2 * cdf[k - 1] >= confidence; ++k)
    d = RankDepth{static_cast<int>(k), 1 - 2 * cdf[k - 1]};
  return d;
}

TEST(BenchStatsT, QuantileTableValues) {
  // Closed forms for df 1 and 2; the rest from mpmath at 30 digits.
  EXPECT_NEAR(t_quantile(0.975, 1), std::tan(0.475 * std::numbers::pi), 1e-9 * 12.7);
  EXPECT_NEAR(t_quantile(0.975, 2), 0.95 * std::sqrt(2 / (4 * 0.975 * 0.025)), 1e-9 * 4.3);
  EXPECT_NEAR(t_quantile(0.975, 5), 2.5705818356363148, 1e-9);
  EXPECT_NEAR(t_quantile(0.975, 10), 2.2281388519862742, 1e-9);
  EXPECT_NEAR(t_quantile(0.975, 30), 2.0422724563012379, 1e-9);
  EXPECT_NEAR(t_quantile(0.975, 1e6), 1.9599663568141067, 1e-9);
  EXPECT_NEAR(t_quantile(0.995, 4), 4.604094871349992, 1e-9);
  EXPECT_NEAR(t_quantile(0.995, 2.5), 7.1637281389487829, 1e-8);
  EXPECT_NEAR(t_quantile(0.9, 3.3), 1.5983669585600866, 1e-9);
  EXPECT_NEAR(t_quantile(0.999, 1.2), 127.1376883591382, 1e-6);
  // The printed table, three decimals.
  EXPECT_NEAR(t_quantile(0.975, 1), 12.706, 5e-4);
  EXPECT_NEAR(t_quantile(0.975, 2), 4.303, 5e-4);
  EXPECT_NEAR(t_quantile(0.975, 5), 2.571, 5e-4);
  EXPECT_NEAR(t_quantile(0.975, 10), 2.228, 5e-4);
  EXPECT_NEAR(t_quantile(0.975, 30), 2.042, 5e-4);
  EXPECT_NEAR(t_quantile(0.995, 4), 4.604, 5e-4);
  // Non-integer df (Welch) lies between its neighbours.
  const double t75 = t_quantile(0.975, 7.5);
  EXPECT_NEAR(t75, 2.333039626864974, 1e-9);
  EXPECT_LT(t75, t_quantile(0.975, 7));
  EXPECT_GT(t75, t_quantile(0.975, 8));
}

TEST(BenchStatsT, QuantileSymmetryEdgesAndLargeDf) {
  EXPECT_DOUBLE_EQ(t_quantile(0.025, 10), -t_quantile(0.975, 10));
  EXPECT_EQ(t_quantile(0.5, 3), 0);
  EXPECT_TRUE(std::isnan(t_quantile(0.9, 0)));
  EXPECT_TRUE(std::isnan(t_quantile(NAN, 3)));
  EXPECT_EQ(t_quantile(1, 3), INFINITY);
  EXPECT_EQ(t_quantile(0, 3), -INFINITY);
  // Either side of the switch to the Cornish–Fisher expansion at df 1e5 (mpmath values).
  EXPECT_NEAR(t_quantile(0.975, 99999), 1.9599877077718444, 1e-9);
  EXPECT_NEAR(t_quantile(0.975, 100001), 1.9599877072973789, 1e-9);
  EXPECT_NEAR(t_quantile(0.999, 50000), 3.0903953166253841, 1e-9);
}

TEST(BenchStatsT, CdfClosedFormsAndRoundTrip) {
  for (double t : {-30.0, -2.0, -0.3, 0.0, 0.7, 4.0, 250.0}) {
    EXPECT_NEAR(t_cdf(t, 1), 0.5 + std::atan(t) / std::numbers::pi, 1e-13) << t;
    EXPECT_NEAR(t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-13) << t;
  }
  for (double df : {1.0, 1.7, 3.0, 9.5, 29.0, 200.0, 5000.0}) {
    for (double p : {0.001, 0.05, 0.4, 0.6, 0.9, 0.975, 0.9995}) {
      const double t = t_quantile(p, df);
      EXPECT_NEAR(t_cdf(t, df), p, 1e-12 * std::max(1.0, p / (1 - p))) << df << ' ' << p;
    }
  }
}

TEST(BenchStatsSignedRank, ExactDistributionMatchesEnumeration) {
  for (int n : {3, 6, 10, 13}) {
    const auto cdf = brute_signed_rank_cdf(n);
    for (double c : {0.8, 0.9, 0.95, 0.99}) {
      const RankDepth want = brute_depth(cdf, c), got = signed_rank_depth(n, c);
      EXPECT_EQ(got.k, want.k) << n << ' ' << c;
      EXPECT_NEAR(got.achieved, want.achieved, 1e-14) << n << ' ' << c;
    }
  }
}

TEST(BenchStatsSignedRank, SixPairsUseTheWholeRangeOfWalshAverages) {
  EXPECT_EQ(signed_rank_depth(5, 0.95).k, 0);  // 1 - 2/32 < 0.95
  const RankDepth d6 = signed_rank_depth(6, 0.95);
  EXPECT_EQ(d6.k, 1);
  EXPECT_DOUBLE_EQ(d6.achieved, 1 - 2.0 / 64);

  const std::vector<double> a{100, 101, 99, 102, 98, 100};
  const std::vector<double> b{104, 108, 103, 104, 103, 106};
  const auto e = paired_ratio(a, b);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->method, Method::kSignedRank);
  EXPECT_DOUBLE_EQ(e->achieved, 1 - 2.0 / 64);
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < a.size(); ++i) {
    lo = std::min(lo, b[i] / a[i]);
    hi = std::max(hi, b[i] / a[i]);
  }
  EXPECT_NEAR(e->low, lo, 1e-12);
  EXPECT_NEAR(e->high, hi, 1e-12);
  EXPECT_EQ(e->n_a, 6);
  EXPECT_TRUE(e->paired);
}

TEST(BenchStatsSignedRank, TenPairsUseTheNinthWalshAverage) {
  // P(T <= 8) = 25/1024 = 0.0244 for n = 10, P(T <= 9) = 30/1024: k = 9.
  const RankDepth d = signed_rank_depth(10, 0.95);
  EXPECT_EQ(d.k, 9);
  EXPECT_DOUBLE_EQ(d.achieved, 1 - 2 * 25.0 / 1024);
  EXPECT_NEAR(d.achieved, 0.9512, 1e-4);

  Noise noise(10);
  const std::vector<double> a = runs(noise, 10, 50, 0.1);
  const std::vector<double> b = times(a, runs(noise, 10, 1.03, 0.05));
  const auto e = paired_ratio(a, b);
  ASSERT_TRUE(e) << e.error().message();
  std::vector<double> walsh;
  for (int i = 0; i < 10; ++i)
    for (int j = i; j < 10; ++j)
      walsh.push_back((std::log(b[i] / a[i]) + std::log(b[j] / a[j])) / 2);
  std::sort(walsh.begin(), walsh.end());
  ASSERT_EQ(walsh.size(), 55u);
  EXPECT_NEAR(std::log(e->low), walsh[8], 1e-12);
  EXPECT_NEAR(std::log(e->high), walsh[46], 1e-12);
  EXPECT_NEAR(std::log(e->ratio), walsh[27], 1e-12);  // the Hodges–Lehmann median
}

TEST(BenchStatsSignedRank, NormalApproximationMeetsExactAroundFifty) {
  for (int n : {40, 50, 51, 60}) {
    for (double c : {0.9, 0.95, 0.99}) {
      const RankDepth exact = signed_rank_depth(n, c, NullDistribution::kExact);
      const RankDepth approx = signed_rank_depth(n, c, NullDistribution::kNormal);
      // The normal tails are heavier than the exact ones: at 99 % its k is up to 3 lower (out of
      // about 370 at n = 50), a slightly wider interval, never a narrower one by more than 1.
      EXPECT_LE(approx.k - exact.k, 1) << n << ' ' << c;
      EXPECT_LE(exact.k - approx.k, 4) << n << ' ' << c;
      EXPECT_NEAR(exact.achieved, approx.achieved, 0.003) << n << ' ' << c;
      EXPECT_GE(exact.achieved, c);
      EXPECT_GE(approx.achieved, c);
    }
  }
  EXPECT_EQ(signed_rank_depth(50, 0.95).achieved,
            signed_rank_depth(50, 0.95, NullDistribution::kExact).achieved);
  EXPECT_EQ(signed_rank_depth(51, 0.95).achieved,
            signed_rank_depth(51, 0.95, NullDistribution::kNormal).achieved);
}

TEST(BenchStatsMannWhitney, ExactDistributionMatchesEnumeration) {
  for (auto [m, n] : {std::pair{3, 3}, {3, 4}, {4, 4}, {4, 7}, {6, 5}, {8, 8}}) {
    const auto cdf = brute_mann_whitney_cdf(m, n);
    for (double c : {0.8, 0.9, 0.95, 0.99}) {
      const RankDepth want = brute_depth(cdf, c), got = mann_whitney_depth(m, n, c);
      EXPECT_EQ(got.k, want.k) << m << 'x' << n << ' ' << c;
      EXPECT_NEAR(got.achieved, want.achieved, 1e-13) << m << 'x' << n << ' ' << c;
    }
  }
  EXPECT_EQ(mann_whitney_depth(3, 3, 0.95).k, 0);  // 1 - 2/20
  const RankDepth d44 = mann_whitney_depth(4, 4, 0.95);
  EXPECT_EQ(d44.k, 1);
  EXPECT_NEAR(d44.achieved, 1 - 2.0 / 70, 1e-14);
  EXPECT_EQ(mann_whitney_depth(8, 8, 0.95).k, 14);  // the table's critical U is 13
}

TEST(BenchStatsMannWhitney, NormalApproximationNearExactForLargerSamples) {
  for (auto [m, n] : {std::pair{40, 40}, {30, 60}, {80, 80}}) {
    const RankDepth exact = mann_whitney_depth(m, n, 0.95, NullDistribution::kExact);
    const RankDepth approx = mann_whitney_depth(m, n, 0.95, NullDistribution::kNormal);
    EXPECT_LE(std::abs(exact.k - approx.k), 2) << m << 'x' << n;
    EXPECT_NEAR(exact.achieved, approx.achieved, 0.002) << m << 'x' << n;
  }
}

TEST(BenchStatsMannWhitney, IntervalIsTheKthDifference) {
  const std::vector<double> a{10, 11, 9.5, 10.2, 10.8, 9.9};
  const std::vector<double> b{11.5, 11.9, 10.9, 12.4, 11.1};
  const auto e = unpaired_ratio(a, b);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->method, Method::kMannWhitney);
  EXPECT_FALSE(e->paired);
  EXPECT_EQ(e->n_a, 6);
  EXPECT_EQ(e->n_b, 5);
  std::vector<double> diff;
  for (double x : a)
    for (double y : b) diff.push_back(std::log(y / x));
  std::sort(diff.begin(), diff.end());
  const int k = mann_whitney_depth(6, 5, 0.95).k;
  ASSERT_GE(k, 1);
  EXPECT_NEAR(std::log(e->low), diff[k - 1], 1e-12);
  EXPECT_NEAR(std::log(e->high), diff[diff.size() - k], 1e-12);
  EXPECT_NEAR(std::log(e->ratio), (diff[14] + diff[15]) / 2, 1e-12);
  EXPECT_GT(e->low, 1);

  const auto welch = unpaired_ratio({10, 11, 9.5}, {11.5, 11.9, 10.9});
  ASSERT_TRUE(welch);
  EXPECT_EQ(welch->method, Method::kWelchT);
  EXPECT_DOUBLE_EQ(welch->achieved, 0.95);
}

TEST(BenchStatsKnownAnswers, ConstantFivePercentEffect) {
  Noise noise(5);
  const std::vector<double> a = runs(noise, 8, 120, 0.12);
  const std::vector<double> b = times(a, runs(noise, 8, 1.05, 0.002));
  const auto e = paired_ratio(a, b);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->method, Method::kSignedRank);
  EXPECT_NEAR(e->ratio, 1.05, 0.002);
  EXPECT_GT(e->low, 1);
  EXPECT_LE(e->low, e->ratio);
  EXPECT_GE(e->high, e->ratio);
  const Verdict v = verdict(*e, true);
  EXPECT_EQ(v.kind, Verdict::Kind::kBetter);
  EXPECT_EQ(v.text.rfind("B is faster by 5.0% (", 0), 0u) << v.text;
  EXPECT_FALSE(v.pairs_for_resolution);
  EXPECT_EQ(more_runs_text(v, 8), "");
}

TEST(BenchStatsKnownAnswers, NoEffect) {
  // Ratios placed symmetrically about 1: the estimate is 1 and the interval straddles it.
  const std::vector<double> d{-0.15, -0.1, -0.06, -0.02, 0.02, 0.06, 0.1, 0.15};
  Noise noise(7);
  const std::vector<double> a = runs(noise, 8, 300, 0.1);
  std::vector<double> b;
  for (std::size_t i = 0; i < a.size(); ++i) b.push_back(a[i] * std::exp(d[i]));
  const auto e = paired_ratio(a, b);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_NEAR(e->ratio, 1, 1e-9);
  EXPECT_LT(e->low, 1);
  EXPECT_GT(e->high, 1);
  const Verdict v = verdict(*e, true);
  EXPECT_EQ(v.kind, Verdict::Kind::kNoEffect);
  EXPECT_EQ(v.text.rfind("no measurable effect at this noise level (\u2212", 0), 0u) << v.text;
  EXPECT_DOUBLE_EQ(v.resolution, 0.01);
  ASSERT_TRUE(v.pairs_for_resolution);
  EXPECT_GT(*v.pairs_for_resolution, 8);
}

TEST(BenchStatsKnownAnswers, HeavyNoiseWithFourPairsResolvesNothing) {
  Noise noise(30);
  const std::vector<double> a = runs(noise, 4, 10, 0.3);
  const std::vector<double> b = runs(noise, 4, 10.5, 0.3);
  const auto e = paired_ratio(a, b);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->method, Method::kStudentT);
  const Verdict v = verdict(*e, true);
  EXPECT_EQ(v.kind, Verdict::Kind::kNoEffect) << v.text;
  ASSERT_TRUE(v.pairs_for_resolution);
  EXPECT_GT(*v.pairs_for_resolution, 4);
  EXPECT_EQ(v.pairs_for_resolution, pairs_needed(e->log_sd, v.resolution));
  EXPECT_EQ(more_runs_text(v, 4), "about " + std::to_string(*v.pairs_for_resolution - 4) +
                                      " more runs per side would resolve \u00b1" +
                                      std::to_string(std::lround(v.resolution * 100)) + "%");
}

TEST(BenchStatsKnownAnswers, DoublingWithThreePairs) {
  const auto e = paired_ratio({100, 104, 97}, {201, 206, 192});
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->method, Method::kStudentT);
  EXPECT_DOUBLE_EQ(e->achieved, 0.95);
  EXPECT_NEAR(e->ratio, 1.99, 0.01);
  const Verdict v = verdict(*e, true);
  EXPECT_EQ(v.kind, Verdict::Kind::kBetter);
  EXPECT_EQ(v.text.rfind("B is faster by 99% (", 0), 0u) << v.text;
}

TEST(BenchStatsKnownAnswers, LowerIsBetterIsExpressedAsSpeed) {
  const std::vector<double> a{60, 62, 59, 61, 60, 63};
  const std::vector<double> half{30.2, 30.9, 29.4, 30.6, 29.9, 31.4};
  const auto e = paired_ratio(a, half);
  ASSERT_TRUE(e) << e.error().message();
  const Verdict v = verdict(*e, false);
  EXPECT_EQ(v.kind, Verdict::Kind::kBetter);
  EXPECT_DOUBLE_EQ(v.effect, 1 / e->ratio - 1);
  EXPECT_DOUBLE_EQ(v.effect_low, 1 / e->high - 1);
  EXPECT_DOUBLE_EQ(v.effect_high, 1 / e->low - 1);
  EXPECT_LT(v.effect_low, v.effect);
  EXPECT_LT(v.effect, v.effect_high);
  EXPECT_EQ(v.text.rfind("B is faster by 100% (", 0), 0u) << v.text;

  const auto slower = paired_ratio(half, a);  // the wall time doubles: speed halves
  ASSERT_TRUE(slower);
  const Verdict w = verdict(*slower, false);
  EXPECT_EQ(w.kind, Verdict::Kind::kWorse);
  EXPECT_EQ(w.text.rfind("B is slower by 50% (", 0), 0u) << w.text;
}

// The fraction of simulated data sets whose interval holds the true ratio 1.07 (sd 0.1 on the
// logs of each run; paired runs share a per-pair level, which the pairing removes).
struct Coverage {
  double fraction = 0;
  Method method = Method::kStudentT;
  double achieved = 0;
};

Coverage simulate(bool paired, int n, double confidence, std::uint64_t seed) {
  constexpr int kSets = 2000;
  constexpr double kTrue = 1.07;
  Noise noise(seed);
  Coverage c;
  int hits = 0;
  for (int s = 0; s < kSets; ++s) {
    std::vector<double> a, b;
    for (int i = 0; i < n; ++i) {
      const double level = paired ? 100 * std::exp(0.2 * noise.normal()) : 100;
      a.push_back(level * std::exp(0.1 * noise.normal()));
      b.push_back(level * kTrue * std::exp(0.1 * noise.normal()));
    }
    const auto e = paired ? paired_ratio(a, b, confidence) : unpaired_ratio(a, b, confidence);
    if (!e) ADD_FAILURE() << e.error().message();
    if (!e) return c;
    if (e->low <= kTrue && kTrue <= e->high) ++hits;
    c.method = e->method;
    c.achieved = e->achieved;
  }
  c.fraction = static_cast<double>(hits) / kSets;
  return c;
}

TEST(BenchStatsCoverage, SimulatedIntervalsHoldTheTrueRatio) {
  struct Case {
    bool paired;
    int n;
    double confidence;
    Method method;
  };
  const Case cases[] = {
      {true, 3, 0.95, Method::kStudentT},     {true, 6, 0.95, Method::kSignedRank},
      {true, 12, 0.95, Method::kSignedRank},  {true, 3, 0.99, Method::kStudentT},
      {true, 6, 0.99, Method::kStudentT},     {true, 12, 0.99, Method::kSignedRank},
      {false, 4, 0.95, Method::kMannWhitney}, {false, 8, 0.95, Method::kMannWhitney},
      {false, 4, 0.99, Method::kWelchT},      {false, 8, 0.99, Method::kMannWhitney},
  };
  std::uint64_t seed = 1000;
  for (const Case& k : cases) {
    const Coverage c = simulate(k.paired, k.n, k.confidence, ++seed);
    SCOPED_TRACE(std::string(k.paired ? "paired" : "unpaired") + " n=" + std::to_string(k.n) +
                 " at " + std::to_string(k.confidence) + ": " + std::to_string(c.fraction));
    EXPECT_EQ(c.method, k.method);
    // SD of a fraction from 2000 sets: 0.005 at 95 %, 0.002 at 99 %; the bounds are 3 to 4 SD.
    EXPECT_GE(c.fraction, k.confidence - (k.confidence < 0.99 ? 0.02 : 0.01));
    const bool rank = k.method == Method::kSignedRank || k.method == Method::kMannWhitney;
    if (rank) {
      EXPECT_GE(c.achieved, k.confidence);
      EXPECT_NEAR(c.fraction, c.achieved, 0.015);  // exact coverage, not just a lower bound
    } else {
      EXPECT_DOUBLE_EQ(c.achieved, k.confidence);
      EXPECT_LE(c.fraction, k.confidence + 0.02);
    }
  }
}

TEST(BenchStatsBadInput, EachProblemIsNamed) {
  const std::vector<double> ok{1, 2, 3};
  const auto message = [](const Result<RatioEstimate>& r) {
    return r ? std::string("(no error)") : r.error().message();
  };
  EXPECT_NE(message(paired_ratio(ok, {1, 2, 3, 4})).find("as many B runs as A runs"),
            std::string::npos);
  EXPECT_NE(message(paired_ratio({1, 2}, {1, 2})).find("fewer than 3 pairs"), std::string::npos);
  EXPECT_NE(message(paired_ratio(ok, {1, 0, 3})).find("B run 2: 0"), std::string::npos);
  EXPECT_NE(message(paired_ratio({1, 2, -4}, ok)).find("A run 3: -4"), std::string::npos);
  EXPECT_NE(message(paired_ratio(ok, {1, 2, NAN})).find("B run 3: nan"), std::string::npos);
  EXPECT_NE(message(paired_ratio(ok, {1, 2, INFINITY})).find("finite number above 0"),
            std::string::npos);
  EXPECT_NE(message(paired_ratio(ok, ok, 1.5)).find("confidence"), std::string::npos);
  EXPECT_NE(message(paired_ratio(ok, ok, 0.5)).find("confidence"), std::string::npos);
  EXPECT_NE(message(unpaired_ratio(ok, {1, 2})).find("fewer than 3 runs on each side"),
            std::string::npos);
  EXPECT_NE(message(unpaired_ratio({0, 1, 2}, ok)).find("A run 1: 0"), std::string::npos);
  EXPECT_NE(message(unpaired_ratio(ok, ok, 1)).find("confidence"), std::string::npos);
}

TEST(BenchStatsPairsNeeded, SmallestCountThatFits) {
  const auto n = pairs_needed(0.12, 0.05);
  ASSERT_TRUE(n);
  const auto half = [](int k) { return t_quantile(0.975, k - 1) * 0.12 / std::sqrt(k); };
  EXPECT_LE(half(*n), std::log(1.05));
  EXPECT_GT(half(*n - 1), std::log(1.05));
  // mpmath: t(0.975, 25) * 0.12 / sqrt(26) = 0.04847 <= log(1.05) = 0.04879; n = 25 gives 0.04953.
  EXPECT_EQ(*n, 26);
  EXPECT_EQ(pairs_needed(0.12, 1e-5), std::nullopt);
  EXPECT_EQ(pairs_needed(0, 0.01), 3);
  EXPECT_EQ(pairs_needed(NAN, 0.01), std::nullopt);
  EXPECT_EQ(pairs_needed(0.12, 0), std::nullopt);
  EXPECT_EQ(pairs_needed(0.01, 0.5), 3);
  EXPECT_GT(*pairs_needed(0.12, 0.05, 0.99), *n);
}

TEST(BenchStatsVerdict, TextFormatting) {
  RatioEstimate e;
  e.ratio = 1.07, e.low = 1.03, e.high = 1.11;
  EXPECT_EQ(verdict(e, true).text, "B is faster by 7.0% (3.0%\u201311%)");
  EXPECT_EQ(verdict(e, true, "quicker", "slower").text, "B is quicker by 7.0% (3.0%\u201311%)");
  e.ratio = 0.88, e.low = 0.82, e.high = 0.95;
  const Verdict worse = verdict(e, true);
  EXPECT_EQ(worse.kind, Verdict::Kind::kWorse);
  EXPECT_EQ(worse.text, "B is slower by 12% (5.0%\u201318%)");
  e.ratio = 1.005, e.low = 0.98, e.high = 1.03;
  const Verdict none = verdict(e, true);
  EXPECT_EQ(none.kind, Verdict::Kind::kNoEffect);
  EXPECT_EQ(none.text, "no measurable effect at this noise level (\u22122.0%\u2013+3.0%)");
  EXPECT_DOUBLE_EQ(none.resolution, 0.01);
  e.ratio = 1.0004, e.low = 0.9996, e.high = 1.0996;  // 0.04 % rounds to 0.0, 9.96 % to 10
  EXPECT_EQ(verdict(e, true).text, "no measurable effect at this noise level (0.0%\u2013+10%)");
  e.ratio = 1.043, e.low = 0.99, e.high = 1.1;
  EXPECT_DOUBLE_EQ(verdict(e, true).resolution, 0.05);
  e.ratio = 1.05, e.low = 0.99, e.high = 1.1;
  EXPECT_DOUBLE_EQ(verdict(e, true).resolution, 0.05);
  // The interval touching 1 supports no verdict.
  e.ratio = 1.05, e.low = 1, e.high = 1.1;
  EXPECT_EQ(verdict(e, true).kind, Verdict::Kind::kNoEffect);
  // Wall time 0.8x is 25 % faster.
  e.ratio = 0.8, e.low = 0.75, e.high = 0.9;
  EXPECT_EQ(verdict(e, false).text, "B is faster by 25% (11%\u201333%)");
}

TEST(BenchStatsVerdict, MoreRunsText) {
  Verdict v;
  v.pairs_for_resolution = 20;
  EXPECT_EQ(more_runs_text(v, 6), "about 14 more runs per side would resolve \u00b11%");
  EXPECT_EQ(more_runs_text(v, 19), "about 1 more run per side would resolve \u00b11%");
  EXPECT_EQ(more_runs_text(v, 25), "about 1 more run per side would resolve \u00b11%");
  v.resolution = 0.05;
  EXPECT_EQ(more_runs_text(v, 6), "about 14 more runs per side would resolve \u00b15%");
  v.pairs_for_resolution.reset();
  EXPECT_EQ(more_runs_text(v, 6),
            "an effect this small cannot be resolved in a practical number of runs");
}

TEST(BenchStatsMisc, MedianAndNames) {
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_STREQ(method_name(Method::kSignedRank), "signed-rank");
  EXPECT_STREQ(method_name(Method::kStudentT), "student-t");
  EXPECT_STREQ(method_name(Method::kMannWhitney), "mann-whitney");
  EXPECT_STREQ(method_name(Method::kWelchT), "welch-t");
  EXPECT_NE(method_text(Method::kSignedRank).find("Wilcoxon signed-rank"), std::string::npos);
  EXPECT_NE(method_text(Method::kWelchT).find("Welch"), std::string::npos);
}

}  // namespace
}  // namespace dltune::bench::stats_test

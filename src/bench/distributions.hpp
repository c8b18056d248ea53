#pragma once
// The probability distributions behind the intervals in bench/stats.hpp: the Student-t quantile
// and CDF (through the regularized incomplete beta function), and the null distributions of the
// Wilcoxon signed-rank and Mann–Whitney statistics, which set how deep into the sorted Walsh
// averages or differences a rank interval reaches. Kept apart from the estimates because this is
// numerical code with its own sources and tests, which the estimates only call.
// Pure functions: no I/O, no printing.

namespace dltune::bench {

// The Student-t quantile: t_quantile(0.975, df) for a two-sided 95 % interval. df > 0 and need
// not be an integer (Welch). NaN for df <= 0 or NaN; -inf and +inf for p <= 0 and p >= 1.
[[nodiscard]] double t_quantile(double p, double df);
// P(T <= t) for Student's t with df degrees of freedom (what t_quantile inverts).
[[nodiscard]] double t_cdf(double t, double df);

// The depth of a rank interval: it runs from the k-th smallest to the k-th largest of the sorted
// Walsh averages (signed-rank) or differences (Mann–Whitney), and covers the true shift with
// probability `achieved` for continuous data. k == 0: even the widest interval falls short of
// the confidence asked, and `achieved` is that widest interval's coverage.
struct RankDepth {
  int k = 0;
  double achieved = 0;
};
// How the null distribution of the rank statistic is got: kAuto is exact for the signed-rank
// statistic up to n = 50 and for Mann–Whitney while the exact recursion is cheap (m = n = 80
// or so), and the normal approximation with continuity correction beyond.
enum class NullDistribution { kAuto, kExact, kNormal };
[[nodiscard]] RankDepth signed_rank_depth(int n, double confidence,
                                          NullDistribution how = NullDistribution::kAuto);
[[nodiscard]] RankDepth mann_whitney_depth(int m, int n, double confidence,
                                           NullDistribution how = NullDistribution::kAuto);

}  // namespace dltune::bench

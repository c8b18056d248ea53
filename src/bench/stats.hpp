#pragma once
// Statistics for `dltune bench` and `dltune compare`: the ratio B/A of a metric from A/B runs of
// a training job under two host settings, with a confidence interval that claims no more than a
// few noisy runs show (run-to-run noise of a training job is a 10–13 % coefficient of variation).
// Everything is on the log scale, because the effects are multiplicative and the values positive.
// Pure functions: no I/O, no printing.
#include <optional>
#include <string>
#include <vector>

#include "bench/distributions.hpp"
#include "core/error.hpp"

namespace dltune::bench {

enum class Method {
  kSignedRank,   // paired: Hodges–Lehmann median of the Walsh averages of log(b/a), with the
                 // exact Wilcoxon signed-rank interval (normal approximation for n > 50)
  kStudentT,     // paired: mean of log(b/a) with a Student-t interval (when n is too small for a
                 // rank interval to reach the asked confidence, e.g. n = 3..5 at 95 %)
  kMannWhitney,  // unpaired: Hodges–Lehmann shift of the logs (median of all log b_j - log a_i)
                 // with the exact Mann–Whitney interval (normal approximation for large m, n)
  kWelchT,       // unpaired: difference of mean logs with a Welch–Satterthwaite t interval
};
// "signed-rank", "student-t", "mann-whitney", "welch-t"
[[nodiscard]] const char* method_name(Method m);
// One sentence for people.
[[nodiscard]] std::string method_text(Method m);

// The ratio B/A of a metric with its confidence interval. All three numbers are ratios (exp of
// the log-scale estimate and bounds): 1.07 means B is 7 % higher.
struct RatioEstimate {
  double ratio = 1, low = 1, high = 1;
  double confidence = 0.95;  // asked for
  double achieved = 0.95;    // the coverage of a rank interval (>= asked); = asked for t
  Method method = Method::kStudentT;
  bool paired = true;
  int n_a = 0, n_b = 0;  // values used (equal when paired)
  double log_sd = 0;     // sample SD of the log ratios (paired) or the pooled SD of the logs
                         // (unpaired): what sizing more runs uses
};

// a[i] and b[i] ran back to back. Errors when the sizes differ, when fewer than 3 pairs are
// given, when a value is not finite or not > 0 (naming the side and the run, counted from 1), or
// when confidence is not in (0.5, 1). kSignedRank when the exact signed-rank interval can reach
// `confidence` for this n (the widest, [min, max] of the Walsh averages, has coverage 1 - 2/2^n,
// so at 95 % this needs n >= 6), else kStudentT. Past 2^21 Walsh averages (n of about 2000) the
// t interval is used too: the averages would not fit in memory, and at such n it is as good.
[[nodiscard]] Result<RatioEstimate> paired_ratio(const std::vector<double>& a,
                                                 const std::vector<double>& b,
                                                 double confidence = 0.95);
// Independent samples (runs made by hand); needs >= 3 on each side. kMannWhitney when the exact
// interval can reach `confidence` (at 95 % m = n = 4 can: 2/70 < 0.05; m = n = 3 cannot: 2/20)
// and m * n <= 2^21, else kWelchT.
[[nodiscard]] Result<RatioEstimate> unpaired_ratio(const std::vector<double>& a,
                                                   const std::vector<double>& b,
                                                   double confidence = 0.95);

// NaN for an empty vector.
[[nodiscard]] double median(std::vector<double> v);

// How many pairs (in all) make the interval's half-width on the log scale at most
// log(1 + resolution) for a paired design with this log_sd at `confidence`: the smallest n >= 3
// with t_{(1+confidence)/2, n-1} * log_sd / sqrt(n) <= log(1 + resolution). 3 when log_sd is 0;
// nullopt when log_sd is negative or not finite, resolution is not > 0, or more than 10000 pairs
// would be needed.
[[nodiscard]] std::optional<int> pairs_needed(double log_sd, double resolution,
                                              double confidence = 0.95);

// What the estimate says, in words, for a metric where `higher_is_better` (throughput) or not
// (wall time, swap-ins). A lower-is-better metric is expressed as its inverse (a speed): wall
// time 0.8× is "faster by 25%" (1/0.8 - 1), with the interval from 1/high to 1/low.
struct Verdict {
  enum class Kind { kBetter, kWorse, kNoEffect };  // B relative to A
  Kind kind = Kind::kNoEffect;
  // "B is faster by 7.0% (3.0%–11%)", "B is slower by 12% (5.0%–18%)",
  // "no measurable effect at this noise level (−2.0%–+3.0%)": no decimals at 10 % and above,
  // one below; the no-effect bounds are signed in the better direction (+ is better).
  std::string text;
  double effect = 0, effect_low = 0, effect_high = 0;  // in the better direction: +0.07 = 7 %
  // For kNoEffect: the pairs (in all; runs per side when unpaired) that would resolve
  // ±resolution (pairs_needed), and the resolution used: max(|effect|, 0.01) rounded up to a
  // whole percent. nullopt: not practical, or not kNoEffect.
  std::optional<int> pairs_for_resolution;
  double resolution = 0.01;
};
// kBetter or kWorse only when the whole interval lies strictly on one side of 1.
[[nodiscard]] Verdict verdict(const RatioEstimate& e, bool higher_is_better,
                              const std::string& better_word = "faster",
                              const std::string& worse_word = "slower");
// For kNoEffect: "about 14 more runs per side would resolve ±1%" (pairs_for_resolution minus
// pairs_so_far, at least 1), or "an effect this small cannot be resolved in a practical number
// of runs". Empty for kBetter and kWorse.
[[nodiscard]] std::string more_runs_text(const Verdict& v, int pairs_so_far);

}  // namespace dltune::bench

#pragma once
// A and B side by side: per metric the medians, the ratio B/A with its confidence
// interval, and for the primary metric (the job's rate, else wall time) a verdict that the
// interval supports, or "no measurable effect" with the runs it would take to resolve one.
//
// Runs that failed (a non-zero exit, a recording cut off) are listed and left out, never
// averaged in; in a paired design their partner goes too. Fewer than 3 usable runs a side: no
// verdict, and the reason.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/run_metrics.hpp"
#include "bench/stats.hpp"

namespace dltune::bench {

struct Run {
  char side = 'A';  // 'A' or 'B'
  int pair = 0;     // bench: the round (1-based) it ran in; 0: not paired
  bool warmup = false;
  std::string recording;
  std::string log;  // the job's output (bench), for a failed run's reason
  std::optional<RunMetrics> metrics;
  std::string read_error;  // why `metrics` is absent
  std::string excluded;    // why the run is left out; empty when it is used
};

struct MetricComparison {
  Metric metric = Metric::kRate;
  std::vector<double> a, b;  // the values compared (pair order when paired)
  std::optional<double> median_a, median_b;
  std::optional<RatioEstimate> estimate;
  std::optional<Verdict> verdict;
  std::string note;  // why there is no ratio ("zero in some runs", "not measured")
};

struct CompareOptions {
  std::string label_a = "A", label_b = "B";  // what each side is, for people
  double confidence = 0.95;
  // Pair runs by their `pair` number (bench's rounds); otherwise pairs are found from the
  // start times (A and B alternate, as many of each) or the sides are compared unpaired.
  bool paired_by_round = false;
};

struct Comparison {
  std::string label_a, label_b;
  bool paired = false;
  double confidence = 0.95;
  std::vector<Run> runs;                  // every run given, with what happened to it
  std::vector<MetricComparison> metrics;  // in metric_table() order, those measured
  Metric primary = Metric::kRate;
  std::string rate_unit;
  int used_a = 0, used_b = 0;      // usable runs per side (pairs: equal)
  std::optional<Verdict> verdict;  // the primary metric's; nullopt: no verdict possible
  std::string verdict_text;        // the whole sentence, the reason when there is none
  std::vector<std::string> notes;
};

// Runs with side 'A' or 'B' (another side is an error); a side may have none (then no verdict).
[[nodiscard]] Result<Comparison> compare_runs(std::vector<Run> runs, const CompareOptions& options);

// schema dltune.compare/1 (docs/json.md)
[[nodiscard]] nlohmann::json to_json(const Comparison& c);
[[nodiscard]] std::string render_text(const Comparison& c);

}  // namespace dltune::bench

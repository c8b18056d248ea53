// compare_runs on runs made up here: which runs are used, which are left out and why,
// the metric the verdict is on, pairing, and the verdict's words. The statistics themselves are
// tested in stats_test.cpp; the real runs in tests/integration/bench_live_test.cpp.
#include "bench/comparison.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "bench/sides.hpp"
#include "core/json.hpp"

namespace dltune::bench::comparison_test {
namespace {

// A run of `side` with a rate and a wall time; noise that differs from round to round.
Run make_run(char side, int round, double rate, int exit_status = 0, bool finished = true) {
  Run r;
  r.side = side;
  r.pair = round;
  r.recording = std::string(1, side) + "-0" + std::to_string(round) + ".db";
  RunMetrics m;
  m.recording = r.recording;
  m.exit_status = exit_status;
  m.finished = finished;
  m.rate_unit = "it/s";
  m.started_wall_ns = (round * 2 + (side == 'B' ? 1 : 0)) * 1'000'000'000LL;
  if (exit_status == 0) m[Metric::kRate] = rate;
  m[Metric::kWall] = 100.0 / rate;
  m[Metric::kSwapIn] = 0;
  m[Metric::kPsiCpu] = side == 'A' ? 0.2 : 0.4;
  m[Metric::kPeakMemory] = 1e9 + round;
  r.metrics = m;
  return r;
}

// Six rounds, B `effect` times A's rate, with a few percent of noise that is not the same in
// each round.
std::vector<Run> rounds(double effect, int n = 6) {
  const double noise[] = {1.00, 1.03, 0.98, 1.02, 0.97, 1.01, 0.99, 1.04};
  std::vector<Run> runs;
  for (int i = 1; i <= n; ++i) {
    runs.push_back(make_run('A', i, 10 * noise[i % 8]));
    runs.push_back(make_run('B', i, 10 * effect * noise[(i + 3) % 8]));
  }
  return runs;
}

CompareOptions by_round() {
  CompareOptions o;
  o.paired_by_round = true;
  return o;
}

const MetricComparison& metric(const Comparison& c, Metric m) {
  for (const auto& x : c.metrics)
    if (x.metric == m) return x;
  static MetricComparison none;
  return none;
}

TEST(BenchComparison, AClearEffectOnTheRateIsTheVerdict) {
  const auto c = compare_runs(rounds(1.3), by_round());
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->paired);
  EXPECT_EQ(c->primary, Metric::kRate);
  EXPECT_EQ(c->used_a, 6);
  ASSERT_TRUE(c->verdict);
  EXPECT_EQ(c->verdict->kind, Verdict::Kind::kBetter);
  EXPECT_EQ(c->verdict_text.rfind("B is faster by", 0), 0u) << c->verdict_text;
  EXPECT_EQ(c->rate_unit, "it/s");
  const auto& rate = metric(*c, Metric::kRate);
  ASSERT_TRUE(rate.estimate);
  EXPECT_EQ(rate.estimate->method, Method::kSignedRank);
  EXPECT_NEAR(rate.estimate->ratio, 1.3, 0.06);
  // Wall time went down: better for a lower-is-better metric.
  const auto& wall = metric(*c, Metric::kWall);
  ASSERT_TRUE(wall.verdict);
  EXPECT_EQ(wall.verdict->kind, Verdict::Kind::kBetter);
}

TEST(BenchComparison, NoEffectSaysHowManyRunsWouldResolveOne) {
  const auto c = compare_runs(rounds(1.0), by_round());
  ASSERT_TRUE(c && c->verdict);
  EXPECT_EQ(c->verdict->kind, Verdict::Kind::kNoEffect);
  EXPECT_EQ(c->verdict_text.rfind("no measurable effect at this noise level", 0), 0u)
      << c->verdict_text;
  EXPECT_NE(c->verdict_text.find("would resolve"), std::string::npos) << c->verdict_text;
}

TEST(BenchComparison, AFailedRunIsLeftOutWithItsPartnerNeverAveragedIn) {
  auto runs = rounds(1.3);
  runs[3] = make_run('B', 2, 1.0, /*exit_status=*/1);  // round 2's B failed
  const auto c = compare_runs(runs, by_round());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->used_a, 5);
  EXPECT_EQ(c->used_b, 5);
  const auto& rate = metric(*c, Metric::kRate);
  EXPECT_EQ(rate.a.size(), 5u);
  EXPECT_EQ(rate.b.size(), 5u);
  EXPECT_EQ(c->runs[3].excluded, "the job exited with status 1: a failed run is left out");
  EXPECT_EQ(c->runs[2].excluded, "its partner (B, round 2) was left out");
  EXPECT_NE(render_text(*c).find("Left out:"), std::string::npos);
  ASSERT_TRUE(c->verdict);  // five good pairs are still enough
}

TEST(BenchComparison, FewerThanThreeUsableRunsASideGiveNoVerdictAndSayWhy) {
  auto runs = rounds(1.3, 3);
  runs[1] = make_run('B', 1, 1.0, 2);
  const auto c = compare_runs(runs, by_round());
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->verdict);
  EXPECT_EQ(c->verdict_text,
            "no verdict: 2 usable runs of A and 2 of B (2 left out); a confidence interval needs "
            "at least 3 of each");
  EXPECT_EQ(to_json(*c)["verdict"]["kind"], "too-few-runs");
  // A side with no runs at all (a bench stopped in its first run) is the same case.
  const auto only_a = compare_runs({make_run('A', 1, 10)}, by_round());
  ASSERT_TRUE(only_a);
  EXPECT_FALSE(only_a->verdict);
  EXPECT_EQ(only_a->used_b, 0);
}

TEST(BenchComparison, ACutOffRecordingAndWarmUpsAreNotCompared) {
  auto runs = rounds(1.3);
  runs[0] = make_run('A', 1, 10, 0, /*finished=*/false);
  bench::Run warm = make_run('A', 0, 50);
  warm.warmup = true;
  runs.push_back(warm);
  const auto c = compare_runs(runs, by_round());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->used_a, 5);
  EXPECT_NE(c->runs[0].excluded.find("cut off"), std::string::npos);
  EXPECT_EQ(c->runs.back().excluded, "warm-up run");
}

TEST(BenchComparison, WithoutARateInEveryRunTheVerdictIsOnWallTime) {
  auto runs = rounds(1.3);
  (*runs[5].metrics)[Metric::kRate].reset();
  const auto c = compare_runs(runs, by_round());
  ASSERT_TRUE(c && c->verdict);
  EXPECT_EQ(c->primary, Metric::kWall);
  EXPECT_EQ(c->verdict->kind, Verdict::Kind::kBetter);
  EXPECT_EQ(metric(*c, Metric::kRate).note, "not measured in every run");
  ASSERT_FALSE(c->notes.empty());
  EXPECT_NE(c->notes.front().find("wall time is compared instead"), std::string::npos);
}

TEST(BenchComparison, NothingAndNearNothingGetNoRatio) {
  const auto c = compare_runs(rounds(1.3), by_round());
  ASSERT_TRUE(c);
  EXPECT_EQ(metric(*c, Metric::kSwapIn).note, "none in any run");
  // PSI of 0.2 % against 0.4 % would be "x2": below the floor of 1 %, no ratio.
  EXPECT_FALSE(metric(*c, Metric::kPsiCpu).estimate);
  EXPECT_EQ(metric(*c, Metric::kPsiCpu).note, "at or below 1.00% in some runs: no ratio");
  // Metrics no run measured (no GPU here) are not listed at all.
  EXPECT_FALSE(std::any_of(c->metrics.begin(), c->metrics.end(),
                           [](const MetricComparison& m) { return m.metric == Metric::kGpuUtil; }));
}

TEST(BenchComparison, RunsMadeInTurnArePairedByTimeOthersCompareIndependently) {
  // By hand: no round numbers; A B, B A, A B ... in time.
  auto runs = rounds(1.3, 4);
  for (auto& r : runs) r.pair = 0;
  std::swap(runs[2].metrics->started_wall_ns, runs[3].metrics->started_wall_ns);
  auto c = compare_runs(runs, CompareOptions{});
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->paired);
  // All of A first, then all of B: not paired, and said.
  for (auto& r : runs)
    r.metrics->started_wall_ns = (r.side == 'A' ? 0 : 100) * 1'000'000'000LL + r.pair;
  for (std::size_t i = 0; i < runs.size(); ++i)
    runs[i].metrics->started_wall_ns += static_cast<long long>(i);
  c = compare_runs(runs, CompareOptions{});
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->paired);
  ASSERT_FALSE(c->notes.empty());
  EXPECT_NE(c->notes.front().find("independent samples"), std::string::npos);
  ASSERT_TRUE(metric(*c, Metric::kRate).estimate);
  EXPECT_FALSE(metric(*c, Metric::kRate).estimate->paired);
}

TEST(BenchComparison, JsonHasTheDocumentedKeys) {
  auto runs = rounds(1.3);
  runs[3] = make_run('B', 2, 1.0, 1);
  const auto c = compare_runs(runs, by_round());
  ASSERT_TRUE(c);
  const auto j = to_json(*c);
  EXPECT_EQ(j["schema"], "dltune.compare/1");
  for (const char* k : {"a", "b", "paired", "confidence", "used_a", "used_b", "primary", "verdict",
                        "metrics", "runs", "notes", "method", "method_text"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["verdict"]["kind"], "b-better");
  EXPECT_EQ(j["metrics"][0]["id"], "rate");
  EXPECT_EQ(j["metrics"][0]["unit"], "it/s");
  EXPECT_EQ(j["runs"][3]["used"], false);
  EXPECT_EQ(j["runs"][3]["exit_status"], 1);
}

tune::Plan plan_of(const std::string& key, const std::string& target, const std::string& now,
                   const std::string& value) {
  tune::Plan p;
  tune::PlanItem item;
  item.key = key;
  item.status = tune::PlanItem::Status::kChange;
  item.changes.push_back(tune::PlannedChange{key, "sysctl", target, now, value});
  p.items.push_back(item);
  return p;
}

TEST(BenchSides, IdenticalSidesHaveNoDifference) {
  Side a, b;
  a.profile = "x";
  b.profile = "y";
  a.plan = plan_of("vm.swappiness", "/proc/sys/vm/swappiness", "60", "10");
  b.plan = plan_of("vm.swappiness", "/proc/sys/vm/swappiness", "60", "10\n");
  EXPECT_TRUE(differences(a, b).empty());
  // B leaves the host as it is, A changes it: one difference, with both values.
  b.plan.reset();
  const auto d = differences(a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "vm.swappiness");
  EXPECT_EQ(d[0].a, "10");
  EXPECT_EQ(d[0].b, "60");
  // A writes what the host has already: the same as not changing it.
  a.plan = plan_of("vm.swappiness", "/proc/sys/vm/swappiness", "60", "60");
  EXPECT_TRUE(differences(a, b).empty());
}

TEST(BenchSides, RunOptionsDifferInContentNotOrder) {
  Side a, b;
  a.run_args = {"--cpu-weight=500", "--allocator=default"};
  b.run_args = {"--allocator=default", "--cpu-weight=500"};
  EXPECT_TRUE(run_differences(a, b).empty());
  b.run_args.push_back("--cpu-quota=0.5");
  EXPECT_EQ(run_differences(a, b), std::vector<std::string>{"--cpu-quota=0.5 (B)"});
  EXPECT_EQ(b.label(), "current host, run --allocator=default --cpu-weight=500 --cpu-quota=0.5");
  Side t;
  t.profile = "training";
  t.only = {"vm.swappiness"};
  EXPECT_EQ(t.label(), "training --only vm.swappiness");
}

TEST(BenchComparison, RecordingsWithoutAnExitStatusAreRunsNotFailures) {
  // `record --pid` recordings: the process was not started by dltune, so there is no status.
  auto runs = rounds(1.3, 4);
  for (auto& r : runs) {
    r.pair = 0;
    r.metrics->exit_status.reset();
  }
  const auto c = compare_runs(runs, CompareOptions{});
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->paired);  // A B A B in time
  EXPECT_EQ(c->used_a, 4);
  EXPECT_EQ(c->used_b, 4);
  for (const auto& n : c->notes) EXPECT_EQ(n.find("not made in turn"), std::string::npos) << n;
  const auto j = dltune::bench::to_json(*c);
  EXPECT_TRUE(j["runs"][0]["exit_status"].is_null());
  EXPECT_TRUE(j["runs"][0]["used"].get<bool>());
}

TEST(BenchComparison, RunsThatAllFailedAreNotSaidToBeOutOfTurn) {
  auto runs = rounds(1.3, 3);
  for (auto& r : runs) {
    r.pair = 0;
    r.metrics->exit_status = 1;
  }
  const auto c = compare_runs(runs, CompareOptions{});
  ASSERT_TRUE(c);
  for (const auto& n : c->notes) EXPECT_EQ(n.find("not made in turn"), std::string::npos) << n;
}

}  // namespace
}  // namespace dltune::bench::comparison_test

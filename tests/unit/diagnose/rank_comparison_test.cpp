// Which rank holds a synchronous job back (diagnose/profile_job.hpp compare_ranks): the one busy
// while the others sleep in the collective, with the cause its signals show; none when the ranks
// keep pace, or when the others do not wait.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "diagnose/profile_job.hpp"

namespace rank_comparison_test {

using namespace dltune::diagnose;
using ::testing::HasSubstr;

namespace {

JobVerdict rank(pid_t pid, std::map<Signal, double> values) {
  JobVerdict v;
  v.job.main = pid;
  for (const auto& [s, x] : values) v.profile.values[static_cast<std::size_t>(s)] = x;
  return v;
}

}  // namespace

TEST(RankComparison, TheBusyRankWhileTheOthersSleepIsTheStragglerWithItsCause) {
  // Measured on tests/jobs/ddp_train.py --extra-work 1:3: 99% against 2.5%, the other asleep.
  const std::vector<JobVerdict> ranks = {
      rank(
          10,
          {{Signal::kMainOnCpu, 2.5}, {Signal::kMainSleeping, 0.96}, {Signal::kMainRunQueue, 0.1}}),
      rank(11,
           {{Signal::kMainOnCpu, 99}, {Signal::kMainSleeping, 0}, {Signal::kMainRunQueue, 0.3}}),
      rank(12,
           {{Signal::kMainOnCpu, 4}, {Signal::kMainSleeping, 0.9}, {Signal::kMainRunQueue, 0.2}})};
  const auto c = compare_ranks(ranks);
  ASSERT_EQ(c.straggler, 1u);
  EXPECT_THAT(c.text, HasSubstr("the straggler is rank pid 11 (the 2nd of 3 ranks by start)"));
  EXPECT_THAT(c.text, HasSubstr("pid 10 2%, pid 11 99%, pid 12 4%"));
  EXPECT_THAT(c.cause, HasSubstr("more work per step than the others"));
  EXPECT_EQ(c.doc["pid"], 11);
  EXPECT_EQ(c.doc["by"], "cpu");
  // Its CPU shared with another load: the run-queue wait says so, and the action binds ranks
  // apart.
  auto crowded = ranks;
  crowded[1].profile.values[static_cast<std::size_t>(Signal::kMainRunQueue)] = 35;
  const auto shared = compare_ranks(crowded);
  ASSERT_EQ(shared.straggler, 1u);
  EXPECT_THAT(shared.cause, HasSubstr("waits for a CPU 35% of the time"));
  EXPECT_THAT(shared.action, HasSubstr("dltune run --nproc N"));
  // Its workers saturated.
  auto starved = ranks;
  starved[1].profile.values[static_cast<std::size_t>(Signal::kWorkersCount)] = 2;
  starved[1].profile.values[static_cast<std::size_t>(Signal::kWorkersCpu)] = 97;
  EXPECT_THAT(compare_ranks(starved).cause, HasSubstr("2 DataLoader worker(s) are saturated"));
}

// With RANK read from each rank's environment the straggler is named by it, as the job's own logs
// and torchrun's errors name ranks; the start order is no longer needed.
TEST(RankComparison, RanksThatSaidTheirRankAreNamedByIt) {
  auto a = rank(10, {{Signal::kMainOnCpu, 3}, {Signal::kMainSleeping, 0.95}});
  auto b = rank(11, {{Signal::kMainOnCpu, 98}, {Signal::kMainSleeping, 0}});
  a.job.rank = 1;
  b.job.rank = 0;
  const auto c = compare_ranks({a, b});
  ASSERT_EQ(c.straggler, 1u);
  EXPECT_THAT(c.text, HasSubstr("the straggler is rank 0 (pid 11): main thread on a CPU: rank 1 "
                                "3%, rank 0 98%"));
  EXPECT_THAT(c.text, ::testing::Not(HasSubstr("by start")));
  EXPECT_EQ(c.doc["rank"], 0);
  EXPECT_EQ(c.doc["pid"], 11);
  // Unknown: null in the document.
  EXPECT_TRUE(compare_ranks({rank(10, {{Signal::kMainOnCpu, 3}, {Signal::kMainSleeping, 0.95}}),
                             rank(11, {{Signal::kMainOnCpu, 98}})})
                  .doc["rank"]
                  .is_null());
}

// Measured with two busy loops pinned to rank 1's CPU (ddp_train.py, equal work): the ranks'
// time on a CPU alike, rank 1's wait for one not.
TEST(RankComparison, ARankOnASharedCpuIsFoundByItsWaitForOne) {
  auto a = rank(
      10, {{Signal::kMainOnCpu, 38}, {Signal::kMainSleeping, 0.575}, {Signal::kMainRunQueue, 1.6}});
  auto b = rank(
      11, {{Signal::kMainOnCpu, 36}, {Signal::kMainSleeping, 0.24}, {Signal::kMainRunQueue, 44.4}});
  a.job.rank = 0;
  b.job.rank = 1;
  const auto c = compare_ranks({a, b});
  ASSERT_EQ(c.straggler, 1u) << c.text;
  EXPECT_EQ(c.doc["by"], "run_queue");
  EXPECT_THAT(c.text, HasSubstr("main thread waiting for a CPU: rank 0 2%, rank 1 44%"));
  EXPECT_THAT(c.cause, HasSubstr("waits for a CPU 44% of the time (the others 2%)"));
  EXPECT_THAT(c.action, HasSubstr("CPUs of its own"));
}

TEST(RankComparison, ARankStarvedOfCpuIsTheStragglerEvenWhenTheOthersSpinWhileTheyWait) {
  // CI's run: the loaded rank waited for a CPU longer than it ran; the other spun in the
  // collective (on a CPU 54%, asleep in under half of the samples).
  auto a = rank(
      10, {{Signal::kMainOnCpu, 54}, {Signal::kMainSleeping, 0.4}, {Signal::kMainRunQueue, 4}});
  auto b = rank(
      11, {{Signal::kMainOnCpu, 38}, {Signal::kMainSleeping, 0.2}, {Signal::kMainRunQueue, 54}});
  a.job.rank = 0;
  b.job.rank = 1;
  const auto c = compare_ranks({a, b});
  ASSERT_EQ(c.straggler, 1u) << c.text;
  EXPECT_EQ(c.doc["by"], "run_queue");
  // Waiting for a CPU less than it runs, with the others awake: not named.
  b.profile.values[static_cast<std::size_t>(Signal::kMainRunQueue)] = 30;
  EXPECT_FALSE(compare_ranks({a, b}).straggler);
}

TEST(RankComparison, RanksThatKeepPaceOrDoNotWaitNameNone) {
  // Measured on equal ranks: 77% and 79%.
  const auto even =
      compare_ranks({rank(10, {{Signal::kMainOnCpu, 77}, {Signal::kMainSleeping, 0.6}}),
                     rank(11, {{Signal::kMainOnCpu, 79}, {Signal::kMainSleeping, 0.35}})});
  EXPECT_FALSE(even.straggler);
  EXPECT_TRUE(even.doc.is_null());
  EXPECT_THAT(even.text, HasSubstr("no rank holds the others back"));
  // One busier, but the others do not sleep (an asynchronous job, or independent processes).
  const auto apart =
      compare_ranks({rank(10, {{Signal::kMainOnCpu, 95}, {Signal::kMainSleeping, 0}}),
                     rank(11, {{Signal::kMainOnCpu, 20}, {Signal::kMainSleeping, 0.1}})});
  EXPECT_FALSE(apart.straggler);
  EXPECT_THAT(apart.text, HasSubstr("the others do not wait"));
  // A rank without the signal (no schedstat): nothing is claimed.
  const auto unknown = compare_ranks({rank(10, {{Signal::kMainOnCpu, 95}}), rank(11, {})});
  EXPECT_FALSE(unknown.straggler);
  EXPECT_THAT(unknown.text, HasSubstr("not measured for every rank"));
  // One rank: nothing to compare.
  EXPECT_FALSE(compare_ranks({rank(10, {{Signal::kMainOnCpu, 95}})}).straggler);
}

TEST(RankComparison, ARankOnTheSlowGpuIsFoundByItsGpusUtilisation) {
  // Every main thread waits (on its GPU or in the collective): the CPU does not tell them apart.
  const auto c = compare_ranks({rank(10, {{Signal::kMainOnCpu, 20}, {Signal::kGpuUtil, 35}}),
                                rank(11, {{Signal::kMainOnCpu, 22}, {Signal::kGpuUtil, 98}}),
                                rank(12, {{Signal::kMainOnCpu, 21}, {Signal::kGpuUtil, 33}}),
                                rank(13, {{Signal::kMainOnCpu, 19}, {Signal::kGpuUtil, 36}})});
  ASSERT_EQ(c.straggler, 1u);
  EXPECT_EQ(c.doc["by"], "gpu");
  EXPECT_THAT(c.cause, HasSubstr("its GPU is the slowest"));
  EXPECT_THAT(c.action, HasSubstr("throttle reasons"));
  EXPECT_DOUBLE_EQ(c.doc["gpu_util_pct"].get<double>(), 98);
}

// The slow GPU's cause from its clocks: held below the others' by a power cap or its temperature.
TEST(RankComparison, ASlowedGpuIsTheCauseWhenItsClocksSaySo) {
  const auto gpu_rank = [](pid_t pid, double util, double clock, double slowdown) {
    return rank(pid, {{Signal::kMainOnCpu, 20},
                      {Signal::kGpuUtil, util},
                      {Signal::kGpuSmClock, clock},
                      {Signal::kGpuSlowdown, slowdown}});
  };
  const auto slowed = compare_ranks(
      {gpu_rank(10, 40, 1980, 0), gpu_rank(11, 97, 1410, 0.8), gpu_rank(12, 38, 1980, 0)});
  ASSERT_EQ(slowed.straggler, 1u);
  EXPECT_THAT(slowed.cause, HasSubstr("SM clock 1410 MHz against the others' 1980 MHz"));
  EXPECT_THAT(slowed.cause, HasSubstr("in 80% of the samples (the others' 0%)"));
  EXPECT_THAT(slowed.action, HasSubstr("power cap"));
  EXPECT_DOUBLE_EQ(slowed.doc["gpu_sm_clock_mhz"].get<double>(), 1410);
  EXPECT_DOUBLE_EQ(slowed.doc["gpu_slowdown_share"].get<double>(), 0.8);
  // Same clocks, no slowdown: busier for the same step (a slower GPU, more work), not throttled.
  const auto same = compare_ranks(
      {gpu_rank(10, 40, 1980, 0), gpu_rank(11, 97, 1975, 0), gpu_rank(12, 38, 1980, 0)});
  ASSERT_EQ(same.straggler, 1u);
  EXPECT_THAT(same.cause, HasSubstr("at the same clocks"));
}

}  // namespace rank_comparison_test

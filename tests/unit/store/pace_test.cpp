// The recorder's pace, on numbers rather than sleeps: absolute deadlines, a slow sample that
// delays only the next one, lateness past half an interval, missed deadlines skipped after a
// stall rather than made up in a burst.
#include <gtest/gtest.h>

#include "store/recorder.hpp"

namespace dltune::store::pace_test {
namespace {

constexpr std::int64_t kMs = 1'000'000;

TEST(Pace, OnTimeSamplesKeepTheirDeadlines) {
  Pace pace(1000 * kMs, 100 * kMs);
  EXPECT_FALSE(pace.late(1000 * kMs));
  EXPECT_EQ(pace.next(1003 * kMs), 97 * kMs);  // a 3 ms sample: wait for the rest
  EXPECT_FALSE(pace.late(1100 * kMs));
  EXPECT_EQ(pace.next(1102 * kMs), 98 * kMs);
  EXPECT_EQ(pace.deadline(), 1200 * kMs);
}

TEST(Pace, ASlowSampleDelaysTheNextOneButNotTheSeries) {
  Pace pace(0, 100 * kMs);
  EXPECT_EQ(pace.next(130 * kMs), 0);         // took 130 ms: the next one at once
  EXPECT_FALSE(pace.late(130 * kMs));         // 30 ms past its deadline of 100: not late
  EXPECT_EQ(pace.next(140 * kMs), 60 * kMs);  // back on the series: 200
  EXPECT_EQ(pace.deadline(), 200 * kMs);
}

TEST(Pace, MoreThanHalfAnIntervalPastTheDeadlineIsLate) {
  Pace pace(0, 100 * kMs);
  EXPECT_FALSE(pace.late(50 * kMs));
  EXPECT_TRUE(pace.late(51 * kMs));
}

TEST(Pace, AfterAStallMissedDeadlinesAreSkippedNotBurst) {
  Pace pace(0, 100 * kMs);
  // A 1.05 s stall (the machine was suspended, the disk hung): deadlines 100..1000 are gone.
  const auto wait = pace.next(1050 * kMs);
  EXPECT_EQ(pace.deadline(), 1100 * kMs);
  EXPECT_EQ(wait, 50 * kMs);
  EXPECT_FALSE(pace.late(1100 * kMs));
}

}  // namespace
}  // namespace dltune::store::pace_test

// doctor's request from its options: the window, and a recording's span read or refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "diagnose/doctor.hpp"

namespace doctor_plan_test {

constexpr std::int64_t kNow = 1'800'000'000'000'000'000;
constexpr std::int64_t kHour = 3'600'000'000'000;

TEST(DoctorPlan, TheWindowFromSinceOrBoot) {
  auto since = dltune::diagnose::doctor_plan(false, kHour, "", kNow);
  ASSERT_TRUE(since) << since.error().message();
  EXPECT_EQ(since->request.since_wall_ns, kNow - kHour);
  EXPECT_EQ(since->window.since_wall_ns, kNow - kHour);
  EXPECT_EQ(since->request.now_wall_ns, kNow);
  EXPECT_FALSE(since->request.recording_span);
  EXPECT_FALSE(since->window.text.empty());
  auto boot = dltune::diagnose::doctor_plan(true, std::nullopt, "", kNow);
  ASSERT_TRUE(boot);
  EXPECT_EQ(boot->request.since_wall_ns, 0) << "since boot";
  auto by_default = dltune::diagnose::doctor_plan(false, std::nullopt, "", kNow);
  ASSERT_TRUE(by_default);
  EXPECT_EQ(by_default->request.since_wall_ns, kNow - 24 * kHour);
}

TEST(DoctorPlan, ARecordingThatCannotBeReadIsNamed) {
  auto plan = dltune::diagnose::doctor_plan(false, std::nullopt, "/nonexistent/run.db", kNow);
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message(), ::testing::HasSubstr("--recording"));
  EXPECT_THAT(plan.error().message(), ::testing::HasSubstr("/nonexistent/run.db"));
}

}  // namespace doctor_plan_test

// doctor's window (--since, --boot, a recording that reaches further back; a bad --since is the
// command line's: tests/unit/cli/grammar_cli_test.cpp) and profile's judging
// of windows that hold no job or too little of one: the library calls behind the command line.
#include <gtest/gtest.h>

#include "diagnose/doctor.hpp"
#include "diagnose/profile_job.hpp"

namespace dltune::diagnose::doctor_window_test {
namespace {

constexpr std::int64_t kHour = 3'600'000'000'000;
constexpr std::int64_t kNow = 1'800'000'000'000'000'000;

TEST(DoctorWindow, SinceTakesHoursAndDaysAndBootTakesEverything) {
  const auto day = doctor_window(false, std::nullopt, std::nullopt, kNow);
  EXPECT_EQ(day.since_wall_ns, kNow - 24 * kHour);  // the default
  EXPECT_NE(day.text.find("(1d)"), std::string::npos) << day.text;
  const auto week = doctor_window(false, 7 * 24 * kHour, std::nullopt, kNow);
  EXPECT_EQ(week.since_wall_ns, kNow - 7 * 24 * kHour);
  EXPECT_NE(week.text.find("(1w)"), std::string::npos) << week.text;
  const auto boot = doctor_window(true, std::nullopt, std::nullopt, kNow);
  EXPECT_EQ(boot.since_wall_ns, 0);
  EXPECT_EQ(boot.text, "since boot");
}

TEST(DoctorWindow, ARecordingThatStartedEarlierReachesTheWindowBack) {
  const auto span = std::make_pair(kNow - 30 * kHour, kNow - 2 * kHour);
  const auto w = doctor_window(false, 24 * kHour, span, kNow);
  EXPECT_EQ(w.since_wall_ns, span.first);
  EXPECT_NE(w.text.find("the recording's start"), std::string::npos) << w.text;
  // One that started within the window changes nothing.
  const auto inside = doctor_window(false, 24 * kHour, std::make_pair(kNow - kHour, kNow), kNow);
  EXPECT_EQ(inside.since_wall_ns, kNow - 24 * kHour);
}

TEST(JudgeJob, WindowsWithoutAJobAreBadInputAndOneSampleIsTooFew) {
  const auto& rules = builtin_rules();
  ASSERT_TRUE(rules) << rules.error().message();
  JudgeRequest request;
  request.source = "recording host.db";
  JobWindows empty;
  auto none = judge_job(*rules, empty, request);
  ASSERT_FALSE(none);
  EXPECT_TRUE(none.error().bad_input);
  EXPECT_NE(none.error().error.message().find("recording host.db: no job in it"),
            std::string::npos);

  JobWindows one;
  monitor::Sample s;
  s.wall_ns = kNow;
  monitor::Process main;
  main.pid = 4242;
  main.comm = "python3";
  main.role = monitor::Role::kMain;
  main.state = 'R';
  s.processes.push_back(main);
  one.add(std::move(s));
  auto few = judge_job(*rules, one, request);
  ASSERT_FALSE(few);
  EXPECT_FALSE(few.error().bad_input);
  EXPECT_NE(few.error().error.message().find("too few samples"), std::string::npos)
      << few.error().error.message();
}

// A job that failed on a GPU error leads its verdict with it, even when it ended too soon to be
// judged on its OS signals (a CUDA OOM at the first step): the error, what it means, the actions.
TEST(JudgeJob, AJobThatRanOutOfGpuMemoryIsThatVerdict) {
  const auto& rules = builtin_rules();
  ASSERT_TRUE(rules) << rules.error().message();
  JudgeRequest request;
  request.source = "recording job.db";
  request.job_errors = nlohmann::json::array(
      {{{"kind", "nccl_error"}, {"text", "NCCL error in: x.cpp:1, unhandled cuda error"}},
       {{"kind", "cuda_oom"},
        {"text", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."},
        {"explanation", "The job asked for more GPU memory than was free, and stopped."},
        {"actions", {"set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "Lower the batch"}},
        {"rank", 1}}});
  JobWindows empty;
  const auto r = judge_job(*rules, empty, request);
  ASSERT_TRUE(r) << r.error().error.message();
  EXPECT_EQ(r->doc["verdict"], "failed");
  EXPECT_EQ(r->doc["failed"]["kind"], "cuda_oom");
  EXPECT_EQ(r->doc["job_errors"].size(), 2u);
  const auto text = render_text(*r);
  EXPECT_EQ(text.rfind("FAILED: CUDA out of memory (rank 1): torch.OutOfMemoryError", 0), 0u)
      << text;
  EXPECT_NE(text.find("  action: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"),
            std::string::npos);
  EXPECT_NE(text.find("also: NCCL error: NCCL error in: x.cpp:1"), std::string::npos) << text;
  EXPECT_NE(text.find("ended too soon"), std::string::npos);
  // Without job errors the same windows are still bad input.
  request.job_errors = nlohmann::json::array();
  EXPECT_FALSE(judge_job(*rules, empty, request));
}

}  // namespace
}  // namespace dltune::diagnose::doctor_window_test

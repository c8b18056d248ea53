// `slurm efficiency JOB --recording FILE`: the recording must be of job JOB (record --slurm-job's
// document "slurm", or run --record's summary inside the job); anything else is refused naming
// the file and whose it is. (The verdict itself: tests/integration/slurm_live_test.cpp.)
#include "slurm/recorded_verdict.hpp"

#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "store/recording.hpp"

namespace recorded_verdict_test {

using dltune::slurm::recorded_verdict;
using ::testing::HasSubstr;

namespace {

class RecordedVerdict : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("dltune_verdict_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A recording of one sample with document `key`.
  std::string recording(const std::string& name, const std::string& key,
                        const nlohmann::json& doc) const {
    const std::string path = (dir_ / name).string();
    dltune::store::RecordingInfo info;
    info.dltune_version = "0.1.0";
    info.hostname = "node7";
    info.started_wall_ns = 1'764'500'000'000'000'000;
    info.interval_ns = 1'000'000'000;
    info.scope = "node7  cgroup /slurm/uid_0/job_5";
    auto w = dltune::store::RecordingWriter::create(path, info);
    EXPECT_TRUE(w) << w.error().message();
    dltune::monitor::Sample s;
    s.wall_ns = info.started_wall_ns;
    EXPECT_TRUE((*w)->append(s));
    if (!key.empty()) {
      EXPECT_TRUE((*w)->put_document(key, doc));
    }
    EXPECT_TRUE((*w)->finish(std::nullopt));
    return path;
  }
  static std::string recording_verdict_error(const std::string& path, const std::string& job) {
    const auto r = recorded_verdict(path, job);
    return r ? std::string("(no error)") : r.error().message();
  }
  std::filesystem::path dir_;
};

}  // namespace

TEST_F(RecordedVerdict, AnotherJobsOrNoJobsRecordingIsRefusedNamingWhoseItIs) {
  const auto five = recording("five.db", "slurm", {{"job_id", "5"}, {"cgroup", "/x/job_5"}});
  const auto other = recording_verdict_error(five, "6");
  EXPECT_THAT(other, HasSubstr("--recording " + five));
  EXPECT_THAT(other, HasSubstr("not a recording of Slurm job 6"));
  EXPECT_THAT(other, HasSubstr("it is job 5's"));
  const auto plain = recording("plain.db", "", {});
  EXPECT_THAT(recording_verdict_error(plain, "5"), HasSubstr("it names no Slurm job"));
  // run --record outside Slurm: its summary's slurm is null.
  const auto outside = recording("outside.db", "summary", {{"slurm", nullptr}});
  EXPECT_THAT(recording_verdict_error(outside, "5"), HasSubstr("it names no Slurm job"));
  const auto missing = (dir_ / "none.db").string();
  EXPECT_THAT(recording_verdict_error(missing, "5"), HasSubstr("--recording " + missing));
}

TEST_F(RecordedVerdict, TheJobsOwnRecordingIsJudgedAndOneSampleIsTooFew) {
  // run --record inside job 6: its summary names the job. One sample: no verdict, said so.
  const auto six = recording("six.db", "summary", {{"slurm", {{"job_id", "6"}, {"step", "0"}}}});
  const auto r = recorded_verdict(six, "6");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("--recording " + six));
  EXPECT_THAT(r.error().message(), ::testing::Not(HasSubstr("not a recording of")));
}

}  // namespace recorded_verdict_test

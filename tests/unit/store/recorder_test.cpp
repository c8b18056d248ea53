// The recorder on a fixture host and a clock the test moves: samples held and handed to the
// writer together, every one of them written in order, also those held when it stops.
#include "store/recorder.hpp"

#include <poll.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/manual_clock.hpp"
#include "support/temp_tree.hpp"

namespace dltune::store::recorder_test {
namespace {

using dltune::testing::ManualClock;
using dltune::testing::TempTree;

constexpr std::int64_t kMs = 1'000'000;

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t_.write("proc/stat", "cpu  10 0 10 10 0 0 0 0\ncpu0 10 0 10 10 0 0 0 0\nctxt 5\n");
    t_.write("proc/meminfo", "MemTotal: 100 kB\nMemAvailable: 50 kB\n");
    t_.write("proc/vmstat", "pgfault 1\n");
    t_.write("proc/net/dev", "h1\nh2\n  eth0: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n");
    path_ = (t_.dir() / "run.db").string();
    RecordingInfo info;
    info.dltune_version = "0.1.0";
    info.interval_ns = kMs;
    WriterOptions wo;
    wo.batch = 3;  // commits that do not line up with the hand-overs
    auto w = RecordingWriter::create(path_, info, wo);
    ASSERT_TRUE(w) << w.error().message();
    writer_ = std::move(*w);
  }

  std::unique_ptr<monitor::Sampler> sampler() {
    monitor::SamplerOptions so;
    so.gpus = false;
    so.clock = &clock_;
    auto s = monitor::Sampler::open(t_.root(), so);
    EXPECT_TRUE(s) << s.error().message();
    return s ? std::move(*s) : nullptr;
  }

  // The recording as written, once the writer has finished: each sample's wall time.
  std::vector<std::int64_t> written_times() {
    EXPECT_TRUE(writer_->finish(std::nullopt));
    auto r = Recording::open(path_);
    EXPECT_TRUE(r) << r.error().message();
    if (!r) return {};
    auto times = (*r)->times();
    EXPECT_TRUE(times);
    return times ? *times : std::vector<std::int64_t>{};
  }

  // The recorder ends by itself (its duration, an error): stop() would also end it early. Its
  // done_fd says so (what `record` waits on).
  static void wait_until_finished(const Recorder& rec) {
    ASSERT_GE(rec.done_fd(), 0);
    pollfd p{rec.done_fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 10'000), 1);
    ASSERT_TRUE(rec.finished());
  }

  TempTree t_;
  ManualClock clock_;
  std::string path_;
  std::unique_ptr<RecordingWriter> writer_;
};

TEST_F(RecorderTest, HeldSamplesReachTheWriterTogetherAndAllInOrder) {
  RecorderOptions ro;
  ro.interval_ns = kMs;
  ro.duration_ns = 10 * kMs;  // samples at 0, 1, ... 10 ms: eleven, not a multiple of the hold
  ro.hold = 4;
  ro.clock = &clock_;
  std::vector<std::size_t> written_after;  // what the writer had after each sample
  std::vector<std::int64_t> taken;
  ro.after_sample = [&](const monitor::Sample& s) {
    written_after.push_back(writer_->samples_written());
    taken.push_back(s.wall_ns);
    clock_.advance(kMs);  // each sample takes an interval: the next one at once
  };
  auto rec = Recorder::start(sampler(), *writer_, ro);
  wait_until_finished(*rec);
  const auto stats = rec->stats();
  EXPECT_FALSE(stats.error);
  ASSERT_EQ(stats.samples, 11u);
  EXPECT_EQ(written_after, (std::vector<std::size_t>{0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8}));
  EXPECT_EQ(writer_->samples_written(), 11u);  // the last three when it stopped
  EXPECT_GT(stats.thread_cpu_seconds, 0);
  EXPECT_EQ(written_times(), taken);
}

TEST_F(RecorderTest, WithAHoldOfOneEachSampleIsWrittenBeforeTheNext) {
  RecorderOptions ro;
  ro.interval_ns = kMs;
  ro.duration_ns = 4 * kMs;
  ro.clock = &clock_;
  std::vector<std::size_t> written_after;
  ro.after_sample = [&](const monitor::Sample&) {
    written_after.push_back(writer_->samples_written());
    clock_.advance(kMs);
  };
  auto rec = Recorder::start(sampler(), *writer_, ro);
  wait_until_finished(*rec);
  EXPECT_EQ(written_after, (std::vector<std::size_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(written_times().size(), 5u);
}

TEST_F(RecorderTest, StoppedWhileHoldingWritesWhatItHeld) {
  RecorderOptions ro;
  ro.interval_ns = 3'600'000 * kMs;  // an hour: it waits after the first sample until stopped
  ro.hold = 10;
  ro.clock = &clock_;
  std::promise<void> first;
  ro.after_sample = [&](const monitor::Sample&) { first.set_value(); };
  auto rec = Recorder::start(sampler(), *writer_, ro);
  first.get_future().wait();
  EXPECT_EQ(writer_->samples_written(), 0u);  // held
  pollfd p{rec->done_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0);  // not ended
  rec->stop();
  EXPECT_EQ(::poll(&p, 1, 0), 1);
  EXPECT_EQ(rec->stats().samples, 1u);
  EXPECT_EQ(writer_->samples_written(), 1u);
  EXPECT_EQ(written_times().size(), 1u);
}

TEST_F(RecorderTest, ASamplerErrorStillWritesTheWholeSamplesHeld) {
  RecorderOptions ro;
  ro.interval_ns = kMs;
  ro.hold = 10;
  ro.clock = &clock_;
  std::size_t n = 0;
  ro.after_sample = [&](const monitor::Sample&) {
    // After the third sample /proc/stat turns to text that does not parse.
    if (++n == 3) t_.write("proc/stat", "cpu  ten apples\n");
    clock_.advance(kMs);
  };
  auto rec = Recorder::start(sampler(), *writer_, ro);
  wait_until_finished(*rec);
  const auto stats = rec->stats();
  ASSERT_TRUE(stats.error);
  EXPECT_NE(stats.error->message().find("stat"), std::string::npos) << stats.error->message();
  EXPECT_EQ(stats.samples, 3u);
  EXPECT_EQ(writer_->samples_written(), 3u);
  EXPECT_EQ(written_times().size(), 3u);
}

}  // namespace
}  // namespace dltune::store::recorder_test

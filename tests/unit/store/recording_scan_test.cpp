// Recording::for_each: the same samples as at(), in one pass over each table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/recording.hpp"
#include "unit/report/report_samples.hpp"
#include "unit/store/sample_fields.hpp"

namespace dltune::store::recording_scan_test {
namespace {

using dltune::testing::expect_same_sample;
using dltune::testing::fill_all;
using dltune::testing::fill_empty;
using dltune::testing::realistic;
using dltune::testing::TempDir;

TEST(RecordingScan, ForEachReadsWhatAtReads) {
  TempDir dir;
  const auto path = dir.file("run.db");
  {
    auto w = RecordingWriter::create(path, {}, {.force = true});
    ASSERT_TRUE(w) << w.error().message();
    // Samples whose tables have rows, none, and other processes (a process_info change too).
    std::vector<monitor::Sample> samples{realistic(0), fill_all(1000), fill_empty(3000),
                                         realistic(1), realistic(2)};
    samples[4].processes[3].comm = "renamed";
    for (std::size_t i = 0; i < samples.size(); ++i) {
      samples[i].wall_ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(i) * 1'000'000'000;
      ASSERT_TRUE((*w)->append(samples[i]));
    }
    ASSERT_TRUE((*w)->finish(0));
  }
  auto rec = Recording::open(path);
  ASSERT_TRUE(rec) << rec.error().message();
  std::vector<std::size_t> seen;
  std::vector<monitor::Sample> walked;
  auto r = (*rec)->for_each(1, 5, [&](std::size_t i, monitor::Sample&& s) -> Result<void> {
    seen.push_back(i);
    walked.push_back(std::move(s));
    return {};
  });
  ASSERT_TRUE(r) << r.error().message();
  for (std::size_t k = 0; k < walked.size(); ++k) {
    auto expected = (*rec)->at(seen[k]);
    ASSERT_TRUE(expected) << expected.error().message();
    expect_same_sample(walked[k], *expected);
  }
  EXPECT_THAT(seen, ::testing::ElementsAre(1, 2, 3, 4));
}

TEST(RecordingScan, AnErrorFromTheVisitorStopsTheWalk) {
  TempDir dir;
  const auto path = dir.file("run.db");
  dltune::testing::write_recording(path, 5);
  auto rec = Recording::open(path);
  ASSERT_TRUE(rec);
  int calls = 0;
  auto r = (*rec)->for_each(0, 5, [&](std::size_t, monitor::Sample&&) -> Result<void> {
    if (++calls == 2) return fail("stop here");
    return {};
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "stop here");
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE((*rec)->for_each(3, 3, [](std::size_t, monitor::Sample&&) -> Result<void> {
    ADD_FAILURE();
    return {};
  }));
}

}  // namespace
}  // namespace dltune::store::recording_scan_test

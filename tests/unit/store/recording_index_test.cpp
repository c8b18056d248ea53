// --at's arithmetic: the sample an offset from the recording's start lands on, and an offset past
// the recording's end refused with its length.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/recording.hpp"
#include "unit/report/report_samples.hpp"

namespace recording_index_test {

using ::testing::HasSubstr;

TEST(RecordingIndex, AnOffsetFromTheStartAndOnePastTheEnd) {
  dltune::testing::TempDir dir;
  const auto path = dir.file("run.db");
  dltune::testing::write_recording(path, 6);  // one sample a second from the start
  auto r = dltune::store::Recording::open(path);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*(*r)->index_after(0), 0u);
  EXPECT_EQ(*(*r)->index_after(2'000'000'000), 2u);
  EXPECT_EQ(*(*r)->index_after(2'500'000'000), 3u);  // the first sample at or after it
  const std::int64_t century = 36'500LL * 86'400 * 1'000'000'000;
  auto past = (*r)->index_after(century);
  ASSERT_FALSE(past);
  EXPECT_THAT(past.error().message(), HasSubstr("--at 5214w2d: past the recording's end ("));
}

}  // namespace recording_index_test

// Where profile keeps a job's recording: the user's file when given (checked as an output),
// else a private directory that goes with it.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "record/recorded_run.hpp"

namespace recording_place_test {

using dltune::record::RecordingPlace;
using ::testing::HasSubstr;

namespace {

bool exists(const std::string& p) {
  return ::access(p.c_str(), F_OK) == 0;
}

}  // namespace

TEST(RecordingPlace, WithoutAFileItIsAPrivateDirectoryThatGoesWithIt) {
  std::string dir;
  {
    auto place = RecordingPlace::make("", "dltune-place-test");
    ASSERT_TRUE(place) << place.error().message();
    EXPECT_FALSE(place->kept());
    EXPECT_THAT(place->path(), ::testing::EndsWith("/job.db"));
    dir = place->path().substr(0, place->path().rfind('/'));
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << "private";
    EXPECT_FALSE(exists(place->path())) << "nothing recorded yet";
    std::ofstream(place->path()) << "x";
  }
  EXPECT_FALSE(exists(dir)) << dir << " outlived its place";
}

TEST(RecordingPlace, TheUsersFileIsKeptAndCheckedAsAnOutput) {
  std::string tmpl = ::testing::TempDir() + "dltune_place_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string fresh = tmpl + "/job.db";
  {
    auto place = RecordingPlace::make(fresh, "unused");
    ASSERT_TRUE(place) << place.error().message();
    EXPECT_TRUE(place->kept());
    EXPECT_EQ(place->path(), fresh);
    std::ofstream(place->path()) << "x";
  }
  EXPECT_TRUE(exists(fresh)) << "the user's recording stays";
  const auto again = RecordingPlace::make(fresh, "unused");
  ASSERT_FALSE(again) << "an existing file is never replaced here";
  EXPECT_THAT(again.error().message(), HasSubstr("--record"));
  const auto stream = RecordingPlace::make("-", "unused");
  ASSERT_FALSE(stream);
  EXPECT_THAT(stream.error().message(), HasSubstr("a recording is a SQLite file, not a stream"));
  ::unlink(fresh.c_str());
  ::rmdir(tmpl.c_str());
}

}  // namespace recording_place_test

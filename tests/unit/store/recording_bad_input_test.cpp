// Recordings that are not ours, newer, cut short or left behind by a writer that died; output
// paths that exist.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/recording.hpp"
#include "support/in_child.hpp"
#include "unit/store/sample_fields.hpp"

namespace dltune::store::recording_bad_input_test {
namespace {

using dltune::testing::expect_same_sample;
using dltune::testing::in_child;
using dltune::testing::realistic;
using dltune::testing::slurp_file;
using ::testing::HasSubstr;

class RecordingBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("dltune_recording_bad_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "run.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  void sql(const std::string& path, const char* text) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, text, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  void record(int samples, bool finish = true) {
    auto w = RecordingWriter::create(path_, RecordingInfo{}, {.force = true});
    ASSERT_TRUE(w) << w.error().message();
    for (int t = 0; t < samples; ++t) ASSERT_TRUE((*w)->append(realistic(t)));
    if (finish) {
      ASSERT_TRUE((*w)->finish(0));
    }
  }
  // The files in the directory: nothing left behind by a failed create.
  std::size_t files() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir_),
                                                  std::filesystem::directory_iterator()));
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(RecordingBadInputTest, AnExistingPathIsRefusedWithoutForce) {
  write_text(path_, "precious");
  auto w = RecordingWriter::create(path_, RecordingInfo{});
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message(), path_ + " exists; use --force to replace it");
  EXPECT_EQ(slurp_file(path_), "precious");
  EXPECT_EQ(files(), 1u);
}

TEST_F(RecordingBadInputTest, ForceReplacesOnlyOnceTheNewFileIsMade) {
  record(3);
  // A crashed earlier recording's -wal beside it must not be taken for the new one's.
  write_text(path_ + "-wal", "stale");
  auto w = RecordingWriter::create(path_, RecordingInfo{}, {.force = true});
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_FALSE(std::filesystem::exists(path_ + "-wal") && slurp_file(path_ + "-wal") == "stale");
  ASSERT_TRUE((*w)->append(realistic(100)));
  ASSERT_TRUE((*w)->finish(0));
  auto r = Recording::open(path_);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)->size(), 1u);
  EXPECT_EQ(files(), 1u);
}

TEST_F(RecordingBadInputTest, AFailedCreateLeavesTheOldFileAndNoTemporary) {
  write_text(path_, "precious");
  // A directory that cannot be written: the temporary file cannot be made (root ignores the
  // mode, so a path under a regular file stands in: ENOTDIR either way).
  const std::string under_file = path_ + "/run.db";
  auto w = RecordingWriter::create(under_file, RecordingInfo{}, {.force = true});
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message(), HasSubstr(path_));
  EXPECT_EQ(slurp_file(path_), "precious");
  EXPECT_EQ(files(), 1u);
}

TEST_F(RecordingBadInputTest, ADirectoryIsRefusedEvenWithForce) {
  std::filesystem::create_directories(path_);
  auto w = RecordingWriter::create(path_, RecordingInfo{}, {.force = true});
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message(), HasSubstr(path_));
  EXPECT_TRUE(std::filesystem::is_directory(path_));
  EXPECT_EQ(files(), 1u);
}

TEST_F(RecordingBadInputTest, OpenRefusesWhatIsNotARecording) {
  auto missing = Recording::open(path_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(),
            "cannot open the recording " + path_ + ": No such file or directory");

  write_text(path_, "time,cpu\n1,2\n");
  auto text = Recording::open(path_);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message(), "not a dltune recording (not an SQLite file): " + path_);

  write_text(path_, "");
  auto empty = Recording::open(path_);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message(), "not a dltune recording (not an SQLite file): " + path_);

  std::filesystem::remove(path_);
  sql(path_, "CREATE TABLE t (x); INSERT INTO t VALUES (1)");
  auto foreign = Recording::open(path_);
  ASSERT_FALSE(foreign);
  EXPECT_THAT(foreign.error().message(), HasSubstr("not a dltune recording"));
  EXPECT_THAT(foreign.error().message(), HasSubstr(path_));

  // A meta table of its own, and one like ours with another format.
  sql(path_, "CREATE TABLE meta (name TEXT)");
  EXPECT_FALSE(Recording::open(path_));
  sql(path_,
      "DROP TABLE meta; CREATE TABLE meta (key TEXT, value TEXT);"
      "INSERT INTO meta VALUES ('format', 'other-tool')");
  auto other = Recording::open(path_);
  ASSERT_FALSE(other);
  EXPECT_THAT(other.error().message(), HasSubstr("not a dltune recording"));
}

TEST_F(RecordingBadInputTest, ANewerSchemaInTheMetaRowIsRefusedToo) {
  record(2);
  sql(path_, "UPDATE meta SET value = '99' WHERE key = 'schema'");
  auto r = Recording::open(path_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(),
            "written by a newer dltune: schema 99, this dltune reads 1: " + path_);
}

TEST_F(RecordingBadInputTest, ANewerSchemaIsRefusedWithBothVersions) {
  record(2);
  sql(path_, "PRAGMA user_version = 2");
  auto r = Recording::open(path_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(),
            "written by a newer dltune: schema 2, this dltune reads 1: " + path_);
}

TEST_F(RecordingBadInputTest, ATruncatedRecordingIsAnErrorNotACrash) {
  record(600);
  const auto size = std::filesystem::file_size(path_);
  std::filesystem::resize_file(path_, size / 2);
  auto r = Recording::open(path_);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("truncated"));
  EXPECT_THAT(r.error().message(), HasSubstr(path_));
  EXPECT_EQ(std::filesystem::file_size(path_), size / 2);  // nothing written to it
}

TEST_F(RecordingBadInputTest, ACorruptPageIsAnErrorNotACrash) {
  record(600);
  // Overwrite a page in the middle with garbage: the size is right, the content is not.
  const auto size = std::filesystem::file_size(path_);
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
    const std::string junk(4096, '\xA5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto r = Recording::open(path_);
  if (!r) {
    EXPECT_THAT(r.error().message(), HasSubstr(path_));
    return;
  }
  // Opened (the page was not one open reads): every sample reads or fails cleanly.
  std::size_t failed = 0;
  for (std::size_t i = 0; i < (*r)->size(); ++i) failed += !(*r)->at(i);
  EXPECT_GT(failed, 0u);
}

TEST_F(RecordingBadInputTest, AWriterThatExitsWithoutFinishingLeavesEveryCommittedSample) {
  // Batches of 3: 7 appended = 2 batches committed by the batch size, 1 by flush(), and one
  // sample pending when the process ends without finish() or the destructor.
  auto run = in_child([&] {
    auto w = RecordingWriter::create(path_, RecordingInfo{}, {.batch = 3});
    if (!w) return w.error().message();
    for (int t = 0; t < 6; ++t)
      if (!(*w)->append(realistic(t))) return std::string("append failed");
    if (!(*w)->append(realistic(6)) || !(*w)->flush()) return std::string("flush failed");
    if (!(*w)->append(realistic(7))) return std::string("append failed");
    std::fflush(nullptr);
    ::_exit(0);  // no destructor, no finish
    return std::string();
  });
  ASSERT_TRUE(WIFEXITED(run.status)) << run.report;
  ASSERT_EQ(WEXITSTATUS(run.status), 0) << run.report;
  auto r = Recording::open(path_);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ((*r)->size(), 7u);
  EXPECT_FALSE((*r)->info().ended_wall_ns.has_value());
  for (int t = 0; t < 7; ++t) {
    auto got = (*r)->at(static_cast<std::size_t>(t));
    ASSERT_TRUE(got) << got.error().message();
    expect_same_sample(realistic(t), *got);
  }
}

TEST_F(RecordingBadInputTest, AWriterKilledMidRecordingLeavesEveryCommittedSample) {
  // The child records until killed; the test reads the recording while it grows (a reader
  // beside the writer) and kills it once 50 samples are committed.
  std::size_t seen = 0;
  auto run = in_child(
      [&] {
        auto w = RecordingWriter::create(path_, RecordingInfo{}, {.batch = 1});
        if (!w) return w.error().message();
        for (int t = 0;; ++t)
          if (!(*w)->append(realistic(t % 3600))) return std::string("append failed");
      },
      [&](pid_t pid) {
        for (int tries = 0; tries < 100'000 && seen < 50; ++tries) {
          auto r = Recording::open(path_);
          if (r) seen = (*r)->size();
          ::usleep(1000);
        }
        ::kill(pid, SIGKILL);
      });
  ASSERT_TRUE(WIFSIGNALED(run.status)) << run.report;
  ASSERT_GE(seen, 50u);
  auto r = Recording::open(path_);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_GE((*r)->size(), seen);
  for (std::size_t i = 0; i < (*r)->size(); ++i) {
    auto got = (*r)->at(i);
    ASSERT_TRUE(got) << i << ": " << got.error().message();
    EXPECT_EQ(got->wall_ns, realistic(static_cast<int>(i % 3600)).wall_ns);
  }
}

}  // namespace
}  // namespace dltune::store::recording_bad_input_test

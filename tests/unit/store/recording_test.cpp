// Recordings written and read back: every field, process identities, documents, seeking, size.
#include "store/recording.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "unit/store/sample_fields.hpp"

namespace dltune::store::recording_test {
namespace {

using dltune::testing::expect_same_sample;
using dltune::testing::fill_all;
using dltune::testing::fill_empty;
using dltune::testing::realistic;

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("dltune_recording_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "run.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static RecordingInfo info() {
    RecordingInfo i;
    i.dltune_version = "0.1.0";
    i.hostname = "gpu-07";
    i.started_wall_ns = 1'764'500'000'000'000'000;
    i.interval_ns = 1'000'000'000;
    i.scope = "tree 4242";
    i.command = {"python3", "train.py", "--lr", "3e-4 with spaces"};
    return i;
  }

  // One integer from a query on the file, through SQLite directly (as a user's sqlite3 would).
  std::int64_t query(const std::string& sql) const {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    std::int64_t v = -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(RecordingTest, EveryFieldAndEveryEmptyOptionalRoundTrip) {
  const auto full = fill_all(1000), empty = fill_empty(5000), bare = monitor::Sample{};
  {
    auto w = RecordingWriter::create(path_, info(), {.batch = 2});
    ASSERT_TRUE(w) << w.error().message();
    for (const auto* s : {&full, &empty, &bare}) ASSERT_TRUE((*w)->append(*s));
    EXPECT_EQ((*w)->samples_written(), 3u);
    ASSERT_TRUE((*w)->finish(3));
  }
  auto r = Recording::open(path_);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ((*r)->size(), 3u);
  int i = 0;
  for (const auto* s : {&full, &empty, &bare}) {
    auto got = (*r)->at(i++);
    ASSERT_TRUE(got) << got.error().message();
    SCOPED_TRACE(i);
    expect_same_sample(*s, *got);
  }
  const auto& in = (*r)->info();
  EXPECT_EQ(in.schema, 1);
  EXPECT_EQ(in.dltune_version, "0.1.0");
  EXPECT_EQ(in.hostname, "gpu-07");
  EXPECT_EQ(in.started_wall_ns, info().started_wall_ns);
  EXPECT_EQ(in.interval_ns, 1'000'000'000);
  EXPECT_EQ(in.scope, "tree 4242");
  EXPECT_EQ(in.command, info().command);
  ASSERT_TRUE(in.ended_wall_ns.has_value());
  EXPECT_GT(*in.ended_wall_ns, 0);
  EXPECT_EQ(in.exit_status, 3);
  // Finished: one self-contained file, no -wal beside it.
  EXPECT_FALSE(std::filesystem::exists(path_ + "-wal"));
  EXPECT_FALSE((*r)->at(3).has_value());
}

TEST_F(RecordingTest, NothingIsWrittenAfterFinish) {
  auto w = RecordingWriter::create(path_, info());
  ASSERT_TRUE(w);
  ASSERT_TRUE((*w)->append(realistic(0)));
  ASSERT_TRUE((*w)->finish(0));
  auto again = (*w)->append(realistic(1));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message(), "the recording is finished: " + path_);
  EXPECT_FALSE((*w)->put_document("env", nlohmann::json::object()));
  EXPECT_TRUE((*w)->flush());
  EXPECT_TRUE((*w)->finish(1));  // once only: the first exit status stays
  w->reset();
  auto r = Recording::open(path_);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)->size(), 1u);
  EXPECT_EQ((*r)->info().exit_status, 0);
}

TEST_F(RecordingTest, ProcessInfoIsWrittenOncePerIdentityAndChange) {
  auto w = RecordingWriter::create(path_, info(), {.batch = 4});
  ASSERT_TRUE(w) << w.error().message();
  std::vector<monitor::Sample> written;
  for (int t = 0; t < 10; ++t) {
    auto s = realistic(t);
    // pid 4245 exits after sample 3; at sample 6 the pid is reused by another process (a
    // later start time), which renames itself at sample 8.
    auto& p = s.processes[1];
    ASSERT_EQ(p.pid, 4245);
    if (t >= 4 && t < 6) s.processes.erase(s.processes.begin() + 1);
    if (t >= 6) {
      p.start_ticks += 5000;
      p.comm = "bash";
      p.cmdline = "bash -c make";
      p.role = monitor::Role::kChild;
    }
    if (t >= 8) p.comm = "make";
    if (t == 9) s.processes[2].ppid = 1;  // reparented to init
    ASSERT_TRUE((*w)->append(s));
    written.push_back(std::move(s));
  }
  ASSERT_TRUE((*w)->finish(std::nullopt));
  w->reset();

  // 20 identities at the start, the reused pid, its rename, one reparenting.
  EXPECT_EQ(query("SELECT count(*) FROM process_info"), 23);
  EXPECT_EQ(query("SELECT count(*) FROM process_info WHERE pid = 4245"), 3);
  EXPECT_EQ(query("SELECT count(*) FROM process"), 10 * 20 - 2);
  auto r = Recording::open(path_);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE((*r)->info().exit_status.has_value());
  ASSERT_EQ((*r)->size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    auto got = (*r)->at(i);
    ASSERT_TRUE(got) << got.error().message();
    SCOPED_TRACE(i);
    expect_same_sample(written[i], *got);
  }
}

TEST_F(RecordingTest, ProcessesAreReadSortedByPid) {
  auto s = realistic(0);
  std::swap(s.processes.front(), s.processes.back());
  auto w = RecordingWriter::create(path_, info());
  ASSERT_TRUE(w);
  ASSERT_TRUE((*w)->append(s));
  ASSERT_TRUE((*w)->finish(0));
  auto r = Recording::open(path_);
  ASSERT_TRUE(r);
  auto got = (*r)->at(0);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->processes.size(), 20u);
  for (std::size_t i = 1; i < got->processes.size(); ++i)
    EXPECT_LT(got->processes[i - 1].pid, got->processes[i].pid);
}

TEST_F(RecordingTest, DocumentsRoundTripAndReplace) {
  auto w = RecordingWriter::create(path_, info());
  ASSERT_TRUE(w);
  const nlohmann::json env = {{"kernel", "6.1.0-18-amd64"}, {"gpus", {0, 1}}, {"ok", true}};
  ASSERT_TRUE((*w)->put_document("env", env));
  ASSERT_TRUE((*w)->append(realistic(0)));
  ASSERT_TRUE((*w)->put_document("summary", {{"exit", 1}}));
  ASSERT_TRUE((*w)->put_document("summary", {{"exit", 0}, {"text", "ünïcode \"quoted\""}}));
  ASSERT_TRUE((*w)->finish(0));
  auto r = Recording::open(path_);
  ASSERT_TRUE(r);
  auto e = (*r)->document("env");
  ASSERT_TRUE(e && e->has_value());
  EXPECT_EQ(**e, env);
  auto s = (*r)->document("summary");
  ASSERT_TRUE(s && s->has_value());
  EXPECT_EQ((**s)["exit"], 0);
  EXPECT_EQ((**s)["text"], "ünïcode \"quoted\"");
  auto none = (*r)->document("profile");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ((*r)->size(), 1u);
}

TEST_F(RecordingTest, IndexAtFindsTheFirstSampleAtOrAfter) {
  auto w = RecordingWriter::create(path_, info());
  ASSERT_TRUE(w);
  for (int t : {0, 1, 2, 5}) ASSERT_TRUE((*w)->append(realistic(t)));
  ASSERT_TRUE((*w)->finish(0));
  auto r = Recording::open(path_);
  ASSERT_TRUE(r);
  const std::int64_t t0 = realistic(0).wall_ns, s = 1'000'000'000;
  auto times = (*r)->times();
  ASSERT_TRUE(times);
  EXPECT_EQ(*times, (std::vector<std::int64_t>{t0, t0 + s, t0 + 2 * s, t0 + 5 * s}));
  EXPECT_EQ((*r)->index_at(0), 0u);           // before the first
  EXPECT_EQ((*r)->index_at(t0), 0u);          // exactly the first
  EXPECT_EQ((*r)->index_at(t0 + 1), 1u);      // just after it
  EXPECT_EQ((*r)->index_at(t0 + 2 * s), 2u);  // exact
  EXPECT_EQ((*r)->index_at(t0 + 3 * s), 3u);  // in a gap
  EXPECT_EQ((*r)->index_at(t0 + 5 * s), 3u);  // the last
  EXPECT_EQ((*r)->index_at(t0 + 9 * s), 3u);  // after the last: the last
}

TEST_F(RecordingTest, AnEmptyRecordingOpens) {
  auto w = RecordingWriter::create(path_, info());
  ASSERT_TRUE(w);
  ASSERT_TRUE((*w)->finish(std::nullopt));
  auto r = Recording::open(path_);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)->size(), 0u);
  EXPECT_EQ((*r)->index_at(123), 0u);
  EXPECT_FALSE((*r)->at(0).has_value());
}

// Not a benchmark with a bound: prints the size per sample of an hour at 1 Hz of a 20-process
// job, 2 CPUs, 2 disks, 2 NICs (the target, bench/README.md: under 20 MB an hour); asserts only a
// loose sanity bound (twice the target).
TEST_F(RecordingTest, AnHourAtOneHertzOfATwentyProcessJob) {
  constexpr int kSamples = 3600;
  {
    auto w = RecordingWriter::create(path_, info(), {.batch = 10});
    ASSERT_TRUE(w);
    for (int t = 0; t < kSamples; ++t) ASSERT_TRUE((*w)->append(realistic(t)));
    ASSERT_TRUE((*w)->finish(0));
  }
  const auto bytes = std::filesystem::file_size(path_);
  const double per_sample = static_cast<double>(bytes) / kSamples;
  std::printf("recording size: %ju bytes for %d samples: %.0f bytes/sample, %.2f MB/hour at 1 Hz\n",
              static_cast<std::uintmax_t>(bytes), kSamples, per_sample, per_sample * 3600 / 1e6);
  EXPECT_LT(bytes, 40'000'000u);
  auto r = Recording::open(path_);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)->size(), static_cast<std::size_t>(kSamples));
  auto last = (*r)->at(kSamples - 1);
  ASSERT_TRUE(last);
  expect_same_sample(realistic(kSamples - 1), *last);
}

}  // namespace
}  // namespace dltune::store::recording_test

namespace dltune::store::recording_test {
namespace {

// A recording made before the gpu table gained its last eight columns, the sample table its
// observer_cpu_us and process_info its rank (same schema 1, nullable columns added at the end)
// still opens: the missing columns read as empty, the rest as written.
TEST_F(RecordingTest, ARecordingWithoutTheLaterColumnsOpens) {
  const auto sample = fill_all(1);
  ASSERT_FALSE(sample.gpus.empty());
  {
    auto w = RecordingWriter::create(path_, info());
    ASSERT_TRUE(w);
    ASSERT_TRUE((*w)->append(sample));
    ASSERT_TRUE((*w)->finish(0));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  for (const char* col : {"pcie_replay_count", "xid_errors", "last_xid", "ecc_corrected",
                          "ecc_uncorrected", "vendor", "nvlink_tx_kib", "nvlink_rx_kib"}) {
    const std::string sql = std::string("ALTER TABLE gpu DROP COLUMN ") + col;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  ASSERT_EQ(
      sqlite3_exec(db, "ALTER TABLE sample DROP COLUMN observer_cpu_us", nullptr, nullptr, nullptr),
      SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "ALTER TABLE process_info DROP COLUMN rank", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  auto r = Recording::open(path_);
  ASSERT_TRUE(r) << r.error().message();
  auto back = (*r)->at(0);
  ASSERT_TRUE(back) << back.error().message();
  auto expected = sample;
  ASSERT_TRUE(expected.observer_cpu_us.has_value());
  expected.observer_cpu_us.reset();
  for (auto& p : expected.processes) {
    ASSERT_TRUE(p.rank.has_value());
    p.rank.reset();
  }
  for (auto& g : expected.gpus) {
    g.pcie_replay_count.reset();
    g.xid_errors.reset();
    g.last_xid.reset();
    g.ecc_corrected.reset();
    g.ecc_uncorrected.reset();
    g.vendor.reset();
    g.nvlink_tx_kib.reset();
    g.nvlink_rx_kib.reset();
  }
  expect_same_sample(expected, *back);
  // The sequential reader too.
  std::size_t visited = 0;
  auto walk = (*r)->for_each(0, 1, [&](std::size_t, monitor::Sample&& s) -> Result<void> {
    ++visited;
    expect_same_sample(expected, s);
    return {};
  });
  ASSERT_TRUE(walk) << walk.error().message();
  EXPECT_EQ(visited, 1u);
}

}  // namespace
}  // namespace dltune::store::recording_test

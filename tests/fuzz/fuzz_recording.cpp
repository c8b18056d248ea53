// libFuzzer target: a recording file (SQLite, docs/recording.md) as `report`, `profile`,
// `compare` and `record --replay` open and read it: the header checks, the meta rows, the schema
// and its columns, every table's rows (values NULL, of the wrong type, out of range, rows
// missing or out of order) and the documents. A recording is a file a user hands dltune, maybe
// cut short or from another machine. SQLite itself is fuzzed upstream (OSS-Fuzz); what is fuzzed
// here is dltune's reading of whatever SQLite hands back.
//
// The seed is written by this binary: DLTUNE_FUZZ_WRITE_SEED=FILE makes it write a small
// recording (every field of every table set, then a sample with every optional empty, then
// realistic ones; 512-byte pages) to FILE and exit (tests/fuzz/run-fuzzers does this).
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "store/recording.hpp"
#include "unit/store/sample_fields.hpp"

namespace {

std::string g_path;

void write_seed(const char* path) {
  std::remove(path);
  dltune::store::RecordingInfo info;
  info.dltune_version = "fuzz";
  info.hostname = "seed";
  info.started_wall_ns = 1'764'500'000'000'000'000;
  info.interval_ns = 1'000'000'000;
  info.scope = "seed  host";
  info.command = {"python3", "train.py"};
  auto w = dltune::store::RecordingWriter::create(path, info, {.batch = 2});
  if (!w) {
    std::fprintf(stderr, "fuzz_recording: %s\n", w.error().message().c_str());
    std::exit(2);
  }
  bool ok = static_cast<bool>((*w)->append(dltune::testing::fill_all(1)));
  ok = ok && static_cast<bool>((*w)->append(dltune::testing::fill_empty(5000)));
  for (int t = 0; t < 3; ++t)
    ok = ok && static_cast<bool>((*w)->append(dltune::testing::realistic(t)));
  ok = ok && static_cast<bool>((*w)->put_document("summary", {{"exit", 0}, {"rate", 1.5}}));
  ok = ok && static_cast<bool>((*w)->finish(0));
  // Small pages: a small input, which libFuzzer mutates faster.
  sqlite3* db = nullptr;
  ok = ok && sqlite3_open(path, &db) == SQLITE_OK &&
       sqlite3_exec(db, "PRAGMA page_size = 512; VACUUM", nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  if (!ok) {
    std::fprintf(stderr, "fuzz_recording: could not write the seed %s\n", path);
    std::exit(2);
  }
  std::exit(0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seed = std::getenv("DLTUNE_FUZZ_WRITE_SEED")) write_seed(seed);
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  g_path = std::string(dir) + "/dltune-fuzz-recording-" + std::to_string(::getpid()) + ".db";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::remove((g_path + suffix).c_str());
  if (std::FILE* f = std::fopen(g_path.c_str(), "wb")) {
    const bool written = std::fwrite(data, 1, size, f) == size;
    std::fclose(f);
    if (!written) return 0;
  } else {
    return 0;
  }
  auto r = dltune::store::Recording::open(g_path);
  if (!r) return 0;
  const auto& rec = **r;
  (void)rec.info();
  (void)rec.times();
  const std::size_t n = rec.size() < 64 ? rec.size() : 64;
  for (std::size_t i = 0; i < n; ++i) (void)rec.at(i);
  (void)rec.for_each(
      0, n, [](std::size_t, dltune::monitor::Sample&&) -> dltune::Result<void> { return {}; });
  (void)rec.index_at(0);
  (void)rec.document("summary");
  (void)rec.document("env");
  return 0;
}

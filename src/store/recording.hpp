#pragma once
// Recordings: Samples in a SQLite file (docs/architecture.md "record → SQLite").
//
// Counters are stored raw, as the Sample holds them; rates come from Model::from on read, so a
// recording replayed shows exactly what `top` showed live. The schema is versioned
// (PRAGMA user_version and a meta row) and documented in docs/recording.md. A recording also holds
// what report, profile and compare need later: the host's env facts and check findings, the
// command and its exit, as JSON documents in the meta table.
//
// Writes are batched in transactions (WAL), so a crash loses at most the last batch and never
// corrupts what was committed.
//
// Extend, do not rename: recordings already written must stay readable (docs/recording.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.hpp"
#include "monitor/sample.hpp"

namespace dltune::store {

inline constexpr int kRecordingSchema = 1;

// The "source" of the events (document "events") that the job's own output gave (CUDA out of
// memory, NCCL errors: launch/output_watch.hpp), which doctor keeps when it writes its own.
inline constexpr const char* kJobOutputSource = "job output";

struct RecordingInfo {
  int schema = kRecordingSchema;
  std::string dltune_version;
  std::string hostname;
  std::int64_t started_wall_ns = 0;
  std::int64_t interval_ns = 0;
  // For people, not parsed: "HOST  pid 1234 and its tree", "HOST  cgroup /dltune/job",
  // "HOST  all processes", "HOST  host", "tree of python3" (record -- CMD), "run NAME" (run).
  std::string scope;
  std::vector<std::string> command;  // the job's argv, when record launched it
  // Set at the end (empty while recording or after a crash).
  std::optional<std::int64_t> ended_wall_ns;
  std::optional<int> exit_status;  // the job's, when record launched it
};

struct WriterOptions {
  bool force = false;  // replace an existing file (refused otherwise)
  // Samples per transaction; a crash loses at most this many.
  std::size_t batch = 10;
};

class RecordingWriter {
 public:
  // Creates `path` with the schema. Refuses an existing path unless options.force, and then
  // replaces it only once the new file is made (nothing overwritten on error).
  [[nodiscard]] static Result<std::unique_ptr<RecordingWriter>> create(const std::string& path,
                                                                       const RecordingInfo& info,
                                                                       WriterOptions options = {});
  ~RecordingWriter();  // commits what is pending
  [[nodiscard]] Result<void> append(const monitor::Sample& sample);
  // A JSON document kept with the recording under `key` ("env", "check", "summary", "profile").
  [[nodiscard]] Result<void> put_document(const std::string& key, const nlohmann::json& doc);
  // Commits the pending batch.
  [[nodiscard]] Result<void> flush();
  // Writes the end time and exit status, commits, closes.
  [[nodiscard]] Result<void> finish(std::optional<int> exit_status);
  [[nodiscard]] std::size_t samples_written() const;

 private:
  RecordingWriter();
  struct State;
  std::unique_ptr<State> state_;
};

class Recording {
 public:
  // Opens read-only. Errors: not a SQLite file, not a dltune recording, a newer schema than this
  // dltune reads, a truncated or corrupt file; each names the path.
  [[nodiscard]] static Result<std::unique_ptr<Recording>> open(const std::string& path);
  ~Recording();
  [[nodiscard]] const RecordingInfo& info() const;
  [[nodiscard]] std::size_t size() const;  // samples
  // The sample's wall times, in order (cheap: for seeking and time axes).
  [[nodiscard]] Result<std::vector<std::int64_t>> times() const;
  // Sample number `i` (0-based), whole.
  [[nodiscard]] Result<monitor::Sample> at(std::size_t i) const;
  // Samples number `begin` to `end` - 1, whole and in order, each handed to `each` with its
  // number; an error from `each` stops the walk and is returned. `each` must not read this
  // Recording (the walk holds its read transaction). One pass over each table in sample order:
  // a day at 1 Hz reads 1.5 to 1.75 times faster than with at() sample by sample (bench/README.md,
  // `dltune report`).
  using SampleVisitor = std::function<Result<void>(std::size_t, monitor::Sample&&)>;
  [[nodiscard]] Result<void> for_each(std::size_t begin, std::size_t end,
                                      const SampleVisitor& each) const;
  // The first sample at or after `wall_ns` (the last one when none is).
  [[nodiscard]] std::size_t index_at(std::int64_t wall_ns) const;
  // The sample `offset_ns` after the recording's start (--at); an error saying how long the
  // recording is when the offset is past its end.
  [[nodiscard]] Result<std::size_t> index_after(std::int64_t offset_ns) const;
  [[nodiscard]] Result<std::optional<nlohmann::json>> document(const std::string& key) const;

 private:
  Recording();
  struct State;
  std::unique_ptr<State> state_;
};

// Stores a document (`key`, JSON) in an existing recording, replacing one of the same key
// (`dltune profile --save` keeps its verdict with the recording it judged, for `report`). The
// file must open as a recording first; errors name it.
[[nodiscard]] Result<void> add_document(const std::string& path, const std::string& key,
                                        const nlohmann::json& doc);

}  // namespace dltune::store

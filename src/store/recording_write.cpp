// RecordingWriter: Samples appended in batched transactions, with prepared statements kept for
// the whole recording. What stays in memory is bounded by the processes of the last sample (to
// write process_info only when a process is new or changed), never by the number of samples.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/core.h>

#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/private_files.hpp"
#include "store/recording.hpp"
#include "store/recording_sql.hpp"

namespace dltune::store {

namespace {

using sql::Binder;
using sql::Database;
using sql::Statement;
using sqlite::Transaction;

// What process_info says of a process, as last written; `seen`: the sample it was last in.
struct Identity {
  pid_t ppid = 0;
  monitor::Role role{};
  std::string comm, cmdline;
  std::optional<int> rank;
  std::int64_t seen = 0;
  [[nodiscard]] bool same_as(const monitor::Process& p) const {
    return ppid == p.ppid && role == p.role && rank == p.rank && comm == p.comm &&
           cmdline == p.cmdline;
  }
  void assign(const monitor::Process& p) {
    ppid = p.ppid;
    role = p.role;
    rank = p.rank;
    comm = p.comm;
    cmdline = p.cmdline;
  }
};

std::string dir_of(const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Builds the schema in `tmp`, in rollback-journal mode so that the file stands alone when it is
// renamed (a -wal file is named after the path it was opened by).
Result<void> build(const std::string& tmp, const RecordingInfo& info) {
  auto db = Database::open(tmp, false, sql::kLabel);
  if (!db) return tl::unexpected(db.error());
  auto tx = Transaction::begin(*db, Transaction::Mode::kWrite);
  if (!tx) return tl::unexpected(tx.error());
  if (auto r = sql::create_schema(*db, info); !r) return r;
  return tx->commit();
}

// Replaces (force) or creates `path` with the built file in one rename; without force, never
// replaces (core/local_file: fsync, then rename or link).
Result<void> install(local_file::PendingFile& pending, const std::string& path, bool force) {
  if (auto ok = pending.commit(force); !ok) {
    if (ok.error().errno_ == EEXIST)
      return fail(fmt::format("{} exists; use --force to replace it", path));
    if (ok.error().errno_ == 0) return tl::unexpected(ok.error());  // no longer a regular file
    return fail("cannot create the recording", path, ok.error().errno_);
  }
  // The replaced recording's -wal and -shm would otherwise be taken for the new one's.
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::string side = path + suffix;
    if (::unlink(side.c_str()) != 0 && errno != ENOENT)
      return fail("cannot remove the old recording's", side, errno);
  }
  return private_files::sync_dir(dir_of(path));
}

}  // namespace

struct RecordingWriter::State {
  Database db;
  WriterOptions options;
  // One prepared statement per table, reset and rebound for every row.
  std::optional<Statement> sample, cpu, disk, net, cgroup, process, process_info, gpu, gpu_process;
  std::optional<Transaction> tx;
  std::size_t committed = 0, pending = 0;
  bool finished = false;
  std::string path;  // for messages, also once the database is closed
  // The identity last written for each process of the last sample, updated in place (no
  // allocation for a process that stays the same).
  std::map<std::pair<pid_t, std::uint64_t>, Identity> written;

  Result<void> prepare() {
    const std::pair<std::optional<Statement>*, const char*> all[] = {
        {&sample, "sample"},
        {&cpu, "cpu"},
        {&disk, "disk"},
        {&net, "net"},
        {&cgroup, "cgroup"},
        {&process, "process"},
        {&gpu, "gpu"},
        {&gpu_process, "gpu_process"},
        {&process_info, "process_info"}};
    for (auto& [st, table] : all) {
      auto p = db.prepare(sql::insert_sql(table).c_str(), "cannot write the recording");
      if (!p) return tl::unexpected(p.error());
      st->emplace(std::move(*p));
    }
    return {};
  }

  template <class F>
  Result<void> row(std::optional<Statement>& st, F&& bind) {
    st->reset();
    Binder b{*st};
    bind(b);
    return st->run();
  }

  Result<void> write(std::int64_t id, const monitor::Sample& s);

  Result<void> commit() {
    if (!tx) return {};
    auto t = std::move(*tx);
    tx.reset();
    auto r = t.commit();
    if (!r) {
      forget_pending();
      return r;
    }
    committed += pending;
    pending = 0;
    return {};
  }

  // The pending batch rolled back: its process_info rows went with it.
  void forget_pending() {
    tx.reset();
    pending = 0;
    written.clear();
  }
};

Result<void> RecordingWriter::State::write(std::int64_t id, const monitor::Sample& s) {
  if (auto r = row(sample, [&](Binder& b) { sql::bind_sample(b, id, s); }); !r) return r;
  for (const auto& c : s.system.cpus) {
    if (auto r = row(cpu, [&](Binder& b) { sql::bind_cpu(b, id, c); }); !r) return r;
  }
  for (std::size_t i = 0; i < s.system.disks.size(); ++i) {
    auto bind = [&](Binder& b) { sql::bind_disk(b, id, static_cast<int>(i), s.system.disks[i]); };
    if (auto r = row(disk, bind); !r) return r;
  }
  for (std::size_t i = 0; i < s.system.net.size(); ++i) {
    auto bind = [&](Binder& b) { sql::bind_net(b, id, static_cast<int>(i), s.system.net[i]); };
    if (auto r = row(net, bind); !r) return r;
  }
  if (s.cgroup) {
    if (auto r = row(cgroup, [&](Binder& b) { sql::bind_cgroup(b, id, *s.cgroup); }); !r) return r;
  }
  for (const auto& p : s.processes) {
    if (auto r = row(process, [&](Binder& b) { sql::bind_process(b, id, p); }); !r) return r;
    auto [it, added] = written.try_emplace(std::make_pair(p.pid, p.start_ticks));
    if (added || !it->second.same_as(p)) {
      auto r = row(process_info, [&](Binder& b) { sql::bind_process_info(b, id, p); });
      if (!r) {
        written.erase(it);
        return r;
      }
      it->second.assign(p);
    }
    it->second.seen = id;
  }
  // Only the processes of this sample are remembered: memory stays bounded by the scope.
  std::erase_if(written, [id](const auto& kv) { return kv.second.seen != id; });
  for (const auto& g : s.gpus) {
    if (auto r = row(gpu, [&](Binder& b) { sql::bind_gpu(b, id, g); }); !r) return r;
    for (std::size_t i = 0; i < g.processes.size(); ++i) {
      auto bind = [&](Binder& b) {
        sql::bind_gpu_process(b, id, g.index, static_cast<int>(i), g.processes[i]);
      };
      if (auto r = row(gpu_process, bind); !r) return r;
    }
  }
  return {};
}

RecordingWriter::RecordingWriter() : state_(std::make_unique<State>()) {}

RecordingWriter::~RecordingWriter() {
  if (state_ && !state_->finished) (void)state_->commit();
}

Result<std::unique_ptr<RecordingWriter>> RecordingWriter::create(const std::string& path,
                                                                 const RecordingInfo& info,
                                                                 WriterOptions options) {
  const auto target = local_file::output_target(path, options.force);
  if (!target) return tl::unexpected(target.error());
  if (*target == "-") return fail("a recording is a SQLite file, not a stream:", "-");
  auto pending = local_file::PendingFile::beside(*target, 0644);
  if (!pending) return tl::unexpected(pending.error());
  const std::string tmp = pending->temp_path();
  auto built = build(tmp, info);
  if (built) built = install(*pending, *target, options.force);
  if (!built) {
    // The temporary file itself goes with `pending`; SQLite's own files beside it here.
    for (const char* suffix : {"-journal", "-wal", "-shm"}) ::unlink((tmp + suffix).c_str());
    return tl::unexpected(built.error());
  }

  std::unique_ptr<RecordingWriter> w(new RecordingWriter());
  State& s = *w->state_;
  s.options = options;
  s.path = *target;
  if (s.options.batch == 0) s.options.batch = 1;
  auto db = Database::open(*target, false, sql::kLabel);
  if (!db) return tl::unexpected(db.error());
  s.db = std::move(*db);
  {
    // WAL: a batch is one append to the -wal file, and a crash loses only the uncommitted one.
    // synchronous=NORMAL: a committed batch survives a crash of dltune; a power loss may lose
    // the last batches but never corrupts the file (sqlite.org/pragma.html#pragma_synchronous).
    auto mode = s.db.prepare("PRAGMA journal_mode = WAL", "cannot set up the recording");
    if (!mode) return tl::unexpected(mode.error());
    auto r = mode->step();
    if (!r) return tl::unexpected(r.error());
    if (!*r || mode->text_at(0) != "wal")
      return fail("cannot put the recording in WAL mode:", path);
  }
  if (auto r = s.db.exec("PRAGMA synchronous = NORMAL", "cannot set up the recording"); !r)
    return tl::unexpected(r.error());
  if (auto r = s.prepare(); !r) return tl::unexpected(r.error());
  return w;
}

Result<void> RecordingWriter::append(const monitor::Sample& sample) {
  State& s = *state_;
  if (s.finished) return fail("the recording is finished:", s.path);
  if (!s.tx) {
    auto tx = Transaction::begin(s.db, Transaction::Mode::kWrite);
    if (!tx) return tl::unexpected(tx.error());
    s.tx.emplace(std::move(*tx));
  }
  const auto id = static_cast<std::int64_t>(s.committed + s.pending + 1);
  if (auto r = s.write(id, sample); !r) {
    s.forget_pending();
    return r;
  }
  ++s.pending;
  if (s.pending >= s.options.batch) return s.commit();
  return {};
}

Result<void> RecordingWriter::put_document(const std::string& key, const nlohmann::json& doc) {
  State& s = *state_;
  if (s.finished) return fail("the recording is finished:", s.path);
  if (auto r = s.commit(); !r) return r;
  auto st = s.db.prepare("INSERT OR REPLACE INTO document (key, json) VALUES (?1, ?2)",
                         "cannot write a document to the recording");
  if (!st) return tl::unexpected(st.error());
  st->bind(1, std::string_view(key)).bind(2, std::string_view(doc.dump()));
  return st->run();
}

Result<void> RecordingWriter::flush() {
  return state_->commit();
}

Result<void> RecordingWriter::finish(std::optional<int> exit_status) {
  State& s = *state_;
  if (s.finished) return {};
  if (auto r = s.commit(); !r) return r;
  s.finished = true;
  if (auto r = sql::put_meta(s.db, "ended_wall_ns", std::to_string(now_ns(CLOCK_REALTIME))); !r)
    return r;
  std::optional<std::string> status;
  if (exit_status) status = std::to_string(*exit_status);
  if (auto r = sql::put_meta(s.db, "exit_status", status); !r) return r;
  // A finished recording is one self-contained file: the -wal is checkpointed into it and gone.
  s.sample.reset(), s.cpu.reset(), s.disk.reset(), s.net.reset(), s.cgroup.reset();
  s.process.reset(), s.process_info.reset(), s.gpu.reset(), s.gpu_process.reset();
  auto mode = s.db.exec("PRAGMA journal_mode = DELETE", "cannot close the recording");
  s.db = Database();
  return mode;
}

std::size_t RecordingWriter::samples_written() const {
  return state_->committed + state_->pending;
}

Result<void> add_document(const std::string& path, const std::string& key,
                          const nlohmann::json& doc) {
  // Checked as a recording first: never write into some other SQLite file.
  if (auto r = Recording::open(path); !r) return tl::unexpected(r.error());
  auto db = sql::Database::open(path, false, sql::kLabel);
  if (!db) return tl::unexpected(db.error());
  auto st = db->prepare("INSERT OR REPLACE INTO document (key, json) VALUES (?1, ?2)",
                        "cannot write a document to the recording");
  if (!st) return tl::unexpected(st.error());
  st->bind(1, std::string_view(key)).bind(2, std::string_view(doc.dump()));
  return st->run();
}

}  // namespace dltune::store

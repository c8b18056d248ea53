// Recording: a recording opened read-only. The sample ids and wall times are loaded once (16
// bytes a sample, for seeking); each at(i) reads one sample's rows through statements prepared
// at open, in one read transaction so that a recording still being written reads consistently.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "store/recording.hpp"

#include "core/local_file.hpp"
#include "store/recording_sql.hpp"

namespace dltune::store {

namespace {

using sql::Columns;
using sql::Database;
using sql::Statement;
using sqlite::Transaction;

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// The file's own header (sqlite.org/fileformat2.html §1.3): the magic string, and the database
// size in pages, which is valid when the change counter (offset 24) equals the
// version-valid-for number (offset 92). Pages are only ever added to a recording, so a file
// shorter than that size was cut.
Result<void> check_header(const std::string& path) {
  // Without blocking: a FIFO (`<(...)`) or a device is refused at once, not waited on.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return fail("cannot open the recording", path, errno);
  std::array<unsigned char, 100> h{};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return fail("cannot read the recording", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(fmt::format("not a dltune recording ({}, not a regular file):",
                            local_file::kind_of(st.st_mode)),
                path);
  }
  const ssize_t n = ::pread(fd, h.data(), h.size(), 0);
  const int err = n < 0 ? errno : 0;
  ::close(fd);
  if (err != 0) return fail("cannot read the recording", path, err);
  if (n < static_cast<ssize_t>(h.size()) || std::memcmp(h.data(), "SQLite format 3", 16) != 0)
    return fail("not a dltune recording (not an SQLite file):", path);
  std::uint64_t page_size = (std::uint64_t{h[16]} << 8) | h[17];
  if (page_size == 1) page_size = 65536;
  const std::uint64_t pages = be32(&h[28]);
  // Only for a file in rollback-journal mode (byte 18 is 1; finished recordings are): in WAL
  // mode a checkpoint copies page 1 before the pages that extend the file, so a recording being
  // written can briefly look short. A WAL-mode file cut short fails on reading its last sample.
  const bool rollback_mode = h[18] == 1;
  if (rollback_mode && be32(&h[24]) == be32(&h[92]) &&
      pages * page_size > static_cast<std::uint64_t>(st.st_size))
    return fail(
        fmt::format("the recording is truncated ({} of {} bytes):", st.st_size, pages * page_size),
        path);
  return {};
}

// `where` and `order` select one sample's rows (`= ?1`, by pid) or a range's (`BETWEEN ?1 AND ?2`,
// by sample and pid). `present`: the columns the file's process table has.
// `rank`: the file's process_info has the rank column (added after schema 1).
std::string process_select(std::string_view where, std::string_view order,
                           const std::set<std::string>& present, bool rank) {
  // The process_info row in force at the sample: the latest one written at or before it.
  return fmt::format(
      "SELECT {}, i.ppid, i.comm, i.cmdline, i.role, {} FROM process p JOIN process_info i"
      " ON i.pid = p.pid AND i.start_ticks = p.start_ticks AND i.first_sample ="
      " (SELECT max(first_sample) FROM process_info WHERE pid = p.pid AND"
      " start_ticks = p.start_ticks AND first_sample <= p.sample_id)"
      " WHERE p.sample_id {} ORDER BY {}",
      sql::table("process").column_names("p", &present), rank ? "i.rank" : "NULL", where, order);
}

// A table's rows for samples ?1 to ?2, in sample order and, within a sample, in the Sample's.
// In a walk, process rows come without their text, which is joined in memory from process_info
// (a few rows per process) rather than by a subquery per row: the same row shape as
// process_select, with blanks for the text.
std::string range_select(std::string_view name, const std::set<std::string>& present) {
  const auto& t = sql::table(name);
  if (name == "process")
    return fmt::format(
        "SELECT {}, 0, '', '', '', NULL FROM process WHERE sample_id BETWEEN ?1 AND ?2 ORDER BY "
        "sample_id, pid",
        t.column_names("", &present));
  if (name == "sample")
    return fmt::format("SELECT {} FROM sample WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
                       t.column_names("", &present));
  return fmt::format("SELECT {} FROM {} WHERE sample_id BETWEEN ?1 AND ?2 ORDER BY sample_id, {}",
                     t.column_names("", &present), t.name, t.order_by);
}

// Every process_info row in the shape of process_select's rows (first_sample in the first
// column, the counters NULL), so that read_process reads its text.
std::string process_info_select(bool rank) {
  const auto& t = sql::table("process");
  std::string columns = "first_sample, pid, start_ticks, ''";
  for (std::size_t i = 4; i < t.columns.size(); ++i) columns += ", NULL";
  return fmt::format(
      "SELECT {}, ppid, comm, cmdline, role, {} FROM process_info ORDER BY pid, start_ticks, "
      "first_sample",
      columns, rank ? "rank" : "NULL");
}

}  // namespace

struct Recording::State {
  Database db;
  RecordingInfo info;
  std::vector<std::int64_t> ids, walls;
  std::optional<Statement> sample, cpu, disk, net, cgroup, process, gpu, gpu_process, document;
  // The columns each table of the file has: a column added later reads as NULL in an older file.
  std::map<std::string, std::set<std::string>> present;

  // The columns each table of this file has (PRAGMA table_info).
  Result<std::set<std::string>> columns_of(const std::string& table) {
    auto st = db.prepare(fmt::format("PRAGMA table_info({})", table).c_str(),
                         "cannot read the recording");
    if (!st) return tl::unexpected(st.error());
    std::set<std::string> out;
    for (;;) {
      auto row = st->step();
      if (!row) return tl::unexpected(row.error());
      if (!*row) break;
      out.insert(st->text_at(1));
    }
    return out;
  }

  Result<void> prepare() {
    for (const auto& t : sql::tables()) {
      auto c = columns_of(t.name);
      if (!c) return tl::unexpected(c.error());
      present[t.name] = std::move(*c);
    }
    const auto select = [&](const char* t) { return sql::select_sql(t, &present[t]); };
    const std::pair<std::optional<Statement>*, std::string> all[] = {
        {&sample, select("sample")},
        {&cpu, select("cpu")},
        {&disk, select("disk")},
        {&net, select("net")},
        {&cgroup, select("cgroup")},
        {&process, process_select("= ?1", "p.pid", present["process"],
                                  present["process_info"].contains("rank"))},
        {&gpu, select("gpu")},
        {&gpu_process, select("gpu_process")},
        {&document, "SELECT json FROM document WHERE key = ?1"}};
    for (auto& [st, text] : all) {
      auto p = db.prepare(text.c_str(), "cannot read the recording");
      if (!p) return tl::unexpected(p.error());
      st->emplace(std::move(*p));
    }
    return {};
  }

  Result<void> load_times() {
    auto st = db.prepare("SELECT id, wall_ns FROM sample ORDER BY id", "cannot read the recording");
    if (!st) return tl::unexpected(st.error());
    for (;;) {
      auto row = st->step();
      if (!row) return tl::unexpected(row.error());
      if (!*row) return {};
      ids.push_back(st->int64_at(0));
      walls.push_back(st->int64_at(1));
    }
  }

  // Every row of `st` for sample `id`, each handed to `each`.
  template <class F>
  Result<void> rows(std::optional<Statement>& st, std::int64_t id, F&& each) {
    st->reset();
    st->bind(1, id);
    for (;;) {
      auto row = st->step();
      if (!row) return tl::unexpected(row.error());
      if (!*row) return {};
      Columns c{*st};
      each(c);
    }
  }

  Result<monitor::Sample> read(std::int64_t id);
};

Result<monitor::Sample> Recording::State::read(std::int64_t id) {
  monitor::Sample s;
  bool found = false;
  auto r = rows(sample, id, [&](Columns& c) {
    sql::read_sample(c, s);
    found = true;
  });
  if (!r) return tl::unexpected(r.error());
  if (!found) return fail(fmt::format("the recording has no sample {}:", id), db.path());
  auto& y = s.system;
  if (r = rows(cpu, id, [&](Columns& c) { y.cpus.push_back(sql::read_cpu(c)); }); !r)
    return tl::unexpected(r.error());
  if (r = rows(disk, id, [&](Columns& c) { y.disks.push_back(sql::read_disk(c)); }); !r)
    return tl::unexpected(r.error());
  if (r = rows(net, id, [&](Columns& c) { y.net.push_back(sql::read_net(c)); }); !r)
    return tl::unexpected(r.error());
  if (r = rows(cgroup, id, [&](Columns& c) { s.cgroup = sql::read_cgroup(c); }); !r)
    return tl::unexpected(r.error());
  if (r = rows(process, id, [&](Columns& c) { s.processes.push_back(sql::read_process(c)); }); !r)
    return tl::unexpected(r.error());
  if (r = rows(gpu, id, [&](Columns& c) { s.gpus.push_back(sql::read_gpu(c)); }); !r)
    return tl::unexpected(r.error());
  r = rows(gpu_process, id, [&](Columns& c) {
    unsigned index = 0;
    auto p = sql::read_gpu_process(c, index);
    for (auto& g : s.gpus)
      if (g.index == index) g.processes.push_back(p);
  });
  if (!r) return tl::unexpected(r.error());
  return s;
}

Recording::Recording() : state_(std::make_unique<State>()) {}
Recording::~Recording() = default;

Result<std::unique_ptr<Recording>> Recording::open(const std::string& path) {
  if (auto r = check_header(path); !r) return tl::unexpected(r.error());
  std::unique_ptr<Recording> rec(new Recording());
  State& s = *rec->state_;
  auto db = Database::open(path, true, sql::kLabel);
  if (!db) return tl::unexpected(db.error());
  s.db = std::move(*db);
  auto info = sql::read_info(s.db);
  if (!info) return tl::unexpected(info.error());
  s.info = std::move(*info);
  if (auto r = s.prepare(); !r) return tl::unexpected(r.error());
  if (auto r = s.load_times(); !r) return tl::unexpected(r.error());
  // The last sample is read whole once: a file cut short fails here, at open, rather than later.
  if (!s.ids.empty()) {
    if (auto last = rec->at(s.ids.size() - 1); !last) return tl::unexpected(last.error());
  }
  return rec;
}

const RecordingInfo& Recording::info() const {
  return state_->info;
}

std::size_t Recording::size() const {
  return state_->ids.size();
}

Result<std::vector<std::int64_t>> Recording::times() const {
  return state_->walls;
}

Result<monitor::Sample> Recording::at(std::size_t i) const {
  State& s = *state_;
  if (i >= s.ids.size())
    return fail(fmt::format("no sample {} in the recording ({} samples):", i, s.ids.size()),
                s.db.path());
  auto tx = Transaction::begin(s.db, Transaction::Mode::kRead);
  if (!tx) return tl::unexpected(tx.error());
  return s.read(s.ids[i]);
}

namespace {

// One table's rows over a range of samples, read in step with the samples (a merge on
// sample_id: every table is ordered by it).
struct Cursor {
  Statement st;
  bool has_row = false;
  Result<void> start(std::int64_t first, std::int64_t last) {
    st.bind(1, first);
    st.bind(2, last);
    return next();
  }
  Result<void> next() {
    auto row = st.step();
    if (!row) return tl::unexpected(row.error());
    has_row = *row;
    return {};
  }
  // Hands every row of sample `id` to `each`; rows of earlier samples (none in a recording
  // that dltune wrote) are passed over.
  template <class F>
  Result<void> rows(std::int64_t id, F&& each) {
    while (has_row && st.int64_at(0) <= id) {
      if (st.int64_at(0) == id) {
        Columns c{st};
        each(c);
      }
      if (auto r = next(); !r) return r;
    }
    return {};
  }
};

}  // namespace

Result<void> Recording::for_each(std::size_t begin, std::size_t end,
                                 const SampleVisitor& each) const {
  State& s = *state_;
  end = std::min(end, s.ids.size());
  if (begin >= end) return {};
  auto tx = Transaction::begin(s.db, Transaction::Mode::kRead);
  if (!tx) return tl::unexpected(tx.error());
  const char* names[] = {"sample", "cpu", "disk", "net", "cgroup", "process", "gpu", "gpu_process"};
  std::vector<Cursor> cursors;
  cursors.reserve(std::size(names));
  for (const char* name : names) {
    auto st =
        s.db.prepare(range_select(name, s.present[name]).c_str(), "cannot read the recording");
    if (!st) return tl::unexpected(st.error());
    cursors.push_back(Cursor{std::move(*st)});
    if (auto r = cursors.back().start(s.ids[begin], s.ids[end - 1]); !r) return r;
  }
  Cursor &sample = cursors[0], &cpu = cursors[1], &disk = cursors[2], &net = cursors[3],
         &cgroup = cursors[4], &process = cursors[5], &gpu = cursors[6], &gpu_process = cursors[7];
  // process_info by identity (pid, start_ticks): its rows in first_sample order.
  std::map<std::pair<pid_t, std::uint64_t>, std::vector<std::pair<std::int64_t, monitor::Process>>>
      infos;
  {
    auto st = s.db.prepare(process_info_select(s.present["process_info"].contains("rank")).c_str(),
                           "cannot read the recording");
    if (!st) return tl::unexpected(st.error());
    for (;;) {
      auto row = st->step();
      if (!row) return tl::unexpected(row.error());
      if (!*row) break;
      Columns c{*st};
      const std::int64_t first = st->int64_at(0);
      auto p = sql::read_process(c);
      infos[{p.pid, p.start_ticks}].emplace_back(first, std::move(p));
    }
  }
  // The process_info row in force at sample `id`: the latest written at or before it (none: the
  // row is left out, as the join of at() leaves it out).
  auto text_of = [&](const monitor::Process& p, std::int64_t id) -> const monitor::Process* {
    auto it = infos.find({p.pid, p.start_ticks});
    if (it == infos.end()) return nullptr;
    const monitor::Process* found = nullptr;
    for (const auto& [first, info] : it->second)
      if (first <= id) found = &info;
    return found;
  };
  for (std::size_t i = begin; i < end; ++i) {
    const std::int64_t id = s.ids[i];
    monitor::Sample m;
    bool found = false;
    auto r = sample.rows(id, [&](Columns& c) {
      sql::read_sample(c, m);
      found = true;
    });
    if (r && !found) return fail(fmt::format("the recording has no sample {}:", id), s.db.path());
    auto& y = m.system;
    if (r) r = cpu.rows(id, [&](Columns& c) { y.cpus.push_back(sql::read_cpu(c)); });
    if (r) r = disk.rows(id, [&](Columns& c) { y.disks.push_back(sql::read_disk(c)); });
    if (r) r = net.rows(id, [&](Columns& c) { y.net.push_back(sql::read_net(c)); });
    if (r) r = cgroup.rows(id, [&](Columns& c) { m.cgroup = sql::read_cgroup(c); });
    if (r)
      r = process.rows(id, [&](Columns& c) {
        auto p = sql::read_process(c);
        const monitor::Process* text = text_of(p, id);
        if (text == nullptr) return;
        p.ppid = text->ppid;
        p.comm = text->comm;
        p.cmdline = text->cmdline;
        p.role = text->role;
        p.rank = text->rank;
        m.processes.push_back(std::move(p));
      });
    if (r) r = gpu.rows(id, [&](Columns& c) { m.gpus.push_back(sql::read_gpu(c)); });
    if (r)
      r = gpu_process.rows(id, [&](Columns& c) {
        unsigned index = 0;
        auto p = sql::read_gpu_process(c, index);
        for (auto& g : m.gpus)
          if (g.index == index) g.processes.push_back(p);
      });
    if (!r) return r;
    if (auto e = each(i, std::move(m)); !e) return e;
  }
  return {};
}

std::size_t Recording::index_at(std::int64_t wall_ns) const {
  const auto& w = state_->walls;
  if (w.empty()) return 0;
  const auto it = std::lower_bound(w.begin(), w.end(), wall_ns);
  if (it == w.end()) return w.size() - 1;
  return static_cast<std::size_t>(it - w.begin());
}

Result<std::size_t> Recording::index_after(std::int64_t offset_ns) const {
  const auto& w = state_->walls;
  const std::int64_t start = info().started_wall_ns;
  const std::int64_t end = info().ended_wall_ns.value_or(w.empty() ? 0 : w.back());
  if (end > 0 && start + offset_ns > end)
    return fail(fmt::format("--at {}: past the recording's end ({} long)",
                            text::format_duration_ns(offset_ns),
                            text::human_duration(static_cast<double>(end - start) / 1e9)));
  return index_at(start + offset_ns);
}

Result<std::optional<nlohmann::json>> Recording::document(const std::string& key) const {
  State& s = *state_;
  s.document->reset();
  s.document->bind(1, std::string_view(key));
  auto row = s.document->step();
  if (!row) return tl::unexpected(row.error());
  if (!*row) return std::optional<nlohmann::json>();
  const std::string text = s.document->text_at(0);
  s.document->reset();  // ends the statement's read, which would hold back the writer's checkpoints
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded())
    return fail(fmt::format("the recording's document {} is not JSON:", key), s.db.path());
  return std::optional<nlohmann::json>(std::move(doc));
}

}  // namespace dltune::store

#pragma once
// The recording's SQL, shared by the writer and the reader (internal to store/): the schema, the
// meta rows, and one bind/read pair per table, kept side by side so that a column added to one is
// seen missing in the other (docs/recording.md describes the tables).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/sqlite.hpp"
#include "monitor/sample.hpp"
#include "store/recording.hpp"

namespace dltune::store::sql {

using sqlite::Database;
using sqlite::Statement;

inline constexpr std::string_view kFormat = "dltune-recording";
inline constexpr std::string_view kLabel = "the recording";

// Binds parameters ?1, ?2, ... in order. Unsigned counters are stored as SQLite's signed 64-bit
// integers, bit for bit (a counter past 2^63 reads negative in sqlite3, and back exactly here).
struct Binder {
  Statement& st;
  int i = 1;
  void u(std::uint64_t v) { st.bind(i++, static_cast<std::int64_t>(v)); }
  void s(std::int64_t v) { st.bind(i++, v); }
  void d(double v) { st.bind(i++, v); }
  void t(std::string_view v) { st.bind(i++, v); }
  void null() { st.bind_null(i++); }
  template <class T>
  void ou(const std::optional<T>& v) {
    if (v) {
      st.bind(i++, static_cast<std::int64_t>(*v));
    } else {
      null();
    }
  }
  void od(const std::optional<double>& v) { st.bind(i++, v); }
  void ot(const std::optional<std::string>& v) { st.bind(i++, v); }
};

// Reads the columns of the current row in order, from column 0.
struct Columns {
  const Statement& st;
  int i = 0;
  std::uint64_t u() { return static_cast<std::uint64_t>(st.int64_at(i++)); }
  std::int64_t s() { return st.int64_at(i++); }
  double d() { return st.double_at(i++); }
  std::string t() { return st.text_at(i++); }
  [[nodiscard]] bool null_here() const;  // the next column is NULL
  template <class T>
  std::optional<T> ou() {
    auto v = st.optional_int64_at(i++);
    if (!v) return std::nullopt;
    return static_cast<T>(*v);
  }
  std::optional<double> od() { return st.optional_double_at(i++); }
  std::optional<std::string> ot() { return st.optional_text_at(i++); }
};

// One table of the schema: its column definitions ("name TYPE"), in the order rows are bound.
struct Table {
  std::string name;
  std::vector<std::string> columns;
  std::string primary_key;  // empty: declared in a column
  std::string order_by;     // the rows of one sample, in the Sample's order
  bool without_rowid = false;
  // "a, b, c", or "p.a, p.b, p.c" with an alias. With `present` (the columns the file's table
  // has), a column the file lacks reads as NULL: a recording made before a nullable column was
  // added at the end of a table still opens (docs/recording.md, Versioning).
  [[nodiscard]] std::string column_names(std::string_view alias,
                                         const std::set<std::string>* present = nullptr) const;
};

// recording_schema.cpp
[[nodiscard]] const std::vector<Table>& tables();
[[nodiscard]] const Table& table(std::string_view name);
// Creates the tables and the meta rows in an empty database.
[[nodiscard]] Result<void> create_schema(Database& db, const RecordingInfo& info);
[[nodiscard]] Result<void> put_meta(Database& db, std::string_view key,
                                    const std::optional<std::string>& value);
// Checks the format and schema version, and reads RecordingInfo from meta.
[[nodiscard]] Result<RecordingInfo> read_info(Database& db);

// "INSERT INTO <table> VALUES (?1, ...)" with the table's column count, and
// "SELECT <columns> FROM <table> WHERE sample_id = ?1 ORDER BY <key>".
[[nodiscard]] std::string insert_sql(std::string_view table);
[[nodiscard]] std::string select_sql(std::string_view table,
                                     const std::set<std::string>* present = nullptr);

// recording_rows.cpp: each read_* starts at the row's first column (sample_id or id).
void bind_sample(Binder& b, std::int64_t id, const monitor::Sample& s);
void read_sample(Columns& c, monitor::Sample& s);  // skips the id column
void bind_cpu(Binder& b, std::int64_t id, const monitor::CpuTimes& cpu);
monitor::CpuTimes read_cpu(Columns& c);
void bind_disk(Binder& b, std::int64_t id, int seq, const monitor::Disk& d);
monitor::Disk read_disk(Columns& c);
void bind_net(Binder& b, std::int64_t id, int seq, const monitor::NetDevice& n);
monitor::NetDevice read_net(Columns& c);
void bind_cgroup(Binder& b, std::int64_t id, const monitor::Cgroup& g);
monitor::Cgroup read_cgroup(Columns& c);
// process: the counters; process_info: the slowly changing text, one row per identity and change.
void bind_process(Binder& b, std::int64_t id, const monitor::Process& p);
monitor::Process read_process(Columns& c);  // with its process_info columns after the counters
void bind_process_info(Binder& b, std::int64_t id, const monitor::Process& p);
void bind_gpu(Binder& b, std::int64_t id, const monitor::Gpu& g);
monitor::Gpu read_gpu(Columns& c);
void bind_gpu_process(Binder& b, std::int64_t id, unsigned gpu, int seq,
                      const monitor::GpuProcess& p);
monitor::GpuProcess read_gpu_process(Columns& c, unsigned& gpu);

}  // namespace dltune::store::sql

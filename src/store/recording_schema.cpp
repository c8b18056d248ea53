// The recording's schema (version 1, docs/recording.md) and its meta rows.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "store/recording_sql.hpp"

namespace dltune::store::sql {

namespace {

// The five PSI columns of one resource's line, as "<prefix>_<line>_<field>".
void add_pressure(std::vector<std::string>& cols, std::string_view prefix) {
  for (const char* res : {"cpu", "memory", "io"}) {
    for (const char* line : {"some", "full"}) {
      cols.push_back(fmt::format("{}{}_{}_total_us INTEGER", prefix, res, line));
      for (const char* avg : {"avg10", "avg60", "avg300"})
        cols.push_back(fmt::format("{}{}_{}_{} REAL", prefix, res, line, avg));
    }
  }
}

std::vector<Table> make_tables() {
  std::vector<Table> t;
  t.push_back(Table{
      "sample",
      {"id INTEGER PRIMARY KEY", "wall_ns INTEGER NOT NULL", "monotonic_ns INTEGER NOT NULL",
       "ticks_per_second INTEGER NOT NULL", "page_size INTEGER NOT NULL",
       // /proc/stat's "cpu" line, ticks
       "cpu_user INTEGER", "cpu_nice INTEGER", "cpu_system INTEGER", "cpu_idle INTEGER",
       "cpu_iowait INTEGER", "cpu_irq INTEGER", "cpu_softirq INTEGER", "cpu_steal INTEGER",
       "context_switches INTEGER", "processes_forked INTEGER", "procs_running INTEGER",
       "procs_blocked INTEGER",
       // /proc/meminfo, bytes
       "mem_total INTEGER", "mem_free INTEGER", "mem_available INTEGER", "mem_buffers INTEGER",
       "mem_cached INTEGER", "mem_shmem INTEGER", "swap_total INTEGER", "swap_free INTEGER",
       "mem_dirty INTEGER", "mem_writeback INTEGER", "mem_anon_huge INTEGER", "swap_cached INTEGER",
       // /proc/vmstat
       "pswpin INTEGER", "pswpout INTEGER", "pgfault INTEGER", "pgmajfault INTEGER",
       "pgscan INTEGER", "pgsteal INTEGER", "workingset_refault_file INTEGER",
       "workingset_refault_anon INTEGER", "thp_fault_alloc INTEGER", "thp_fault_fallback INTEGER",
       "thp_collapse_alloc INTEGER", "compact_stall INTEGER", "oom_kill INTEGER"},
      "",
      "id",
      false});
  add_pressure(t.back().columns, "psi_");
  // Added after schema 1 was first written (nullable, at the end: no new version).
  t.back().columns.emplace_back("observer_cpu_us INTEGER");
  t.push_back(Table{"cpu",
                    {"sample_id INTEGER NOT NULL", "cpu INTEGER NOT NULL", "user INTEGER",
                     "nice INTEGER", "system INTEGER", "idle INTEGER", "iowait INTEGER",
                     "irq INTEGER", "softirq INTEGER", "steal INTEGER"},
                    "sample_id, cpu",
                    "cpu",
                    true});
  t.push_back(Table{
      "disk",
      {"sample_id INTEGER NOT NULL", "seq INTEGER NOT NULL", "name TEXT NOT NULL", "reads INTEGER",
       "read_sectors INTEGER", "read_ms INTEGER", "writes INTEGER", "write_sectors INTEGER",
       "write_ms INTEGER", "in_flight INTEGER", "io_ms INTEGER", "weighted_io_ms INTEGER"},
      "sample_id, seq",
      "seq",
      true});
  t.push_back(
      Table{"net",
            {"sample_id INTEGER NOT NULL", "seq INTEGER NOT NULL", "name TEXT NOT NULL",
             "rx_bytes INTEGER", "rx_packets INTEGER", "rx_errors INTEGER", "rx_dropped INTEGER",
             "tx_bytes INTEGER", "tx_packets INTEGER", "tx_errors INTEGER", "tx_dropped INTEGER"},
            "sample_id, seq",
            "seq",
            true});
  t.push_back(Table{"cgroup",
                    {"sample_id INTEGER PRIMARY KEY",
                     "path TEXT NOT NULL",
                     "version TEXT NOT NULL",
                     "cpu_usage_us INTEGER",
                     "cpu_user_us INTEGER",
                     "cpu_system_us INTEGER",
                     "nr_periods INTEGER",
                     "nr_throttled INTEGER",
                     "throttled_us INTEGER",
                     "cpu_quota_cpus REAL",
                     "memory_bytes INTEGER",
                     "memory_limit_bytes INTEGER",
                     "memory_peak_bytes INTEGER",
                     "swap_bytes INTEGER",
                     "anon_bytes INTEGER",
                     "file_bytes INTEGER",
                     "failcnt INTEGER",
                     "events_high INTEGER",
                     "events_oom INTEGER",
                     "events_oom_kill INTEGER",
                     "workingset_refault_file INTEGER",
                     "workingset_refault_anon INTEGER",
                     "pgmajfault INTEGER",
                     "pids INTEGER"},
                    "",
                    "sample_id",
                    false});
  add_pressure(t.back().columns, "psi_");
  // Added after schema 1 was first written (nullable, at the end: no new version).
  t.back().columns.push_back("cpuset_cpus INTEGER");
  t.push_back(Table{"process",
                    {"sample_id INTEGER NOT NULL",
                     "pid INTEGER NOT NULL",
                     "start_ticks INTEGER NOT NULL",
                     "state TEXT NOT NULL",
                     "utime INTEGER",
                     "stime INTEGER",
                     "minflt INTEGER",
                     "majflt INTEGER",
                     "threads INTEGER",
                     "rss_bytes INTEGER",
                     "processor INTEGER",
                     "run_ns INTEGER",
                     "wait_ns INTEGER",
                     "timeslices INTEGER",
                     "voluntary_switches INTEGER",
                     "involuntary_switches INTEGER",
                     "read_bytes INTEGER",
                     "write_bytes INTEGER",
                     "rchar INTEGER",
                     "wchar INTEGER"},
                    "sample_id, pid",
                    "pid",
                    true});
  t.push_back(Table{
      "process_info",
      {"pid INTEGER NOT NULL", "start_ticks INTEGER NOT NULL", "first_sample INTEGER NOT NULL",
       "ppid INTEGER NOT NULL", "comm TEXT NOT NULL", "cmdline TEXT NOT NULL", "role TEXT NOT NULL",
       // Added after schema 1 was first written (nullable, at the end: no new
       // version): RANK from the process's environment (a rank of a distributed job).
       "rank INTEGER"},
      "pid, start_ticks, first_sample",
      "pid",
      true});
  t.push_back(
      Table{"gpu",
            {"sample_id INTEGER NOT NULL", "gpu INTEGER NOT NULL", "uuid TEXT", "name TEXT",
             "pci_bus_id TEXT", "utilization_gpu_pct INTEGER", "utilization_memory_pct INTEGER",
             "memory_used_bytes INTEGER", "memory_total_bytes INTEGER", "power_watts REAL",
             "temperature_celsius INTEGER", "sm_clock_mhz INTEGER", "memory_clock_mhz INTEGER",
             "clock_event_reasons INTEGER", "pcie_tx_kib_s INTEGER", "pcie_rx_kib_s INTEGER",
             "energy_mj INTEGER", "sampled_at_ns INTEGER",
             // Added after schema 1 was first written (nullable, at the end: no new version).
             "pcie_replay_count INTEGER", "xid_errors INTEGER", "last_xid INTEGER",
             "ecc_corrected INTEGER", "ecc_uncorrected INTEGER", "vendor TEXT",
             "nvlink_tx_kib INTEGER", "nvlink_rx_kib INTEGER", "memory_free_bytes INTEGER",
             "minor_number INTEGER", "sm_active_ratio REAL", "sm_occupancy_ratio REAL",
             "tensor_active_ratio REAL", "dram_active_ratio REAL"},
            "sample_id, gpu",
            "gpu",
            true});
  t.push_back(Table{"gpu_process",
                    {"sample_id INTEGER NOT NULL", "gpu INTEGER NOT NULL", "seq INTEGER NOT NULL",
                     "pid INTEGER NOT NULL", "used_memory_bytes INTEGER",
                     // Added after schema 1 was first written (nullable, at the end).
                     "sm_util_pct INTEGER"},
                    "sample_id, gpu, seq",
                    "gpu, seq",
                    true});
  return t;
}

}  // namespace

const std::vector<Table>& tables() {
  static const std::vector<Table> t = make_tables();
  return t;
}

const Table& table(std::string_view name) {
  for (const auto& t : tables())
    if (t.name == name) return t;
  return tables().front();  // unreachable: every caller names a table above
}

std::string Table::column_names(std::string_view alias,
                                const std::set<std::string>* present) const {
  std::string out;
  for (const auto& c : columns) {
    if (!out.empty()) out += ", ";
    const std::string name = c.substr(0, c.find(' '));
    if (present != nullptr && !present->contains(name)) {
      out += "NULL";
      continue;
    }
    if (!alias.empty()) fmt::format_to(std::back_inserter(out), "{}.", alias);
    out += name;
  }
  return out;
}

std::string insert_sql(std::string_view name) {
  const Table& t = table(name);
  std::string sql = fmt::format("INSERT INTO {} VALUES (", t.name);
  for (std::size_t i = 1; i <= t.columns.size(); ++i)
    fmt::format_to(std::back_inserter(sql), "{}?{}", i > 1 ? ", " : "", i);
  return sql + ")";
}

std::string select_sql(std::string_view name, const std::set<std::string>* present) {
  const Table& t = table(name);
  const char* key = t.name == "sample" ? "id" : "sample_id";
  return fmt::format("SELECT {} FROM {} WHERE {} = ?1 ORDER BY {}", t.column_names("", present),
                     t.name, key, t.order_by);
}

Result<void> create_schema(Database& db, const RecordingInfo& info) {
  for (const auto& t : tables()) {
    std::string sql = fmt::format("CREATE TABLE {} (", t.name);
    for (std::size_t i = 0; i < t.columns.size(); ++i)
      fmt::format_to(std::back_inserter(sql), "{}{}", i ? ", " : "", t.columns[i]);
    if (!t.primary_key.empty())
      fmt::format_to(std::back_inserter(sql), ", PRIMARY KEY ({})", t.primary_key);
    sql += t.without_rowid ? ") WITHOUT ROWID" : ")";
    if (auto r = db.exec(sql.c_str(), "cannot create the recording's tables"); !r) return r;
  }
  for (const char* sql : {"CREATE TABLE document (key TEXT PRIMARY KEY, json TEXT NOT NULL)",
                          "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID",
                          // PRAGMA takes no bound parameters; the number is kRecordingSchema.
                          "PRAGMA user_version = 1"}) {
    if (auto r = db.exec(sql, "cannot create the recording's tables"); !r) return r;
  }
  static_assert(kRecordingSchema == 1, "update user_version above and add a reader for 1");
  const std::pair<const char*, std::optional<std::string>> rows[] = {
      {"format", std::string(kFormat)},
      {"schema", std::to_string(kRecordingSchema)},
      {"dltune_version", info.dltune_version},
      {"hostname", info.hostname},
      {"started_wall_ns", std::to_string(info.started_wall_ns)},
      {"interval_ns", std::to_string(info.interval_ns)},
      {"scope", info.scope},
      {"command", nlohmann::json(info.command).dump()},
      {"ended_wall_ns", std::nullopt},
      {"exit_status", std::nullopt},
  };
  for (const auto& [key, value] : rows) {
    if (auto r = put_meta(db, key, value); !r) return r;
  }
  return {};
}

Result<void> put_meta(Database& db, std::string_view key, const std::optional<std::string>& value) {
  auto st = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                       "cannot write the recording's meta table");
  if (!st) return tl::unexpected(st.error());
  st->bind(1, key).bind(2, value);
  return st->run();
}

namespace {

Result<std::int64_t> meta_int(const std::map<std::string, std::optional<std::string>>& meta,
                              const char* key, const std::string& path) {
  auto it = meta.find(key);
  if (it == meta.end() || !it->second)
    return fail(fmt::format("the recording has no {}:", key), path);
  try {
    std::size_t used = 0;
    const long long v = std::stoll(*it->second, &used);
    if (used == it->second->size()) return static_cast<std::int64_t>(v);
  } catch (const std::exception&) {
  }
  return fail(fmt::format("the recording's {} is not a number ({}):", key, *it->second), path);
}

}  // namespace

Result<RecordingInfo> read_info(Database& db) {
  const std::string& path = db.path();
  auto not_ours = [&] {
    return fail("not a dltune recording (no meta row format = 'dltune-recording'):", path);
  };
  std::map<std::string, std::optional<std::string>> meta;
  {
    auto has = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'",
                          "cannot read the recording");
    if (!has) return tl::unexpected(has.error());
    auto row = has->step();
    if (!row) return tl::unexpected(row.error());
    if (!*row) return not_ours();
    auto st = db.prepare("SELECT key, value FROM meta", "cannot read the recording's meta table");
    if (!st) return tl::unexpected(st.error());
    for (;;) {
      auto r = st->step();
      if (!r) return not_ours();  // a table named meta of another shape
      if (!*r) break;
      meta[st->text_at(0)] = st->optional_text_at(1);
    }
  }
  if (auto it = meta.find("format"); it == meta.end() || it->second != std::string(kFormat))
    return not_ours();
  auto version = db.prepare("PRAGMA user_version", "cannot read the recording");
  if (!version) return tl::unexpected(version.error());
  auto row = version->step();
  if (!row) return tl::unexpected(row.error());
  auto schema = *row ? version->int64_at(0) : 0;
  // The meta row says it too: the newer of the two decides (a file edited or written by a tool
  // that set only one of them is still refused when either is newer).
  if (const auto it = meta.find("schema"); it != meta.end() && it->second) {
    const auto stated = text::to_int(*it->second);
    if (!stated)
      return fail(
          fmt::format("the recording's meta row schema = \"{}\" is not a number:", *it->second),
          path);
    schema = std::max<std::int64_t>(schema, *stated);
  }
  if (schema > kRecordingSchema)
    return fail(fmt::format("written by a newer dltune: schema {}, this dltune reads {}:", schema,
                            kRecordingSchema),
                path);
  if (schema < 1) return fail(fmt::format("the recording has schema {}, unknown:", schema), path);

  RecordingInfo info;
  info.schema = static_cast<int>(schema);
  auto text = [&](const char* key) { return meta[key].value_or(""); };
  info.dltune_version = text("dltune_version");
  info.hostname = text("hostname");
  info.scope = text("scope");
  auto started = meta_int(meta, "started_wall_ns", path);
  if (!started) return tl::unexpected(started.error());
  info.started_wall_ns = *started;
  auto interval = meta_int(meta, "interval_ns", path);
  if (!interval) return tl::unexpected(interval.error());
  info.interval_ns = *interval;
  if (meta["ended_wall_ns"]) {
    auto v = meta_int(meta, "ended_wall_ns", path);
    if (!v) return tl::unexpected(v.error());
    info.ended_wall_ns = *v;
  }
  if (meta["exit_status"]) {
    auto v = meta_int(meta, "exit_status", path);
    if (!v) return tl::unexpected(v.error());
    info.exit_status = static_cast<int>(*v);
  }
  auto command = nlohmann::json::parse(text("command"), nullptr, false);
  if (!command.is_array()) return fail("the recording's command is not a JSON array:", path);
  for (const auto& a : command) {
    if (!a.is_string())
      return fail("the recording's command is not a JSON array of strings:", path);
    info.command.push_back(a.get<std::string>());
  }
  return info;
}

}  // namespace dltune::store::sql

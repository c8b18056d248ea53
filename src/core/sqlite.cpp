#include "core/sqlite.hpp"

#include <fmt/core.h>

#include "core/shared_library.hpp"

namespace dltune::sqlite {

namespace {

// SQLite's functions, resolved from libsqlite3.so.0 when the first database is opened
// (core/shared_library.hpp): the journal and recordings are the only users, and a linked SQLite
// cost every start of every command half a millisecond (bench/README.md, "Start-up").
struct SqliteLib {
  decltype(&::sqlite3_bind_double) bind_double = nullptr;
  decltype(&::sqlite3_bind_int64) bind_int64 = nullptr;
  decltype(&::sqlite3_bind_null) bind_null = nullptr;
  decltype(&::sqlite3_bind_text64) bind_text64 = nullptr;
  decltype(&::sqlite3_busy_timeout) busy_timeout = nullptr;
  decltype(&::sqlite3_changes) changes = nullptr;
  decltype(&::sqlite3_close_v2) close_v2 = nullptr;
  decltype(&::sqlite3_column_bytes) column_bytes = nullptr;
  decltype(&::sqlite3_column_double) column_double = nullptr;
  decltype(&::sqlite3_column_int64) column_int64 = nullptr;
  decltype(&::sqlite3_column_text) column_text = nullptr;
  decltype(&::sqlite3_column_type) column_type = nullptr;
  decltype(&::sqlite3_errmsg) errmsg = nullptr;
  decltype(&::sqlite3_errstr) errstr = nullptr;
  decltype(&::sqlite3_extended_result_codes) extended_result_codes = nullptr;
  decltype(&::sqlite3_finalize) finalize = nullptr;
  decltype(&::sqlite3_last_insert_rowid) last_insert_rowid = nullptr;
  decltype(&::sqlite3_open_v2) open_v2 = nullptr;
  decltype(&::sqlite3_prepare_v2) prepare_v2 = nullptr;
  decltype(&::sqlite3_reset) reset = nullptr;
  decltype(&::sqlite3_step) step = nullptr;
  decltype(&::sqlite3_system_errno) system_errno = nullptr;
};

Result<const SqliteLib*> load_sqlite() {
  static const Result<SqliteLib> loaded = SharedLibrary::load_table<SqliteLib>(
      "libsqlite3.so.0", "reading or writing a journal or a recording", "libsqlite3-0",
      [](SharedLibrary::Resolver& r, SqliteLib& api) {
#define DLTUNE_SYMBOL(f) r(api.f, "sqlite3_" #f)
        DLTUNE_SYMBOL(bind_double);
        DLTUNE_SYMBOL(bind_int64);
        DLTUNE_SYMBOL(bind_null);
        DLTUNE_SYMBOL(bind_text64);
        DLTUNE_SYMBOL(busy_timeout);
        DLTUNE_SYMBOL(changes);
        DLTUNE_SYMBOL(close_v2);
        DLTUNE_SYMBOL(column_bytes);
        DLTUNE_SYMBOL(column_double);
        DLTUNE_SYMBOL(column_int64);
        DLTUNE_SYMBOL(column_text);
        DLTUNE_SYMBOL(column_type);
        DLTUNE_SYMBOL(errmsg);
        DLTUNE_SYMBOL(errstr);
        DLTUNE_SYMBOL(extended_result_codes);
        DLTUNE_SYMBOL(finalize);
        DLTUNE_SYMBOL(last_insert_rowid);
        DLTUNE_SYMBOL(open_v2);
        DLTUNE_SYMBOL(prepare_v2);
        DLTUNE_SYMBOL(reset);
        DLTUNE_SYMBOL(step);
        DLTUNE_SYMBOL(system_errno);
#undef DLTUNE_SYMBOL
      });
  if (!loaded) return tl::unexpected(loaded.error());
  return &*loaded;
}

// The table, once a database is open: every handle and statement comes from Database::open,
// which loaded it.
const SqliteLib& api() {
  return **load_sqlite();
}

// How long a statement waits for SQLite's own file locks (a reader's WAL recovery, a checkpoint).
// Writers are already serialised by the journal's flock, so this is rarely reached.
constexpr int kBusyTimeoutMs = 5000;

// Result codes after which sqlite3_system_errno names the OS error (sqlite.org/c3ref/
// system_errno.html: "the most recent I/O error or failure to open a file").
bool from_the_os(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PERM:
      return true;
    default:
      return false;
  }
}

Error make_error(sqlite3* db, const std::string& path, std::string_view action, int rc) {
  const char* msg = db ? api().errmsg(db) : api().errstr(rc);
  const int err = db && from_the_os(rc) ? api().system_errno(db) : 0;
  return Error{fmt::format("{} (SQLite: {}):", action, msg ? msg : api().errstr(rc)), path, err};
}

}  // namespace

Database::~Database() {
  // sqlite3_close_v2 defers the close until every statement is finalised; ours are RAII-owned
  // and gone by now.
  if (db_) api().close_v2(db_);
}

Database::Database(Database&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), label_(std::move(other.label_)) {
  other.db_ = nullptr;
}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_) api().close_v2(db_);
    db_ = other.db_;
    path_ = std::move(other.path_);
    label_ = std::move(other.label_);
    other.db_ = nullptr;
  }
  return *this;
}

Result<Database> Database::open(const std::string& path, bool read_only, std::string_view label) {
  // The library first: its error names the package that has it.
  if (auto lib = load_sqlite(); !lib) return tl::unexpected(lib.error());
  Database d;
  d.path_ = path;
  d.label_ = std::string(label);
  const int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
                    SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_PRIVATECACHE;
  const int rc = api().open_v2(path.c_str(), &d.db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // The handle (when there is one) carries the message; `d` closes it.
    return tl::unexpected(make_error(d.db_, path, "cannot open " + d.label_, rc));
  }
  api().extended_result_codes(d.db_, 1);
  api().busy_timeout(d.db_, kBusyTimeoutMs);
  return d;
}

Result<void> Database::exec(const char* sql, std::string_view action) {
  auto stmt = prepare(sql, action);
  if (!stmt) return tl::unexpected(stmt.error());
  // PRAGMAs may answer with a row (journal_mode does); step until done.
  for (;;) {
    auto row = stmt->step();
    if (!row) return tl::unexpected(row.error());
    if (!*row) return {};
  }
}

Result<Statement> Database::prepare(const char* sql, std::string_view action) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = api().prepare_v2(db_, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    api().finalize(stmt);
    return tl::unexpected(error(action, rc));
  }
  return Statement(stmt, this, std::string(action));
}

Error Database::error(std::string_view action, int rc) const {
  return make_error(db_, path_, action, rc);
}

int Database::changes() const {
  return api().changes(db_);
}

std::int64_t Database::last_insert_rowid() const {
  return api().last_insert_rowid(db_);
}

Statement::~Statement() {
  if (stmt_) api().finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : stmt_(other.stmt_),
      db_(other.db_),
      action_(std::move(other.action_)),
      bind_rc_(other.bind_rc_) {
  other.stmt_ = nullptr;
}

void Statement::check_bind(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(api().bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, so the caller's string may go away before step().
  check_bind(
      api().bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::string>& value) {
  if (!value) {
    check_bind(api().bind_null(stmt_, index));
    return *this;
  }
  return bind(index, std::string_view(*value));
}

Statement& Statement::bind(int index, const std::optional<std::int64_t>& value) {
  if (!value) {
    check_bind(api().bind_null(stmt_, index));
    return *this;
  }
  return bind(index, *value);
}

Result<bool> Statement::step() {
  if (bind_rc_ != SQLITE_OK) return tl::unexpected(db_->error(action_, bind_rc_));
  const int rc = api().step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return tl::unexpected(db_->error(action_, rc));
}

Result<void> Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) return tl::unexpected(row.error());
    if (!*row) return {};
  }
}

Statement& Statement::bind(int index, double value) {
  check_bind(api().bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  if (!value) return bind_null(index);
  return bind(index, *value);
}

Statement& Statement::bind_null(int index) {
  check_bind(api().bind_null(stmt_, index));
  return *this;
}

Statement& Statement::reset() {
  // sqlite3_reset's result repeats the last step's error, already reported by step().
  (void)api().reset(stmt_);
  bind_rc_ = SQLITE_OK;
  return *this;
}

std::int64_t Statement::int64_at(int column) const {
  return api().column_int64(stmt_, column);
}

std::optional<std::int64_t> Statement::optional_int64_at(int column) const {
  if (api().column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
  return int64_at(column);
}

std::string Statement::text_at(int column) const {
  // sqlite.org/c3ref/column_blob.html: call column_text first, then column_bytes, for the length
  // of the same (UTF-8) representation; the bytes are kept exactly, embedded NULs included.
  const auto* p = api().column_text(stmt_, column);
  const int n = api().column_bytes(stmt_, column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

std::optional<std::string> Statement::optional_text_at(int column) const {
  if (api().column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
  return text_at(column);
}

double Statement::double_at(int column) const {
  return api().column_double(stmt_, column);
}

std::optional<double> Statement::optional_double_at(int column) const {
  if (api().column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
  return double_at(column);
}

Result<Transaction> Transaction::begin(Database& db, Mode mode) {
  const std::string action =
      (mode == Mode::kWrite ? "cannot start writing " : "cannot start reading ") + db.label();
  auto r = db.exec(mode == Mode::kWrite ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED", action);
  if (!r) return tl::unexpected(r.error());
  return Transaction(&db);
}

Transaction::~Transaction() {
  // Uncommitted (an error on the way): undo. A failure here leaves SQLite to roll back itself
  // when the connection closes, which it does for any open transaction.
  if (db_) (void)db_->exec("ROLLBACK", "cannot roll back");
}

Result<void> Transaction::commit() {
  Database* db = db_;
  db_ = nullptr;
  auto r = db->exec("COMMIT", "cannot commit to " + db->label());
  if (!r) {
    // COMMIT can fail and leave the transaction open (SQLITE_BUSY); roll it back so that the
    // next call starts clean.
    (void)db->exec("ROLLBACK", "cannot roll back");
  }
  return r;
}

}  // namespace dltune::sqlite

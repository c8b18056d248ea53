// The journal of tune transactions on SQLite. Durability: WAL with
// synchronous=FULL syncs the WAL on every commit (sqlite.org/pragma.html#pragma_synchronous), and
// every call below is its own committed SQL transaction, so a change's old value is on disk
// before the caller changes anything.
#include "tune/journal.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <functional>
#include <utility>

#include <fmt/core.h>

#include "core/private_files.hpp"
#include "core/sqlite.hpp"
#include "tune/journal_schema.hpp"

namespace dltune::tune {

namespace {

using sqlite::Database;
using sqlite::Statement;
using sqlite::Transaction;

// The transactions read back: constant statements (adjacent literals joined by the compiler).
#define DLTUNE_SELECT_TX \
  "SELECT id, command, profile, state, started_at, finished_at, error FROM transactions "
constexpr const char* kTxById = DLTUNE_SELECT_TX "WHERE id = ?1";
constexpr const char* kTxNewestInState =
    DLTUNE_SELECT_TX "WHERE state = ?1 ORDER BY id DESC LIMIT 1";
constexpr const char* kTxInState = DLTUNE_SELECT_TX "WHERE state = ?1 ORDER BY id";
constexpr const char* kTxNewestFirst = DLTUNE_SELECT_TX "ORDER BY id DESC";
#undef DLTUNE_SELECT_TX
constexpr const char* kSelectChanges =
    "SELECT id, tx, seq, key, kind, target, old_value, new_value, backup, state, changed_at "
    "FROM changes WHERE tx = ?1 ORDER BY seq";

std::int64_t now() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

class SqliteJournal final : public Journal {
 public:
  SqliteJournal(std::string state_dir, Database db, private_files::StateLock lock, bool read_only)
      : state_dir_(std::move(state_dir)),
        db_(std::move(db)),
        lock_(std::move(lock)),
        read_only_(read_only) {}

  Result<std::int64_t> begin(const std::string& command, const std::string& profile) override {
    return write<std::int64_t>([&]() -> Result<std::int64_t> {
      auto st = db_.prepare(
          "INSERT INTO transactions (command, profile, state, started_at) VALUES (?1, ?2, ?3, ?4)",
          "cannot record a new transaction in the state database");
      if (!st) return tl::unexpected(st.error());
      st->bind(1, std::string_view(command))
          .bind(2, std::string_view(profile))
          .bind(3, std::string_view(tx_state_name(TxState::kPending)))
          .bind(4, now());
      if (auto r = st->run(); !r) return tl::unexpected(r.error());
      return db_.last_insert_rowid();
    });
  }

  Result<std::int64_t> journal_change(std::int64_t tx, const ChangeRecord& c) override {
    return write<std::int64_t>([&]() -> Result<std::int64_t> {
      auto state = tx_state(tx);
      if (!state) return tl::unexpected(state.error());
      if (*state != TxState::kPending)
        return fail(fmt::format("transaction {} is {}, not pending: no change can be added to it",
                                tx, tx_state_name(*state)),
                    db_path());
      int seq = c.seq;
      if (seq <= 0) {
        auto next = db_.prepare("SELECT COALESCE(MAX(seq), 0) + 1 FROM changes WHERE tx = ?1",
                                "cannot read the changes of the state database");
        if (!next) return tl::unexpected(next.error());
        next->bind(1, tx);
        auto row = next->step();
        if (!row) return tl::unexpected(row.error());
        seq = static_cast<int>(next->int64_at(0));
      }
      auto st = db_.prepare(
          "INSERT INTO changes (tx, seq, key, kind, target, old_value, new_value, backup, state,"
          " changed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
          "cannot journal a change in the state database");
      if (!st) return tl::unexpected(st.error());
      st->bind(1, tx)
          .bind(2, std::int64_t{seq})
          .bind(3, std::string_view(c.key))
          .bind(4, std::string_view(c.kind))
          .bind(5, std::string_view(c.target))
          .bind(6, c.old_value)
          .bind(7, std::string_view(c.new_value))
          .bind(8, c.backup)
          .bind(9, std::string_view(change_state_name(c.state)))
          .bind(10, now());
      if (auto r = st->run(); !r) return tl::unexpected(r.error());
      return db_.last_insert_rowid();
    });
  }

  Result<void> set_change_state(std::int64_t change, ChangeState s) override {
    return update_change(change, s, nullptr);
  }

  Result<void> set_change_verified(std::int64_t change, const std::string& read_back) override {
    return update_change(change, ChangeState::kVerified, &read_back);
  }

  Result<void> finish(std::int64_t tx, TxState s,
                      const std::optional<std::string>& error) override {
    if (s == TxState::kPending)
      return fail(fmt::format("transaction {} cannot be finished as pending", tx), db_path());
    return write<void>([&]() -> Result<void> {
      auto st = db_.prepare(
          "UPDATE transactions SET state = ?1, finished_at = ?2, error = ?3 WHERE id = ?4",
          "cannot finish a transaction in the state database");
      if (!st) return tl::unexpected(st.error());
      st->bind(1, std::string_view(tx_state_name(s))).bind(2, now()).bind(3, error).bind(4, tx);
      if (auto r = st->run(); !r) return r;
      if (db_.changes() == 0) return fail(fmt::format("no transaction {} in", tx), db_path());
      return {};
    });
  }

  Result<std::optional<TxRecord>> transaction(std::int64_t tx) override {
    return first(read_transactions(kTxById, [&](Statement& st) { st.bind(1, tx); }));
  }

  Result<std::optional<TxRecord>> last_applied() override {
    return first(read_transactions(kTxNewestInState, [](Statement& st) {
      st.bind(1, std::string_view(tx_state_name(TxState::kApplied)));
    }));
  }

  Result<std::vector<TxRecord>> pending() override {
    return read_transactions(kTxInState, [](Statement& st) {
      st.bind(1, std::string_view(tx_state_name(TxState::kPending)));
    });
  }

  Result<std::vector<TxRecord>> history() override {
    return read_transactions(kTxNewestFirst, [](Statement&) {});
  }

  Result<std::string> backup_dir(std::int64_t tx) override {
    if (read_only_) return fail("the journal is open read-only:", db_path());
    if (tx <= 0) return fail(fmt::format("no transaction {} in", tx), db_path());
    const std::string backups = state_dir_ + "/backups";
    const std::string dir = fmt::format("{}/{}", backups, tx);
    for (const auto& d : {backups, dir}) {  // both 0700: backups hold copies of /etc files
      if (auto r = private_files::make_private_dir(d); !r) return tl::unexpected(r.error());
    }
    return dir;
  }

  const std::string& state_dir() const override { return state_dir_; }
  std::string database_path() const override { return db_path(); }
  bool read_only() const override { return read_only_; }

 private:
  std::string db_path() const { return state_dir_ + "/state.db"; }

  // One committed write: BEGIN IMMEDIATE, `body`, COMMIT (a rollback on any error).
  template <class T>
  Result<T> write(const std::function<Result<T>()>& body) {
    if (read_only_) return fail("the journal is open read-only:", db_path());
    auto txn = Transaction::begin(db_, Transaction::Mode::kWrite);
    if (!txn) return tl::unexpected(txn.error());
    auto r = body();
    if (!r) return r;
    if (auto c = txn->commit(); !c) return tl::unexpected(c.error());
    return r;
  }

  Result<TxState> tx_state(std::int64_t tx) {
    auto st = db_.prepare("SELECT state FROM transactions WHERE id = ?1",
                          "cannot read a transaction of the state database");
    if (!st) return tl::unexpected(st.error());
    st->bind(1, tx);
    auto row = st->step();
    if (!row) return tl::unexpected(row.error());
    if (!*row) return fail(fmt::format("no transaction {} in", tx), db_path());
    const auto name = st->text_at(0);
    auto s = tx_state_from_name(name);
    if (!s)
      return fail(fmt::format("unknown state \"{}\" of transaction {} in", name, tx), db_path());
    return *s;
  }

  Result<void> update_change(std::int64_t change, ChangeState s, const std::string* new_value) {
    return write<void>([&]() -> Result<void> {
      auto st = db_.prepare(
          new_value ? "UPDATE changes SET state = ?1, changed_at = ?2, new_value = ?4 WHERE id = ?3"
                    : "UPDATE changes SET state = ?1, changed_at = ?2 WHERE id = ?3",
          "cannot update a change in the state database");
      if (!st) return tl::unexpected(st.error());
      st->bind(1, std::string_view(change_state_name(s))).bind(2, now()).bind(3, change);
      if (new_value) st->bind(4, std::string_view(*new_value));
      if (auto r = st->run(); !r) return r;
      if (db_.changes() == 0) return fail(fmt::format("no change {} in", change), db_path());
      return {};
    });
  }

  static Result<std::optional<TxRecord>> first(Result<std::vector<TxRecord>> all) {
    if (!all) return tl::unexpected(all.error());
    if (all->empty()) return std::nullopt;
    return std::move(all->front());
  }

  // The transactions that `sql` (one of the constants above, parameters bound by `bind`) selects,
  // with their changes, read in one snapshot. A read-only journal without a database is empty.
  Result<std::vector<TxRecord>> read_transactions(const char* sql,
                                                  const std::function<void(Statement&)>& bind) {
    std::vector<TxRecord> out;
    if (!db_.is_open()) return out;
    auto txn = Transaction::begin(db_, Transaction::Mode::kRead);
    if (!txn) return tl::unexpected(txn.error());
    auto st = db_.prepare(sql, "cannot read the transactions of the state database");
    if (!st) return tl::unexpected(st.error());
    bind(*st);
    for (;;) {
      auto row = st->step();
      if (!row) return tl::unexpected(row.error());
      if (!*row) break;
      TxRecord t;
      t.id = st->int64_at(0);
      t.command = st->text_at(1);
      t.profile = st->text_at(2);
      const auto state = st->text_at(3);
      auto s = tx_state_from_name(state);
      if (!s)
        return fail(fmt::format("unknown state \"{}\" of transaction {} in", state, t.id),
                    db_path());
      t.state = *s;
      t.started_at = st->int64_at(4);
      t.finished_at = st->optional_int64_at(5);
      t.error = st->optional_text_at(6);
      out.push_back(std::move(t));
    }
    for (auto& t : out) {
      auto changes = read_changes(t.id);
      if (!changes) return tl::unexpected(changes.error());
      t.changes = std::move(*changes);
    }
    if (auto c = txn->commit(); !c) return tl::unexpected(c.error());
    return out;
  }

  Result<std::vector<ChangeRecord>> read_changes(std::int64_t tx) {
    auto st = db_.prepare(kSelectChanges, "cannot read the changes of the state database");
    if (!st) return tl::unexpected(st.error());
    st->bind(1, tx);
    std::vector<ChangeRecord> out;
    for (;;) {
      auto row = st->step();
      if (!row) return tl::unexpected(row.error());
      if (!*row) return out;
      ChangeRecord c;
      c.id = st->int64_at(0);
      c.tx = st->int64_at(1);
      c.seq = static_cast<int>(st->int64_at(2));
      c.key = st->text_at(3);
      c.kind = st->text_at(4);
      c.target = st->text_at(5);
      c.old_value = st->optional_text_at(6);
      c.new_value = st->text_at(7);
      c.backup = st->optional_text_at(8);
      const auto state = st->text_at(9);
      auto s = change_state_from_name(state);
      if (!s)
        return fail(fmt::format("unknown state \"{}\" of change {} in", state, c.id), db_path());
      c.state = *s;
      c.changed_at = st->int64_at(10);
      out.push_back(std::move(c));
    }
  }

  std::string state_dir_;
  Database db_;  // not open: a read-only view of a journal that does not exist yet
  private_files::StateLock lock_;
  bool read_only_;
};

// "/var/lib/dltune/" names the same directory as "/var/lib/dltune", and messages read better
// without "//state.db".
Result<std::string> without_trailing_slash(std::string dir) {
  if (dir.empty()) return fail("empty state directory name");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

Result<std::unique_ptr<Journal>> Journal::open(const std::string& dir, int lock_wait_ms) {
  auto normalised = without_trailing_slash(dir);
  if (!normalised) return tl::unexpected(normalised.error());
  const std::string& state_dir = *normalised;
  if (auto r = private_files::make_private_dir(state_dir); !r) return tl::unexpected(r.error());
  auto lock = private_files::StateLock::acquire(state_dir, lock_wait_ms);
  if (!lock) return tl::unexpected(lock.error());
  const std::string path = state_dir + "/state.db";
  // Created here with mode 0600 (an empty file is an empty database to SQLite); SQLite gives the
  // -wal and -shm files the database file's mode.
  auto created = private_files::create_private_file(path);
  if (!created) return tl::unexpected(created.error());
  if (*created) {
    if (auto r = private_files::sync_dir(state_dir); !r) return tl::unexpected(r.error());
  }
  auto db = Database::open(path, false);
  if (!db) return tl::unexpected(db.error());
  if (auto r = journal_schema::set_up_for_writing(*db); !r) return tl::unexpected(r.error());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (auto r = private_files::restrict_to_owner(path + suffix); !r)
      return tl::unexpected(r.error());
  }
  return std::make_unique<SqliteJournal>(state_dir, std::move(*db), std::move(*lock), false);
}

Result<std::unique_ptr<Journal>> Journal::open_read_only(const std::string& dir) {
  auto normalised = without_trailing_slash(dir);
  if (!normalised) return tl::unexpected(normalised.error());
  const std::string& state_dir = *normalised;
  const std::string path = state_dir + "/state.db";
  struct stat st {};
  const int found = ::stat(state_dir.c_str(), &st);
  if ((found == 0 && !S_ISDIR(st.st_mode)) || (found != 0 && errno == ENOTDIR))
    return fail("is not a directory (--state-dir names the directory of state.db):", state_dir);
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return std::make_unique<SqliteJournal>(state_dir, Database(), private_files::StateLock(),
                                             true);
    if (errno == EACCES)  // by design: the directory is 0700, the database 0600 (copies of /etc)
      return fail(
          "cannot read the state database (root's alone, as it holds copies of /etc "
          "files: run this with sudo)",
          path, errno);
    return fail("cannot read the state database", path, errno);
  }
  auto db = Database::open(path, true);
  if (!db) return tl::unexpected(db.error());
  auto has_schema = journal_schema::check_for_reading(*db);
  if (!has_schema) return tl::unexpected(has_schema.error());
  // No schema yet (an open that stopped half-way): nothing journaled.
  if (!*has_schema) *db = Database();
  return std::make_unique<SqliteJournal>(state_dir, std::move(*db), private_files::StateLock(),
                                         true);
}

}  // namespace dltune::tune

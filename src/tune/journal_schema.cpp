// The journal's schema and the names of its states, stored as text.
#include "tune/journal_schema.hpp"

#include <fmt/core.h>

#include "tune/journal.hpp"

namespace dltune::tune {

namespace journal_schema {

namespace {

using sqlite::Database;
using sqlite::Transaction;

// Version 1. States are stored as their names (tx_state_name, change_state_name), so the
// database reads on its own (`sqlite3 state.db 'select * from changes'`). AUTOINCREMENT: ids are
// never reused, since backup directories are named by transaction id.
constexpr const char* kSchema[] = {
    "CREATE TABLE transactions ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " command TEXT NOT NULL,"
    " profile TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'rolled_back', 'failed')),"
    " started_at INTEGER NOT NULL,"
    " finished_at INTEGER,"
    " error TEXT)",
    "CREATE TABLE changes ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " tx INTEGER NOT NULL REFERENCES transactions (id),"
    " seq INTEGER NOT NULL,"
    " key TEXT NOT NULL,"
    " kind TEXT NOT NULL,"
    " target TEXT NOT NULL,"
    " old_value TEXT,"  // NULL: the target did not exist
    " new_value TEXT NOT NULL,"
    " backup TEXT,"
    " state TEXT NOT NULL CHECK (state IN ('journaled', 'applied', 'verified', 'rolled_back')),"
    " changed_at INTEGER NOT NULL,"
    " UNIQUE (tx, seq))",
    "CREATE INDEX transactions_by_state ON transactions (state, id)",
    // PRAGMA takes no bound parameters; the number is kJournalSchemaVersion (checked below).
    "PRAGMA user_version = 1",
};
static_assert(kJournalSchemaVersion == 1, "update kSchema's user_version and add a migration");

// PRAGMA user_version of an open database.
Result<int> schema_version(Database& db) {
  auto st = db.prepare("PRAGMA user_version", "cannot read the state database");
  if (!st) return tl::unexpected(st.error());
  auto row = st->step();
  if (!row) return tl::unexpected(row.error());
  return *row ? static_cast<int>(st->int64_at(0)) : 0;
}

Result<void> refuse_newer(int version, const std::string& path) {
  if (version <= kJournalSchemaVersion) return {};
  return fail(fmt::format("the state database has schema version {}, newer than this dltune knows "
                          "({}); use the dltune that wrote it, or a newer one:",
                          version, kJournalSchemaVersion),
              path);
}

// Whether the database holds dltune's journal, is empty (a new one), or is another program's:
// version 0 with tables of its own, or a version without dltune's transactions table.
Result<void> refuse_foreign(Database& db, int version) {
  auto st = db.prepare(
      "SELECT count(*), sum(name = 'transactions') FROM sqlite_schema WHERE type = 'table'",
      "cannot read the state database");
  if (!st) return tl::unexpected(st.error());
  auto row = st->step();
  if (!row) return tl::unexpected(row.error());
  const auto tables = *row ? st->int64_at(0) : 0;
  const auto ours = *row ? st->int64_at(1) : 0;
  if ((version == 0 && tables > 0) || (version > 0 && ours == 0))
    return fail(
        "is not dltune's state database (another program's SQLite file: its tables are not the "
        "journal's); point --state-dir at a directory of dltune's own:",
        db.path());
  return {};
}

}  // namespace

Result<void> set_up_for_writing(Database& db) {
  {
    // Another program's database, or a newer dltune's, is refused before anything is set in it.
    auto version = schema_version(db);
    if (!version) return tl::unexpected(version.error());
    if (auto r = refuse_newer(*version, db.path()); !r) return r;
    if (auto r = refuse_foreign(db, *version); !r) return r;
  }
  {
    // journal_mode answers with the mode it is in; a file that is not a database fails here.
    // (Scoped: a statement still in progress would keep the COMMIT below from succeeding.)
    auto mode = db.prepare("PRAGMA journal_mode = WAL", "cannot set up the state database");
    if (!mode) return tl::unexpected(mode.error());
    auto row = mode->step();
    if (!row) return tl::unexpected(row.error());
    if (!*row || mode->text_at(0) != "wal")
      return fail("cannot put the state database in WAL mode:", db.path());
  }
  if (auto r = db.exec("PRAGMA synchronous = FULL", "cannot set up the state database"); !r)
    return r;
  if (auto r = db.exec("PRAGMA foreign_keys = ON", "cannot set up the state database"); !r)
    return r;

  auto txn = Transaction::begin(db, Transaction::Mode::kWrite);
  if (!txn) return tl::unexpected(txn.error());
  // Read again under the write lock: whether the tables are still to be made (a newer or
  // foreign database was refused above, before anything was set in it).
  auto version = schema_version(db);
  if (!version) return tl::unexpected(version.error());
  if (*version == 0) {
    for (const char* sql : kSchema) {
      if (auto r = db.exec(sql, "cannot create the tables of the state database"); !r) return r;
    }
  }
  // Versions between 1 and kJournalSchemaVersion would be migrated here.
  return txn->commit();
}

Result<bool> check_for_reading(Database& db) {
  auto version = schema_version(db);
  if (!version) return tl::unexpected(version.error());
  if (auto r = refuse_newer(*version, db.path()); !r) return tl::unexpected(r.error());
  if (auto r = refuse_foreign(db, *version); !r) return tl::unexpected(r.error());
  return *version != 0;
}

}  // namespace journal_schema

const char* tx_state_name(TxState s) {
  switch (s) {
    case TxState::kPending:
      return "pending";
    case TxState::kApplied:
      return "applied";
    case TxState::kRolledBack:
      return "rolled_back";
    case TxState::kFailed:
      return "failed";
  }
  return "unknown";
}

const char* change_state_name(ChangeState s) {
  switch (s) {
    case ChangeState::kJournaled:
      return "journaled";
    case ChangeState::kApplied:
      return "applied";
    case ChangeState::kVerified:
      return "verified";
    case ChangeState::kRolledBack:
      return "rolled_back";
  }
  return "unknown";
}

std::optional<TxState> tx_state_from_name(std::string_view name) {
  for (auto s : {TxState::kPending, TxState::kApplied, TxState::kRolledBack, TxState::kFailed})
    if (name == tx_state_name(s)) return s;
  return std::nullopt;
}

std::optional<ChangeState> change_state_from_name(std::string_view name) {
  for (auto s : {ChangeState::kJournaled, ChangeState::kApplied, ChangeState::kVerified,
                 ChangeState::kRolledBack})
    if (name == change_state_name(s)) return s;
  return std::nullopt;
}

}  // namespace dltune::tune

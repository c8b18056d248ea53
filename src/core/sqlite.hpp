#pragma once
// Small RAII wrappers over SQLite's C API for the journal and recordings
// (https://sqlite.org/c3ref/intro.html): a connection, a prepared statement with bound parameters
// (reusable after reset()), and an SQL transaction that rolls back unless committed. Every error
// names the database path and sqlite3_errmsg, and carries the OS errno when SQLite reports one
// (sqlite3_system_errno).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "core/error.hpp"

namespace dltune::sqlite {

class Statement;

class Database {
 public:
  Database() = default;
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Opens an existing file (the journal creates it first, with its own mode). `read_only`: no
  // write of any kind through this connection (SQLITE_OPEN_READONLY). Symbolic links are refused.
  // `label` names the database in error messages ("cannot open <label>").
  [[nodiscard]] static Result<Database> open(const std::string& path, bool read_only,
                                             std::string_view label = "the state database");

  // A constant statement without parameters (PRAGMA, BEGIN, COMMIT, CREATE TABLE).
  [[nodiscard]] Result<void> exec(const char* sql, std::string_view action);
  [[nodiscard]] Result<Statement> prepare(const char* sql, std::string_view action);

  // "`action` (SQLite: <errmsg>):" path, errno where the failure came from the OS.
  [[nodiscard]] Error error(std::string_view action, int rc) const;

  [[nodiscard]] bool is_open() const { return db_ != nullptr; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& label() const { return label_; }
  [[nodiscard]] int changes() const;
  [[nodiscard]] std::int64_t last_insert_rowid() const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  std::string label_ = "the state database";
};

class Statement {
 public:
  Statement(sqlite3_stmt* stmt, const Database* db, std::string action)
      : stmt_(stmt), db_(db), action_(std::move(action)) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1 (?1, ?2, ...). A failed bind is reported by the next step().
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, std::string_view value);  // bytes kept exactly (NUL, non-UTF-8)
  Statement& bind(int index, const std::optional<std::string>& value);  // absent: NULL
  Statement& bind(int index, const std::optional<std::int64_t>& value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::optional<double>& value);  // absent: NULL
  Statement& bind_null(int index);
  // Ready to bind and step again (sqlite3_reset); bindings not rebound keep their values.
  Statement& reset();

  // true: a row is ready; false: the statement is done.
  [[nodiscard]] Result<bool> step();
  // Steps a statement that returns no rows.
  [[nodiscard]] Result<void> run();

  [[nodiscard]] std::int64_t int64_at(int column) const;
  [[nodiscard]] std::optional<std::int64_t> optional_int64_at(int column) const;
  [[nodiscard]] std::string text_at(int column) const;  // NULL reads as ""
  [[nodiscard]] std::optional<std::string> optional_text_at(int column) const;
  [[nodiscard]] double double_at(int column) const;
  [[nodiscard]] std::optional<double> optional_double_at(int column) const;

 private:
  void check_bind(int rc);

  sqlite3_stmt* stmt_ = nullptr;
  const Database* db_ = nullptr;
  std::string action_;
  int bind_rc_ = SQLITE_OK;
};

// One SQL transaction: BEGIN IMMEDIATE (takes the write lock now, so a commit cannot fail on a
// lock upgrade) or BEGIN DEFERRED (a consistent read snapshot); ROLLBACK when destroyed without
// commit().
class Transaction {
 public:
  enum class Mode { kRead, kWrite };
  [[nodiscard]] static Result<Transaction> begin(Database& db, Mode mode);
  ~Transaction();
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  [[nodiscard]] Result<void> commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_ = nullptr;
};

}  // namespace dltune::sqlite

#pragma once
// The journal's tables (schema version kJournalSchemaVersion) and the settings of a connection
// that writes: WAL, synchronous=FULL, foreign keys.
#include "core/error.hpp"
#include "core/sqlite.hpp"

namespace dltune::tune::journal_schema {

// Sets the connection up (journal_mode=WAL, synchronous=FULL, foreign_keys=ON) and creates the
// tables when the database is new, in one SQL transaction. A schema newer than
// kJournalSchemaVersion, or a file that is not a database, is an error naming the file.
[[nodiscard]] Result<void> set_up_for_writing(sqlite::Database& db);

// For a read-only connection: whether the schema is there (false: a database created by an open
// that stopped before the tables, so nothing was journaled); a newer schema is an error.
[[nodiscard]] Result<bool> check_for_reading(sqlite::Database& db);

}  // namespace dltune::tune::journal_schema

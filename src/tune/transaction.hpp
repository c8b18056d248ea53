#pragma once
// Applying a plan as one transaction, and undoing one: every old value is journaled
// before its change, every change is read back and verified, and a failure undoes what was
// done before it.
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "tune/journal.hpp"
#include "tune/plan.hpp"

namespace dltune::tune {

// Test hook (documented in docs/testing.md): DLTUNE_TEST_CRASH_AFTER=N makes apply SIGKILL
// itself right after the Nth change was made and verified: no cleanup, no journal update.
inline constexpr const char* kCrashHookVariable = "DLTUNE_TEST_CRASH_AFTER";

struct ApplyResult {
  std::int64_t tx = 0;
  int changed = 0;
};

// Applies every change of `plan`; on a failure rolls back the changes already made, marks the
// transaction failed and returns the error (naming the setting, the file and the errno).
[[nodiscard]] Result<ApplyResult> apply_plan(const host::Root& root, Journal& journal,
                                             const Plan& plan, const std::string& command);

struct RollbackResult {
  std::int64_t tx = 0;
  int restored = 0;
  std::vector<std::string> problems;  // values that could not be restored (with errno)
};

// Restores, newest first, every change of transaction `tx` (applied, failed or left pending by a
// crash) to its journaled old value: files are restored byte for byte or removed when they did
// not exist. A target that holds its old value already is not written (a change journaled but
// never made). What cannot be restored is in `problems` (naming the setting, the file and the
// errno), the others are restored all the same; the transaction is then `failed`, and a later
// rollback of it restores what is left and marks it `rolled_back`. A failed transaction with
// nothing left to restore is left as it is.
[[nodiscard]] Result<RollbackResult> rollback_tx(const host::Root& root, Journal& journal,
                                                 std::int64_t tx);

// Whether a transaction still holds changes to undo: pending (a crash), applied, or failed with
// changes a rollback could not restore.
[[nodiscard]] bool needs_rollback(const TxRecord& t);
// Failed, with changes a rollback could not restore (the host is partly changed).
[[nodiscard]] bool incomplete(const TxRecord& t);

struct Drift {
  std::string key;
  std::string target;
  std::string expected;  // what the transaction wrote
  std::string actual;    // what is there now
  std::int64_t tx = 0;
};

// Values an applied transaction wrote that are no longer there (someone changed them since).
[[nodiscard]] std::vector<Drift> find_drift(const host::Root& root,
                                            const std::vector<TxRecord>& history);

}  // namespace dltune::tune

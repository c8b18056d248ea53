#pragma once
// The journal of tune transactions (docs/architecture.md): a SQLite database in the state
// directory (default /var/lib/dltune/state.db, WAL, mode 0600). A change's old value is committed
// before the change is made; a transaction left `pending` (a crash) is found by every command.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::tune {

enum class TxState { kPending, kApplied, kRolledBack, kFailed };
enum class ChangeState { kJournaled, kApplied, kVerified, kRolledBack };

[[nodiscard]] const char* tx_state_name(TxState s);  // "pending", "applied", ...
[[nodiscard]] const char* change_state_name(ChangeState s);
// The inverse of the names above ("rolled_back" -> kRolledBack); nullopt for any other text.
[[nodiscard]] std::optional<TxState> tx_state_from_name(std::string_view name);
[[nodiscard]] std::optional<ChangeState> change_state_from_name(std::string_view name);

// The database's PRAGMA user_version that this dltune writes; a newer one is refused on open.
inline constexpr int kJournalSchemaVersion = 1;

struct ChangeRecord {
  std::int64_t id = 0;
  std::int64_t tx = 0;
  int seq = 0;                           // order within the transaction, from 1
  std::string key;                       // "vm.swappiness", "persist:/etc/sysctl.d/90-dltune.conf"
  std::string kind;                      // "sysctl", "sysfs", "file", "gpu", "mount"
  std::string target;                    // the path (or GPU) written
  std::optional<std::string> old_value;  // absent: the target did not exist (a new file)
  std::string new_value;
  std::optional<std::string> backup;  // for files: where the byte-exact backup is
  ChangeState state = ChangeState::kJournaled;
  std::int64_t changed_at = 0;  // unix seconds of the last state change
};

struct TxRecord {
  std::int64_t id = 0;
  std::string command;  // "tune apply -p training --persist"
  std::string profile;
  TxState state = TxState::kPending;
  std::int64_t started_at = 0;
  std::optional<std::int64_t> finished_at;
  std::optional<std::string> error;
  std::vector<ChangeRecord> changes;  // in seq order
};

class Journal {
 public:
  // Opens (creating with mode 0700 dir / 0600 file when missing) `state_dir`/state.db, and takes
  // an exclusive lock (flock on `state_dir`/lock) held until destruction: a second dltune waits
  // up to `lock_wait_ms` (0: one try; negative: as long as it takes), then fails with a message
  // naming the state directory.
  [[nodiscard]] static Result<std::unique_ptr<Journal>> open(const std::string& state_dir,
                                                             int lock_wait_ms = 5000);
  // Read-only view for status/history/the pending-transaction warning: no lock, no creation;
  // an absent database is an empty journal. Its write calls fail.
  [[nodiscard]] static Result<std::unique_ptr<Journal>> open_read_only(
      const std::string& state_dir);
  virtual ~Journal() = default;

  [[nodiscard]] virtual Result<std::int64_t> begin(const std::string& command,
                                                   const std::string& profile) = 0;
  // Commits the old value (and backup path) before the change is made; returns the change id.
  [[nodiscard]] virtual Result<std::int64_t> journal_change(std::int64_t tx,
                                                            const ChangeRecord& c) = 0;
  [[nodiscard]] virtual Result<void> set_change_state(std::int64_t change, ChangeState s) = 0;
  // kVerified, with the value read back after the change as its new_value (in one commit).
  [[nodiscard]] virtual Result<void> set_change_verified(std::int64_t change,
                                                         const std::string& read_back) = 0;
  // Sets the final state (not kPending: an error), finished_at and the error text. A finished
  // transaction may be finished again (an applied one later rolled back).
  [[nodiscard]] virtual Result<void> finish(std::int64_t tx, TxState s,
                                            const std::optional<std::string>& error = {}) = 0;

  [[nodiscard]] virtual Result<std::optional<TxRecord>> transaction(std::int64_t tx) = 0;
  // The newest transaction in state kApplied (what `rollback` undoes by default).
  [[nodiscard]] virtual Result<std::optional<TxRecord>> last_applied() = 0;
  [[nodiscard]] virtual Result<std::vector<TxRecord>> pending() = 0;  // oldest first
  [[nodiscard]] virtual Result<std::vector<TxRecord>> history() = 0;  // newest first

  // Where byte-exact backups of files go: `state_dir`/backups/<tx>/, created 0700.
  [[nodiscard]] virtual Result<std::string> backup_dir(std::int64_t tx) = 0;
  [[nodiscard]] virtual const std::string& state_dir() const = 0;
  [[nodiscard]] virtual std::string database_path() const = 0;  // `state_dir`/state.db
  [[nodiscard]] virtual bool read_only() const = 0;
};

}  // namespace dltune::tune

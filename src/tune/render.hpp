#pragma once
// How tune's plan and journal are shown: text for people, JSON for scripts (the schemas
// dltune.tune.plan/1 and the history's transactions, docs/json.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "tune/boot.hpp"
#include "tune/journal.hpp"
#include "tune/plan.hpp"
#include "tune/transaction.hpp"

namespace dltune::tune {

[[nodiscard]] inventory::Json to_json(const Plan& plan);
[[nodiscard]] std::string render_text(const Plan& plan);
[[nodiscard]] inventory::Json to_json(const TxRecord& t);

// What `tune apply` and `tune rollback` say at the end: JSON ({"tx", "changed"}; {"tx",
// "restored", "problems"}) or a line of text, a rollback's with what to do when values could
// not be restored.
[[nodiscard]] inventory::Json to_json(const ApplyResult& r);
[[nodiscard]] std::string render_text(const ApplyResult& r);
[[nodiscard]] inventory::Json to_json(const RollbackResult& r);
[[nodiscard]] std::string render_text(const RollbackResult& r);
// For standard error: each value a rollback could not restore, then what to do about them.
[[nodiscard]] std::vector<std::string> problem_lines(const RollbackResult& r);

// What `tune status` shows: transactions a crash left unfinished, those that failed and were
// not wholly rolled back, those applied, values changed since a transaction wrote them, and who
// applies dltune's drop-ins at the next boot.
struct JournalStatus {
  std::vector<TxRecord> history;  // newest first
  std::vector<TxRecord> pending;  // oldest first
  std::vector<Drift> drift;
  BootReaders boot;
  // Nothing unfinished, incomplete or drifted.
  [[nodiscard]] bool clean() const;
};
[[nodiscard]] Result<JournalStatus> read_status(const host::Root& root, Journal& journal);
// schema dltune.tune.status/1
[[nodiscard]] inventory::Json to_json(const JournalStatus& status, const std::string& state_dir);
[[nodiscard]] std::string render_text(const JournalStatus& status);

// schema dltune.tune.history/1, and the text: each transaction with its changes.
[[nodiscard]] inventory::Json history_json(const std::vector<TxRecord>& history);
[[nodiscard]] std::string render_history(const std::vector<TxRecord>& history);

// "transaction N was left unfinished (a crash?): run `dltune tune rollback N` first; nothing was
// changed" when a crash left one pending: the host may be half-changed, and a plan made from it
// now would journal the wrong old values. nullopt when there is none.
[[nodiscard]] std::optional<std::string> unfinished_refusal(Journal& journal);

// What every command says on stderr of each transaction left unfinished in the journal under
// `state_dir` (the host may be half-changed until it is rolled back): "tune transaction N (CMD)
// was left unfinished: ...; run `dltune tune rollback N`". Nothing when there is no journal or it
// cannot be read (the command goes on; `tune status` says why).
[[nodiscard]] std::vector<std::string> unfinished_warnings(const std::string& state_dir);

// The transaction `tune rollback` undoes when given none: one a crash left unfinished first,
// else the newest that still holds changes (applied, or failed with changes an earlier rollback
// could not restore); 0 when there is none.
[[nodiscard]] std::int64_t rollback_target(Journal& journal);

}  // namespace dltune::tune

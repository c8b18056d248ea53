#include "tune/transaction.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"
#include "tune/drivers.hpp"

namespace dltune::tune {

namespace {

int crash_after() {
  if (!DLTUNE_TEST_HOOKS) return 0;
  const char* v = std::getenv(kCrashHookVariable);
  if (v == nullptr) return 0;
  const auto n = text::to_int(v);
  return n ? static_cast<int>(*n) : 0;
}

// A byte-exact copy of a file's old content in the state directory (the journal keeps it too).
Result<std::string> write_backup(Journal& journal, std::int64_t tx, int seq,
                                 const std::string& target, const std::string& content) {
  auto dir = journal.backup_dir(tx);
  if (!dir) return tl::unexpected(dir.error());
  std::string name = target;
  for (auto& c : name)
    if (c == '/') c = '_';
  const std::string path = fmt::format("{}/{:03d}{}", *dir, seq, name);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot write the backup", path, errno);
  const auto n = ::write(fd, content.data(), content.size());
  const int err = errno;
  const bool ok = n == static_cast<ssize_t>(content.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return fail("cannot write the backup", path, n < 0 ? err : EIO);
  return path;
}

// Whether the target holds its journaled old value already (absent when it was absent): a change
// that was journaled but never made (the write that failed), or one restored before. Not
// writing it again keeps a rollback from failing on a file system that refused the change.
bool holds_old_value(const Drivers& drivers, const ChangeRecord& c) {
  const auto now = drivers.read(c.kind, c.target);
  if (!now) return false;  // cannot tell: write it
  if (!c.old_value) return !*now;
  return *now && Drivers::same_value(c.kind, **now, *c.old_value);
}

// Puts one journaled change back. vm.*_bytes = 0 is not written: the kernel refuses it
// (EINVAL), and restoring the matching ratio already returned the kernel to ratio mode.
Result<void> restore(const Drivers& drivers, const ChangeRecord& c) {
  if (holds_old_value(drivers, c)) return {};
  if (!c.old_value) {
    if (c.kind == "file") return drivers.remove(c.kind, c.target);
    return {};
  }
  if ((c.key == "vm.dirty_bytes" || c.key == "vm.dirty_background_bytes") && *c.old_value == "0")
    return {};
  // An NVML set-call can fail where the old value is already there: the GPU whose set failed
  // and aborted the transaction was never changed. Leave a GPU that reads as its old value.
  if (c.kind == "nvml") {
    auto now = drivers.read(c.kind, c.target);
    if (now && *now && Drivers::same_value(c.kind, **now, *c.old_value)) return {};
  }
  auto back = drivers.write(c.kind, c.target, *c.old_value);
  if (!back) return tl::unexpected(back.error());
  if (!Drivers::same_value(c.kind, *back, *c.old_value))
    return fail(fmt::format("restored {} but it reads back as '{}' in",
                            c.kind == "file" ? "the old file" : *c.old_value,
                            c.kind == "file" ? "(other content)" : effective_value(*back)),
                c.target, 0);
  return {};
}

}  // namespace

Result<ApplyResult> apply_plan(const host::Root& root, Journal& journal, const Plan& plan,
                               const std::string& command) {
  auto tx = journal.begin(command, plan.profile);
  if (!tx) return tl::unexpected(tx.error());
  const Drivers drivers(root);
  ApplyResult result;
  result.tx = *tx;
  const int crash = crash_after();
  int seq = 0;
  auto abort_with = [&](const Error& e) -> Result<ApplyResult> {
    auto rb = rollback_tx(root, journal, *tx);
    std::string msg = e.message();
    const bool undone = rb && rb->problems.empty();
    if (!rb)
      msg += fmt::format("; rollback failed: {}", rb.error().message());
    else if (!rb->problems.empty())
      msg += fmt::format("; rollback could not restore: {}", fmt::join(rb->problems, "; "));
    if (!undone) msg += fmt::format("; once the cause is fixed run `dltune tune rollback {}`", *tx);
    (void)journal.finish(*tx, TxState::kFailed, msg);
    return fail(fmt::format("transaction {} failed and was {}rolled back:", *tx,
                            undone ? "" : "NOT fully "),
                msg);
  };
  for (const auto& change : plan.changes()) {
    ChangeRecord rec;
    rec.seq = ++seq;
    rec.key = change.key;
    rec.kind = change.kind;
    rec.target = change.target;
    rec.old_value = change.old_value;
    rec.new_value = change.new_value;
    if (change.kind == "file" && change.old_value) {
      auto backup = write_backup(journal, *tx, seq, change.target, *change.old_value);
      if (!backup) return abort_with(backup.error());
      rec.backup = *backup;
    }
    // The old value is durable before anything changes.
    auto id = journal.journal_change(*tx, rec);
    if (!id) return abort_with(id.error());
    if (change.implied) {
      (void)journal.set_change_state(*id, ChangeState::kApplied);
      continue;
    }
    auto back = drivers.write(change.kind, change.target, change.new_value);
    if (!back && change.kind == "nvml")  // NVML's error is the message: keep it whole
      return abort_with(Error{
          fmt::format("{}: cannot set '{}' on {}:", change.key, change.new_value, change.target),
          back.error().message(), 0});
    if (!back)  // "persist.sysctl: cannot replace /etc/sysctl.d/90-dltune.conf: Read-only ..."
      return abort_with(Error{fmt::format("{}: {}", change.key, back.error().what),
                              back.error().input, back.error().errno_});
    if (auto s = journal.set_change_state(*id, ChangeState::kApplied); !s)
      return abort_with(s.error());
    if (!Drivers::same_value(change.kind, *back, change.new_value))
      return abort_with(
          change.kind == "file"
              ? Error{"the file does not read back as written:", change.target, EIO}
              : Error{fmt::format("{}: wrote '{}' but it reads back as '{}' in", change.key,
                                  change.new_value, effective_value(*back)),
                      change.target, 0});
    if (auto s = journal.set_change_state(*id, ChangeState::kVerified); !s)
      return abort_with(s.error());
    ++result.changed;
    if (crash > 0 && result.changed == crash) {  // the test hook: kill -9, right here
      ::kill(::getpid(), SIGKILL);
      ::_exit(99);  // not reached
    }
  }
  if (auto f = journal.finish(*tx, TxState::kApplied); !f) return tl::unexpected(f.error());
  return result;
}

Result<RollbackResult> rollback_tx(const host::Root& root, Journal& journal, std::int64_t tx) {
  auto rec = journal.transaction(tx);
  if (!rec) return tl::unexpected(rec.error());
  if (!*rec) return fail("no such transaction:", std::to_string(tx));
  if ((*rec)->state == TxState::kRolledBack)
    return fail("transaction was rolled back already:", std::to_string(tx));
  RollbackResult r;
  r.tx = tx;
  const Drivers drivers(root);
  const auto& changes = (*rec)->changes;
  int left = 0;
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    if (it->state == ChangeState::kRolledBack) continue;
    ++left;
    auto done = restore(drivers, *it);
    if (!done) {
      r.problems.push_back(fmt::format("{} ({})", it->key, done.error().message()));
      continue;
    }
    if (auto s = journal.set_change_state(it->id, ChangeState::kRolledBack); !s) {
      r.problems.push_back(fmt::format("{} (restored, but {})", it->key, s.error().message()));
      continue;
    }
    ++r.restored;
  }
  // A failed transaction with nothing left to restore stays as it is (failed, with its error).
  // Otherwise: rolled back when everything is restored (also on a second try after a rollback
  // that could not restore everything), else failed, naming what is left.
  if ((*rec)->state == TxState::kFailed && left == 0) return r;
  if (r.problems.empty()) {
    std::optional<std::string> error;  // what went wrong before, kept for the history
    if ((*rec)->error) error = *(*rec)->error + "; since rolled back completely";
    if (auto f = journal.finish(tx, TxState::kRolledBack, error); !f)
      return tl::unexpected(f.error());
  } else {
    (void)journal.finish(
        tx, TxState::kFailed,
        fmt::format("rollback incomplete: {}; run `dltune tune rollback {}` again once the cause "
                    "is fixed",
                    fmt::join(r.problems, "; "), tx));
  }
  return r;
}

bool incomplete(const TxRecord& t) {
  if (t.state != TxState::kFailed) return false;
  for (const auto& c : t.changes)
    if (c.state != ChangeState::kRolledBack) return true;
  return false;
}

bool needs_rollback(const TxRecord& t) {
  return t.state == TxState::kPending || t.state == TxState::kApplied || incomplete(t);
}

std::vector<Drift> find_drift(const host::Root& root, const std::vector<TxRecord>& history) {
  // The newest applied value of each target (history is newest first).
  std::vector<Drift> out;
  std::set<std::string> seen;
  const Drivers drivers(root);
  for (const auto& tx : history) {
    if (tx.state != TxState::kApplied) continue;
    for (const auto& c : tx.changes) {
      if (c.state != ChangeState::kVerified || seen.count(c.target)) continue;
      seen.insert(c.target);
      auto now = drivers.read(c.kind, c.target);
      if (!now) continue;  // cannot tell (NVML gone, a file unreadable): not drift
      if (!*now && c.kind == "cgroup") continue;  // the group is gone, not changed
      const std::string actual = *now ? **now : "(absent)";
      if (!Drivers::same_value(c.kind, actual, c.new_value))
        out.push_back(Drift{c.key, c.target,
                            c.kind == "file" ? "(the file tune wrote)" : c.new_value,
                            c.kind == "file" ? (*now ? "(changed since)" : "(removed since)")
                                             : effective_value(actual),
                            tx.id});
    }
  }
  return out;
}

}  // namespace dltune::tune

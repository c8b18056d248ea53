// The journal on a real SQLite database in a temporary state directory (CONTRIBUTING.md, convention
// 14: SQLite is used for real). Crashes are real processes that end without cleaning up.
#include "tune/journal.hpp"

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace journal_test {

namespace fs = std::filesystem;
using dltune::tune::ChangeRecord;
using dltune::tune::ChangeState;
using dltune::tune::Journal;
using dltune::tune::TxState;

namespace {

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "dltune_journal_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    tmp_ = tmpl;
    state_ = (tmp_ / "var/lib/dltune").string();
  }
  void TearDown() override { fs::remove_all(tmp_); }

  static unsigned mode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  }

  static ChangeRecord change(const std::string& key, std::optional<std::string> old_value,
                             const std::string& new_value) {
    ChangeRecord c;
    c.key = key;
    c.kind = "sysctl";
    c.target = "/proc/sys/" + key;
    c.old_value = std::move(old_value);
    c.new_value = new_value;
    return c;
  }

  // Runs SQL on the database through a connection of the test's own (not the journal's).
  void sql(const std::string& statement) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((fs::path(state_) / "state.db").c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  fs::path tmp_;
  std::string state_;
};

// Message passing between a forked child and the test: one line per message.
void send(int fd, const std::string& msg) {
  const std::string line = msg + "\n";
  ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
}

std::string receive(int fd) {
  std::string out;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n') out += c;
  return out;
}

int wait_for(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return status;
}

}  // namespace

TEST(JournalNames, StateNamesRoundTrip) {
  using namespace dltune::tune;
  for (auto s : {TxState::kPending, TxState::kApplied, TxState::kRolledBack, TxState::kFailed})
    EXPECT_EQ(tx_state_from_name(tx_state_name(s)), s);
  for (auto s : {ChangeState::kJournaled, ChangeState::kApplied, ChangeState::kVerified,
                 ChangeState::kRolledBack})
    EXPECT_EQ(change_state_from_name(change_state_name(s)), s);
  EXPECT_STREQ(tx_state_name(TxState::kRolledBack), "rolled_back");
  EXPECT_EQ(tx_state_from_name("Pending"), std::nullopt);
  EXPECT_EQ(change_state_from_name(""), std::nullopt);
}

TEST_F(JournalTest, CreatesPrivateDirectoryAndDatabaseWhateverTheUmask) {
  // The widest umask, and one that would take the owner's write bit: the modes must not depend
  // on it.
  for (const mode_t mask : {0277, 0}) {
    SCOPED_TRACE(mask);
    fs::remove_all(tmp_ / "var");
    const mode_t old = ::umask(mask);
    auto j = Journal::open(state_);
    ::umask(old);
    ASSERT_TRUE(j) << j.error().message();
    EXPECT_EQ((*j)->state_dir(), state_);
    EXPECT_EQ((*j)->database_path(), state_ + "/state.db");
    EXPECT_FALSE((*j)->read_only());
    EXPECT_EQ(mode_of(state_), 0700u);
    for (const char* name : {"state.db", "state.db-wal", "state.db-shm", "lock"})
      EXPECT_EQ(mode_of(fs::path(state_) / name), 0600u) << name;
    auto tx = (*j)->begin("tune apply", "training");  // writable whatever the umask was
    ASSERT_TRUE(tx) << tx.error().message();
  }

  // The schema, read through a connection of our own.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((state_ + "/state.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  auto one_int = [&](const char* q) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, q, -1, &st, nullptr), SQLITE_OK) << q;
    EXPECT_EQ(sqlite3_step(st), SQLITE_ROW) << q;
    const auto v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
  };
  EXPECT_EQ(one_int("PRAGMA user_version"), dltune::tune::kJournalSchemaVersion);
  EXPECT_EQ(one_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                    "('transactions', 'changes')"),
            2);
  EXPECT_EQ(one_int("SELECT count(*) FROM pragma_table_info('changes') WHERE name IN ('id', 'tx', "
                    "'seq', 'key', 'kind', 'target', 'old_value', 'new_value', 'backup', 'state', "
                    "'changed_at')"),
            11);
  sqlite3_close(db);
}

TEST_F(JournalTest, WalModeAndForeignKeys) {
  {
    auto j = Journal::open(state_);
    ASSERT_TRUE(j) << j.error().message();
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((state_ + "/state.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");  // persistent
  sqlite3_finalize(st);
  sqlite3_close(db);

  // A change of a transaction that does not exist is refused (the transaction is looked up, and
  // the foreign key would refuse it too).
  auto j = Journal::open(state_);
  ASSERT_TRUE(j);
  auto c = (*j)->journal_change(42, change("vm.swappiness", "60", "10"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("no transaction 42"), std::string::npos)
      << c.error().message();
}

TEST_F(JournalTest, RoundTripOfATransaction) {
  auto opened = Journal::open(state_);
  ASSERT_TRUE(opened) << opened.error().message();
  auto& j = **opened;
  auto tx = j.begin("tune apply -p training --persist", "training");
  ASSERT_TRUE(tx) << tx.error().message();

  ChangeRecord file = change("persist:/etc/sysctl.d/90-dltune.conf", std::nullopt, "vm.x = 1\n");
  file.kind = "file";
  file.target = "/etc/sysctl.d/90-dltune.conf";
  file.backup = state_ + "/backups/1/90-dltune.conf";
  auto c1 = j.journal_change(*tx, change("vm.swappiness", "60", "10"));
  auto c2 = j.journal_change(*tx, file);
  ASSERT_TRUE(c1 && c2);
  EXPECT_NE(*c1, *c2);
  ASSERT_TRUE(j.set_change_state(*c1, ChangeState::kApplied));
  ASSERT_TRUE(j.set_change_verified(*c1, "10"));
  ASSERT_TRUE(j.set_change_state(*c2, ChangeState::kApplied));
  ASSERT_TRUE(j.finish(*tx, TxState::kApplied));

  auto got = j.transaction(*tx);
  ASSERT_TRUE(got) << got.error().message();
  ASSERT_TRUE(got->has_value());
  const auto& t = **got;
  EXPECT_EQ(t.id, *tx);
  EXPECT_EQ(t.command, "tune apply -p training --persist");
  EXPECT_EQ(t.profile, "training");
  EXPECT_EQ(t.state, TxState::kApplied);
  EXPECT_GT(t.started_at, 0);
  ASSERT_TRUE(t.finished_at);
  EXPECT_GE(*t.finished_at, t.started_at);
  EXPECT_EQ(t.error, std::nullopt);
  ASSERT_EQ(t.changes.size(), 2u);
  EXPECT_EQ(t.changes[0].id, *c1);
  EXPECT_EQ(t.changes[0].tx, *tx);
  EXPECT_EQ(t.changes[0].seq, 1);
  EXPECT_EQ(t.changes[0].key, "vm.swappiness");
  EXPECT_EQ(t.changes[0].kind, "sysctl");
  EXPECT_EQ(t.changes[0].target, "/proc/sys/vm.swappiness");
  EXPECT_EQ(t.changes[0].old_value, "60");
  EXPECT_EQ(t.changes[0].new_value, "10");
  EXPECT_EQ(t.changes[0].backup, std::nullopt);
  EXPECT_EQ(t.changes[0].state, ChangeState::kVerified);
  EXPECT_GE(t.changes[0].changed_at, t.started_at);
  EXPECT_EQ(t.changes[1].seq, 2);
  EXPECT_EQ(t.changes[1].kind, "file");
  EXPECT_EQ(t.changes[1].target, "/etc/sysctl.d/90-dltune.conf");
  EXPECT_EQ(t.changes[1].backup, state_ + "/backups/1/90-dltune.conf");
  EXPECT_EQ(t.changes[1].state, ChangeState::kApplied);

  auto last = j.last_applied();
  ASSERT_TRUE(last && last->has_value());
  EXPECT_EQ((*last)->id, *tx);
  auto pending = j.pending();
  ASSERT_TRUE(pending);
  EXPECT_TRUE(pending->empty());
  EXPECT_EQ(j.transaction(*tx + 100).value(), std::nullopt);
}

TEST_F(JournalTest, HistoryIsNewestFirstAndLastAppliedSkipsOtherStates) {
  auto j = Journal::open(state_);
  ASSERT_TRUE(j);
  auto t1 = (*j)->begin("tune apply", "training");
  auto t2 = (*j)->begin("tune apply", "inference");
  auto t3 = (*j)->begin("tune rollback", "");
  auto t4 = (*j)->begin("tune apply", "training");
  ASSERT_TRUE(t1 && t2 && t3 && t4);
  ASSERT_TRUE((*j)->finish(*t1, TxState::kApplied));
  ASSERT_TRUE((*j)->finish(*t2, TxState::kApplied));
  ASSERT_TRUE((*j)->finish(*t3, TxState::kFailed, "vm.dirty_bytes: Invalid argument"));
  ASSERT_TRUE((*j)->finish(*t2, TxState::kRolledBack));  // finished again, later
  auto last = (*j)->last_applied();
  ASSERT_TRUE(last && last->has_value());
  EXPECT_EQ((*last)->id, *t1);
  auto h = (*j)->history();
  ASSERT_TRUE(h);
  ASSERT_EQ(h->size(), 4u);
  EXPECT_EQ((*h)[0].id, *t4);
  EXPECT_EQ((*h)[0].state, TxState::kPending);
  EXPECT_EQ((*h)[1].id, *t3);
  EXPECT_EQ((*h)[1].error, "vm.dirty_bytes: Invalid argument");
  EXPECT_EQ((*h)[2].state, TxState::kRolledBack);
  EXPECT_EQ((*h)[3].id, *t1);
  auto p = (*j)->pending();
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].id, *t4);
}

TEST_F(JournalTest, AbsentOldValueIsNotAnEmptyOneAndBytesAreKeptExactly) {
  auto j = Journal::open(state_);
  ASSERT_TRUE(j);
  auto tx = (*j)->begin("tune apply", "training");
  ASSERT_TRUE(tx);
  const std::string odd("a\0b\n\xff\t ", 7);  // NUL, newline, a byte that is not UTF-8
  ASSERT_TRUE((*j)->journal_change(*tx, change("absent", std::nullopt, "x")));
  ASSERT_TRUE((*j)->journal_change(*tx, change("empty", std::string(), "")));
  ASSERT_TRUE((*j)->journal_change(*tx, change("odd", odd, odd + "\n")));
  auto t = (*j)->transaction(*tx);
  ASSERT_TRUE(t && t->has_value());
  const auto& c = (*t)->changes;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].old_value, std::nullopt);
  ASSERT_TRUE(c[1].old_value.has_value());
  EXPECT_EQ(*c[1].old_value, "");
  EXPECT_EQ(c[1].new_value, "");
  EXPECT_EQ(c[2].old_value, odd);
  EXPECT_EQ(c[2].new_value, odd + "\n");
}

TEST_F(JournalTest, SequenceNumbersAndRefusedUpdates) {
  auto j = Journal::open(state_);
  ASSERT_TRUE(j);
  auto tx = (*j)->begin("tune apply", "training");
  ASSERT_TRUE(tx);
  auto a = (*j)->journal_change(*tx, change("a", "1", "2"));
  ChangeRecord explicit_seq = change("b", "1", "2");
  explicit_seq.seq = 5;
  auto b = (*j)->journal_change(*tx, explicit_seq);
  auto c = (*j)->journal_change(*tx, change("c", "1", "2"));
  ASSERT_TRUE(a && b && c);
  auto dup = (*j)->journal_change(*tx, explicit_seq);  // seq 5 again
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message().find("UNIQUE"), std::string::npos) << dup.error().message();
  auto t = (*j)->transaction(*tx);
  ASSERT_TRUE(t && t->has_value());
  ASSERT_EQ((*t)->changes.size(), 3u);
  EXPECT_EQ((*t)->changes[0].seq, 1);
  EXPECT_EQ((*t)->changes[1].seq, 5);
  EXPECT_EQ((*t)->changes[2].seq, 6);

  EXPECT_FALSE((*j)->finish(*tx, TxState::kPending));
  EXPECT_FALSE((*j)->finish(*tx + 7, TxState::kApplied));
  auto missing = (*j)->set_change_state(999, ChangeState::kApplied);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no change 999"), std::string::npos);
  EXPECT_NE(missing.error().message().find(state_ + "/state.db"), std::string::npos);
  ASSERT_TRUE((*j)->finish(*tx, TxState::kFailed, "stopped"));
  auto late = (*j)->journal_change(*tx, change("d", "1", "2"));  // finished: no more changes
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message().find("failed, not pending"), std::string::npos)
      << late.error().message();
}

TEST_F(JournalTest, UnfinishedTransactionIsPendingForTheNextJournal) {
  std::int64_t tx = 0;
  {
    auto j = Journal::open(state_);
    ASSERT_TRUE(j);
    auto t = (*j)->begin("tune apply -p training", "training");
    ASSERT_TRUE(t);
    tx = *t;
    auto c = (*j)->journal_change(tx, change("vm.swappiness", "60", "10"));
    ASSERT_TRUE(c);
    ASSERT_TRUE((*j)->set_change_state(*c, ChangeState::kApplied));
  }  // destroyed without finish
  auto j = Journal::open(state_);
  ASSERT_TRUE(j) << j.error().message();
  auto p = (*j)->pending();
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].id, tx);
  EXPECT_EQ((*p)[0].state, TxState::kPending);
  EXPECT_EQ((*p)[0].finished_at, std::nullopt);
  ASSERT_EQ((*p)[0].changes.size(), 1u);
  EXPECT_EQ((*p)[0].changes[0].old_value, "60");
  EXPECT_EQ((*p)[0].changes[0].state, ChangeState::kApplied);
  auto last = (*j)->last_applied();
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, std::nullopt);
}

// A process that ends abruptly after journaling (no destructor, no close, no checkpoint): what
// it committed is there for the next one. The child is forked before this process touches SQLite.
TEST_F(JournalTest, CrashAfterJournalingLeavesThePendingChange) {
  for (const bool kill9 : {false, true}) {
    SCOPED_TRACE(kill9 ? "SIGKILL" : "_exit");
    fs::remove_all(state_);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto j = Journal::open(state_);
      if (!j) ::_exit(2);
      auto tx = (*j)->begin("tune apply -p training", "training");
      if (!tx) ::_exit(3);
      auto c = (*j)->journal_change(*tx, change("vm.dirty_ratio", "20", "10"));
      if (!c) ::_exit(4);
      if (kill9) ::kill(::getpid(), SIGKILL);
      ::_exit(0);
    }
    const int status = wait_for(pid);
    if (kill9) {
      ASSERT_TRUE(WIFSIGNALED(status));
      EXPECT_EQ(WTERMSIG(status), SIGKILL);
    } else {
      ASSERT_TRUE(WIFEXITED(status));
      ASSERT_EQ(WEXITSTATUS(status), 0);
    }
    for (const bool read_only : {true, false}) {
      auto j = read_only ? Journal::open_read_only(state_) : Journal::open(state_, 0);
      ASSERT_TRUE(j) << j.error().message();
      auto p = (*j)->pending();
      ASSERT_TRUE(p) << p.error().message();
      ASSERT_EQ(p->size(), 1u);
      EXPECT_EQ((*p)[0].command, "tune apply -p training");
      ASSERT_EQ((*p)[0].changes.size(), 1u);
      EXPECT_EQ((*p)[0].changes[0].key, "vm.dirty_ratio");
      EXPECT_EQ((*p)[0].changes[0].old_value, "20");
      EXPECT_EQ((*p)[0].changes[0].state, ChangeState::kJournaled);
    }
  }
}

TEST_F(JournalTest, SecondJournalInTheSameProcessIsLockedOut) {
  auto first = Journal::open(state_);
  ASSERT_TRUE(first);
  auto second = Journal::open(state_, 0);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message().find(state_), std::string::npos);
  // Readers take no lock.
  auto reader = Journal::open_read_only(state_);
  ASSERT_TRUE(reader) << reader.error().message();
  first->reset();
  EXPECT_TRUE(Journal::open(state_, 0));
}

// Two processes: the second waits, is refused after lock_wait_ms with a message that names the
// state directory, and gets the lock once the first has let it go.
TEST_F(JournalTest, SecondProcessWaitsThenIsRefusedThenSucceeds) {
  int to_child[2];
  int to_parent[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t pid = ::fork();  // before this process opens any database
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(to_child[1]);
    ::close(to_parent[0]);
    if (receive(to_child[0]) != "locked") ::_exit(2);
    const auto start = std::chrono::steady_clock::now();
    auto refused = Journal::open(state_, 150);
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    send(to_parent[1], refused ? "opened" : refused.error().message());
    send(to_parent[1], std::to_string(waited));
    if (receive(to_child[0]) != "released") ::_exit(3);
    auto opened = Journal::open(state_, 5000);
    send(to_parent[1], opened ? "opened" : opened.error().message());
    ::_exit(0);
  }
  ::close(to_child[0]);
  ::close(to_parent[1]);
  {
    auto held = Journal::open(state_);
    ASSERT_TRUE(held) << held.error().message();
    send(to_child[1], "locked");
    const std::string refused = receive(to_parent[0]);
    const long waited = std::stol(receive(to_parent[0]));
    EXPECT_EQ(refused, "another dltune is changing this host (state directory " + state_ +
                           " is locked); try again when it has finished");
    EXPECT_GE(waited, 140);  // it waited, with retries, before giving up
    EXPECT_LT(waited, 3000);
  }  // released
  send(to_child[1], "released");
  EXPECT_EQ(receive(to_parent[0]), "opened");
  const int status = wait_for(pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ::close(to_child[1]);
  ::close(to_parent[0]);
}

TEST_F(JournalTest, ReadOnlyOpenOfAMissingJournalCreatesNothing) {
  auto j = Journal::open_read_only(state_);
  ASSERT_TRUE(j) << j.error().message();
  EXPECT_TRUE((*j)->read_only());
  EXPECT_FALSE(fs::exists(tmp_ / "var"));
  auto h = (*j)->history();
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->empty());
  auto p = (*j)->pending();
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->empty());
  auto last = (*j)->last_applied();
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, std::nullopt);
  auto tx = (*j)->begin("tune apply", "training");
  ASSERT_FALSE(tx);
  EXPECT_NE(tx.error().message().find("read-only"), std::string::npos);
  EXPECT_FALSE((*j)->backup_dir(1));
  EXPECT_FALSE(fs::exists(tmp_ / "var"));

  fs::create_directories(state_);  // the directory without a database
  ASSERT_TRUE(Journal::open_read_only(state_));
  EXPECT_TRUE(fs::is_empty(state_));
}

TEST_F(JournalTest, ReadOnlyJournalSeesCommittedWritesAndWritesNothing) {
  auto w = Journal::open(state_);
  ASSERT_TRUE(w);
  auto tx = (*w)->begin("tune apply", "training");
  ASSERT_TRUE(tx);
  ASSERT_TRUE((*w)->journal_change(*tx, change("vm.swappiness", "60", "10")));
  auto r = Journal::open_read_only(state_);
  ASSERT_TRUE(r) << r.error().message();
  auto p = (*r)->pending();
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].changes.size(), 1u);
  EXPECT_FALSE((*r)->finish(*tx, TxState::kApplied));
  EXPECT_FALSE((*r)->set_change_state(1, ChangeState::kApplied));
  ASSERT_TRUE((*w)->finish(*tx, TxState::kApplied));
  auto last = (*r)->last_applied();  // a new snapshot sees the commit
  ASSERT_TRUE(last && last->has_value());
  EXPECT_EQ((*last)->id, *tx);
}

TEST_F(JournalTest, BackupDirectoryIsPrivate) {
  auto j = Journal::open(state_);
  ASSERT_TRUE(j);
  auto tx = (*j)->begin("tune apply --persist", "training");
  ASSERT_TRUE(tx);
  auto dir = (*j)->backup_dir(*tx);
  ASSERT_TRUE(dir) << dir.error().message();
  EXPECT_EQ(*dir, state_ + "/backups/" + std::to_string(*tx));
  EXPECT_EQ(mode_of(*dir), 0700u);
  EXPECT_EQ(mode_of(state_ + "/backups"), 0700u);
  auto again = (*j)->backup_dir(*tx);  // already there: the same directory
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *dir);
}

TEST_F(JournalTest, GarbageDatabaseIsAClearError) {
  fs::create_directories(state_);
  std::ofstream(fs::path(state_) / "state.db") << std::string(4096, 'x') << "not a database\n";
  for (const bool read_only : {false, true}) {
    auto j = read_only ? Journal::open_read_only(state_) : Journal::open(state_, 0);
    ASSERT_FALSE(j);
    const auto msg = j.error().message();
    EXPECT_NE(msg.find(state_ + "/state.db"), std::string::npos) << msg;
    EXPECT_NE(msg.find("file is not a database"), std::string::npos) << msg;
  }
}

TEST_F(JournalTest, NewerSchemaIsRefused) {
  {
    auto j = Journal::open(state_);
    ASSERT_TRUE(j);
  }
  sql("PRAGMA user_version = " + std::to_string(dltune::tune::kJournalSchemaVersion + 1));
  for (const bool read_only : {false, true}) {
    auto j = read_only ? Journal::open_read_only(state_) : Journal::open(state_, 0);
    ASSERT_FALSE(j);
    const auto msg = j.error().message();
    EXPECT_NE(msg.find("schema version 2, newer"), std::string::npos) << msg;
    EXPECT_NE(msg.find(state_ + "/state.db"), std::string::npos) << msg;
  }
}

TEST_F(JournalTest, StateDirectoryThatIsNotADirectory) {
  fs::create_directories(tmp_ / "var/lib");
  std::ofstream(tmp_ / "var/lib/file") << "x";
  auto j = Journal::open((tmp_ / "var/lib/file").string());
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message().find("var/lib/file"), std::string::npos);
  auto under = Journal::open((tmp_ / "var/lib/file/state").string());  // ENOTDIR on the way
  ASSERT_FALSE(under);
  EXPECT_EQ(under.error().errno_, ENOTDIR) << under.error().message();
  // Reading: a file, or a path through one, is an error naming it, never "nothing applied".
  for (const auto& p : {tmp_ / "var/lib/file", tmp_ / "var/lib/file/state"}) {
    auto ro = Journal::open_read_only(p.string());
    ASSERT_FALSE(ro) << p;
    EXPECT_NE(ro.error().message().find(p.string()), std::string::npos) << ro.error().message();
    EXPECT_NE(ro.error().message().find("is not a directory"), std::string::npos);
  }
}

TEST_F(JournalTest, AnotherProgramsDatabaseIsRefusedAndLeftAsItWas) {
  fs::create_directories(state_);
  sql("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x')");
  for (const bool read_only : {true, false}) {
    auto j = read_only ? Journal::open_read_only(state_) : Journal::open(state_, 0);
    ASSERT_FALSE(j);
    const auto msg = j.error().message();
    EXPECT_NE(msg.find("is not dltune's state database"), std::string::npos) << msg;
    EXPECT_NE(msg.find(state_ + "/state.db"), std::string::npos) << msg;
  }
  // Nothing was set in it: no journal tables, not switched to WAL.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((fs::path(state_) / "state.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 1);
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STRNE(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(JournalTest, TrailingSlashNamesTheSameDirectory) {
  auto j = Journal::open(state_ + "//");
  ASSERT_TRUE(j) << j.error().message();
  EXPECT_EQ((*j)->state_dir(), state_);
  EXPECT_EQ((*j)->database_path(), state_ + "/state.db");
  EXPECT_FALSE(Journal::open(""));
  EXPECT_FALSE(Journal::open_read_only(""));
}

}  // namespace journal_test

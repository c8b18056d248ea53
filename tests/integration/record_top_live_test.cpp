// `dltune record`, `dltune run --record` and `dltune top` on this host: real processes, a real
// PyTorch job with DataLoader workers, a real terminal (tmux).
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "store/recording.hpp"
#include "support/build_paths.hpp"
#include "support/host_values.hpp"
#include "support/run.hpp"

namespace record_top_live_test {

using dltune::testing::run;
namespace fs = std::filesystem;
using dltune::monitor::Role;

namespace {

const std::string kJob = std::string(DLTUNE_SOURCE_DIR) + "/tests/jobs/train_cpu.py";

class RecordLive : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           fmt::format("record_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::all);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A child running argv (exec'd), killed and reaped when the guard goes.
struct Child {
  pid_t pid = -1;
  explicit Child(std::vector<std::string> argv) {
    pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);  // its own group, killed whole: no orphan left holding ctest's pipe
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

std::unique_ptr<dltune::store::Recording> open_recording(const std::string& path) {
  auto r = dltune::store::Recording::open(path);
  EXPECT_TRUE(r) << r.error().message();
  return r ? std::move(*r) : nullptr;
}

}  // namespace

// `run --nproc 2 --record`: the recording follows the job's group, so both ranks are in it (they
// are dltune's children, not rank 0's), with the job's own CPU time.
TEST_F(RecordLive, RunOfRanksRecordsEveryRank) {
  if (::geteuid() != 0) GTEST_SKIP() << "run creates cgroups: needs root";
  const auto db = file("ranks.db");
  const std::string name = fmt::format("test-record-ranks-{}", ::getpid());
  const auto r = run({DLTUNE_BINARY, "run", "--name", name, "--nproc", "2", "--record", db,
                      "--record-interval", "200ms", "-q", "--", "/usr/bin/python3",
                      std::string(DLTUNE_SOURCE_DIR) + "/tests/jobs/ddp_train.py", "--seconds", "8",
                      "--extra-work", "1:3"},
                     {}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = open_recording(db);
  ASSERT_TRUE(rec);
  std::size_t most_ranks = 0;
  bool saw_cgroup_cpu = false, saw_rank_role = false;
  std::set<int> rank_numbers;
  std::optional<std::int64_t> last_with_both;  // ns from the recording's start
  pid_t rank1 = 0;
  for (std::size_t i = 0; i < rec->size(); ++i) {
    auto s = rec->at(i);
    ASSERT_TRUE(s) << s.error().message();
    std::set<pid_t> ranks;
    for (const auto& p : s->processes) {
      if (p.cmdline.find("ddp_train.py") != std::string::npos &&
          (p.role == Role::kRank || p.role == Role::kMain)) {
        ranks.insert(p.pid);
        if (p.rank) rank_numbers.insert(*p.rank);
        if (p.rank == 1) rank1 = p.pid;
      }
      saw_rank_role = saw_rank_role || p.role == Role::kRank;
    }
    if (ranks.size() == 2) last_with_both = s->wall_ns - rec->info().started_wall_ns;
    most_ranks = std::max(most_ranks, ranks.size());
    if (s->cgroup && s->cgroup->path.ends_with("/dltune/" + name) &&
        s->cgroup->cpu_usage_us.value_or(0) > 0)
      saw_cgroup_cpu = true;
  }
  EXPECT_EQ(most_ranks, 2u) << "both ranks, in the job's group";
  EXPECT_TRUE(saw_rank_role) << "the second rank is a rank, not a worker of the first";
  EXPECT_TRUE(saw_cgroup_cpu) << "the job's group (above the ranks'), with its CPU time";
  auto summary = rec->document("summary");
  ASSERT_TRUE(summary && summary->has_value());
  EXPECT_EQ((**summary)["ranks"].size(), 2u);
  // Each rank recorded with the RANK of its environment.
  EXPECT_EQ(rank_numbers, (std::set<int>{0, 1}));
  ASSERT_NE(rank1, 0);
  // The replay at the ranks' last sample marks rank 1, given three times the work, as top did.
  ASSERT_TRUE(last_with_both);
  const auto replay = run({DLTUNE_BINARY, "record", "--replay", db, "--once", "--at",
                           fmt::format("{}ms", *last_with_both / 1'000'000), "--sort", "tree"},
                          {{"COLUMNS", "200"}});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find(fmt::format("! straggler: rank 1 (pid {}) holds the job back", rank1)),
            std::string::npos)
      << replay.out;
  std::string marked;
  for (const auto& line : dltune::text::lines(replay.out))
    if (line.find("STRAGGLER") != std::string_view::npos) marked = std::string(line);
  EXPECT_NE(marked.find(fmt::format("{} rank1", rank1)), std::string::npos) << replay.out;
}

TEST_F(RecordLive, RunRecordsAPyTorchJobWithItsWorkersAndItsCgroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "run creates cgroups: needs root";
  const auto db = file("job.db");
  const std::string name = fmt::format("test-record-{}", ::getpid());
  const auto r =
      run({DLTUNE_BINARY, "run", "--name", name, "--record", db, "--record-interval", "200ms", "-q",
           "--", "/usr/bin/python3", kJob, "--samples", "1280", "--workers", "2"},
          {}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = open_recording(db);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->info().exit_status, 0);
  ASSERT_FALSE(rec->info().command.empty());
  EXPECT_EQ(rec->info().command.front(), "/usr/bin/python3");
  ASSERT_GE(rec->size(), 3u);
  bool saw_main = false, saw_cgroup_cpu = false;
  std::size_t most_workers = 0;
  for (std::size_t i = 0; i < rec->size(); ++i) {
    auto s = rec->at(i);
    ASSERT_TRUE(s) << s.error().message();
    std::size_t workers = 0;
    for (const auto& p : s->processes) {
      if (p.role == Role::kMain) {
        saw_main = true;
        EXPECT_NE(p.cmdline.find("train_cpu.py"), std::string::npos) << p.cmdline;
      }
      if (p.role == Role::kWorker) ++workers;
    }
    most_workers = std::max(most_workers, workers);
    if (s->cgroup && s->cgroup->path.find(name) != std::string::npos &&
        s->cgroup->cpu_usage_us.value_or(0) > 0)
      saw_cgroup_cpu = true;
  }
  EXPECT_TRUE(saw_main);
  EXPECT_EQ(most_workers, 2u) << "the DataLoader's two workers, named from the tree";
  EXPECT_TRUE(saw_cgroup_cpu) << "the job's own cgroup, with its CPU time";
  auto env = rec->document("env");
  ASSERT_TRUE(env && env->has_value());
  EXPECT_TRUE((*env)->contains("os"));
  auto check = rec->document("check");
  ASSERT_TRUE(check && check->has_value());
  auto summary = rec->document("summary");  // run's own summary: what compare reads
  ASSERT_TRUE(summary && summary->has_value());
  EXPECT_EQ((**summary)["exit_code"], 0);
  EXPECT_GT((**summary)["progress"].value("samples", 0), 0) << (**summary).dump(2);
  // The replay shows the job as top does, at the middle of the recording (the job's length
  // depends on the machine: a fixed offset can fall past a fast run's end).
  const auto first = rec->at(0), middle = rec->at(rec->size() / 2);
  ASSERT_TRUE(first && middle);
  const auto at = fmt::format("{}ms", (middle->wall_ns - first->wall_ns) / 1'000'000);
  const auto replay =
      run({DLTUNE_BINARY, "record", "--replay", db, "--once", "--at", at, "--sort", "tree"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find(" main "), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("replay "), std::string::npos) << replay.out;
}

TEST_F(RecordLive, RecordsACommandItStartsUntilItExits) {
  const auto db = file("cmd.db");
  const auto r = run({DLTUNE_BINARY, "record", "-o", db, "--interval", "50ms", "--no-gpus", "--",
                      "/bin/sh", "-c", "/bin/sleep 0.6; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << "the job's exit status: " << r.err;
  EXPECT_NE(r.err.find("samples"), std::string::npos) << r.err;
  auto rec = open_recording(db);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->info().exit_status, 3);
  EXPECT_GE(rec->size(), 5u);
  bool saw_child = false;
  for (std::size_t i = 0; i < rec->size(); ++i) {
    auto s = rec->at(i);
    ASSERT_TRUE(s);
    for (const auto& p : s->processes)
      if (p.role == Role::kChild && p.comm == "sleep") saw_child = true;
  }
  EXPECT_TRUE(saw_child) << "sleep, a child of the main shell";
}

TEST_F(RecordLive, RecordsAPidUntilItEndsAndTheHostForADuration) {
  // Two seconds: the instrumented dltune takes most of one to start on a busy machine (a run
  // with one second's sleep saw 2 samples).
  Child sleeper({"/bin/sleep", "2"});
  const auto db = file("pid.db");
  const auto r = run({DLTUNE_BINARY, "record", "-o", db, "--interval", "100ms", "--no-gpus",
                      "--pid", std::to_string(sleeper.pid)},
                     {}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = open_recording(db);
  ASSERT_TRUE(rec);
  EXPECT_GE(rec->size(), 3u);
  EXPECT_LE(rec->size(), 40u) << "it stops when the process has gone";
  auto first = rec->at(0);
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->processes.empty());
  EXPECT_EQ(first->processes.front().pid, sleeper.pid);
  EXPECT_EQ(first->processes.front().role, Role::kMain);

  const auto host = file("host.db");
  const auto h = run({DLTUNE_BINARY, "record", "-o", host, "--interval", "100ms", "--duration",
                      "1s", "--no-gpus"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto hrec = open_recording(host);
  ASSERT_TRUE(hrec);
  EXPECT_GE(hrec->size(), 5u);
  EXPECT_LE(hrec->size(), 15u);
  auto last = hrec->at(hrec->size() - 1);
  ASSERT_TRUE(last);
  EXPECT_GT(last->system.memory.total, 0u);
  EXPECT_FALSE(last->system.cpus.empty());
}

TEST_F(RecordLive, BadInputIsRefusedAndWritesNothing) {
  const auto db = file("exists.db");
  std::ofstream(db) << "keep me";
  auto r = run({DLTUNE_BINARY, "record", "-o", db, "--duration", "1s"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exists; use --force"), std::string::npos) << r.err;
  EXPECT_EQ(dltune::testing::slurp(db).value_or(""), "keep me");

  const auto fresh = file("fresh.db");
  for (const auto* bad : {"5ms", "2h", "soon"}) {
    r = run({DLTUNE_BINARY, "record", "-o", fresh, "--interval", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find(std::string("dltune record: --interval ") + bad + ": "), std::string::npos)
        << r.err;
  }
  r = run({DLTUNE_BINARY, "record", "-o", fresh, "--", "/no/such/program"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/no/such/program"), std::string::npos) << r.err;
  r = run({DLTUNE_BINARY, "record", "-o", fresh, "--pid", "999999999"});
  EXPECT_EQ(r.exit_code, 2);
  r = run({DLTUNE_BINARY, "record", "--interval", "1s"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-o FILE"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fresh));

  r = run({DLTUNE_BINARY, "record", "--replay", db, "--once"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(db), std::string::npos) << r.err;
  EXPECT_EQ(dltune::testing::slurp(db).value_or(""), "keep me");
}

TEST(TopLive, OnceShowsThePidsTreeAsText) {
  Child tree({"/bin/sh", "-c", "/bin/sleep 30 & /bin/sleep 31 & wait"});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto r = run({DLTUNE_BINARY, "top", "--once", "--no-gpus", "--interval", "200ms", "--pid",
                      std::to_string(tree.pid)},
                     {{"COLUMNS", "120"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(fmt::format("{:>7} main", tree.pid)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  /bin/sleep 30"), std::string::npos) << r.out;  // indented under sh
  EXPECT_NE(r.out.find("  /bin/sleep 31"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MEM  used"), std::string::npos);
  EXPECT_NE(r.out.find("PSI  "), std::string::npos);
  // Without --once but into a pipe: the same plain view, not an error.
  const auto piped = run({DLTUNE_BINARY, "top", "--no-gpus", "--interval", "100ms", "--pid",
                          std::to_string(tree.pid)});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_NE(piped.out.find(fmt::format("{:>7} main", tree.pid)), std::string::npos) << piped.out;
  const auto bad = run({DLTUNE_BINARY, "top", "--once", "--sort", "colour"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--sort colour"), std::string::npos);
}

// Crash safety: `record` killed with SIGKILL in the middle of recording (while it
// samples and writes) leaves a recording that opens with every sample committed before the
// kill, each one whole, that `record --replay` reads through.
TEST_F(RecordLive, KilledMidRecordingTheRecordingOpensWithEveryCommittedSample) {
  const auto db = file("killed.db");
  Child rec({DLTUNE_BINARY, "record", "-o", db, "--interval", "20ms", "--no-gpus"});
  ASSERT_GT(rec.pid, 0);
  std::size_t seen = 0;
  for (int tries = 0; tries < 3000 && seen < 40; ++tries) {  // up to 30 s
    if (fs::exists(db))
      if (auto r = dltune::store::Recording::open(db); r) seen = (*r)->size();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(seen, 40u) << "record did not commit 40 samples in 30 s";
  ASSERT_EQ(::kill(rec.pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(rec.pid, &status, 0), rec.pid);
  rec.pid = -1;
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  auto back = open_recording(db);
  ASSERT_TRUE(back);
  ASSERT_GE(back->size(), seen);
  EXPECT_FALSE(back->info().ended_wall_ns.has_value()) << "a killed recording was never finished";
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < back->size(); ++i) {
    auto s = back->at(i);
    ASSERT_TRUE(s) << i << ": " << s.error().message();
    EXPECT_GT(s->wall_ns, previous) << i;
    EXPECT_GT(s->system.memory.total, 0u) << i;
    EXPECT_FALSE(s->system.cpus.empty()) << i;
    previous = s->wall_ns;
  }
  const auto replay = run({DLTUNE_BINARY, "record", "--replay", db, "--once"});
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
}

// A real I/O fault under SQLite: `record` into a file system that fills up (a 512 KiB
// tmpfs of the test's own, in a private mount namespace that no other process sees) stops with
// an error naming the recording and the cause, and what it committed before opens, every
// sample whole.
TEST_F(RecordLive, AFullFileSystemStopsRecordWithTheFileNamedAndKeepsWhatWasCommitted) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr))
    GTEST_SKIP() << "mount is not permitted here: " << std::strerror(errno);
  const auto small = dir_ / "small";
  fs::create_directories(small);
  ASSERT_EQ(::mount("dltune-test", small.c_str(), "tmpfs", 0, "size=512k"), 0)
      << std::strerror(errno);
  const auto db = (small / "full.db").string();
  const auto r =
      run({DLTUNE_BINARY, "record", "-o", db, "--interval", "10ms", "--no-gpus"}, {}, 120);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(db), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("full"), std::string::npos) << r.err;
  {
    auto back = open_recording(db);
    ASSERT_TRUE(back);
    EXPECT_GE(back->size(), 10u);
    for (std::size_t i = 0; i < back->size(); ++i) {
      auto s = back->at(i);
      ASSERT_TRUE(s) << i << ": " << s.error().message();
      EXPECT_GT(s->system.memory.total, 0u) << i;
    }
  }
  EXPECT_EQ(::umount2(small.c_str(), MNT_DETACH), 0) << std::strerror(errno);
}

}  // namespace record_top_live_test

// spawn_and_wait with real, short-lived processes (no root needed): exit codes and signals
// passed through, start-up failures reported with nothing left running, affinity and limits as
// the job sees them, its output copied through byte for byte, progress read from it, signals
// forwarded. Parts that take over signals or dltune's own output run in a forked child of the
// test (support/in_child.hpp). Nothing here asserts on time.
#include "launch/spawn.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "support/in_child.hpp"

namespace dltune::launch::spawn_test {
namespace {

namespace fs = std::filesystem;
using dltune::testing::in_child;
using dltune::testing::slurp_file;

const std::map<std::string, std::string> kEnv = {{"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}};

SpawnRequest shell(const std::string& script, std::vector<std::string> args = {}) {
  SpawnRequest r;
  r.argv = {"sh", "-c", script, "sh"};
  r.argv.insert(r.argv.end(), args.begin(), args.end());
  r.env = kEnv;
  return r;
}

// A fresh scratch directory for one test.
class Scratch {
 public:
  Scratch() {
    static int n = 0;
    dir_ = fs::path(::testing::TempDir()) /
           (std::string("dltune_spawn_") + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  [[nodiscard]] std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// No child of the test is left running or unreaped.
void expect_no_children() {
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(Spawn, ExitCodePassedThrough) {
  const auto r = spawn_and_wait(shell("exit 3"));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->signal);
  EXPECT_GT(r->pid, 0);
  EXPECT_TRUE(r->warnings.empty());
  expect_no_children();
}

TEST(Spawn, KilledBySignalIs128PlusN) {
  const auto r = spawn_and_wait(shell("kill -TERM $$"));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 143);
  EXPECT_EQ(r->signal, SIGTERM);
}

TEST(Spawn, CommandNotFoundNamesItAndExec) {
  SpawnRequest req;
  req.argv = {"trian.py", "--epochs", "1"};
  req.env = kEnv;
  const auto r = spawn_and_wait(req);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "cannot run 'trian.py' (exec): No such file or directory");
  EXPECT_EQ(r.error().errno_, ENOENT);
  expect_no_children();
}

TEST(Spawn, NotExecutableIsPermissionDenied) {
  Scratch s;
  std::ofstream(s.file("train.py")) << "print(1)\n";
  SpawnRequest req;
  req.argv = {s.file("train.py")};
  req.env = kEnv;
  const auto r = spawn_and_wait(req);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errno_, EACCES);
  EXPECT_NE(r.error().message().find("(exec)"), std::string::npos);
  expect_no_children();
}

TEST(Spawn, LooksUpTheCommandInTheJobsPath) {
  Scratch s;
  std::ofstream(s.file("train")) << "#!/bin/sh\necho \"$1\" > \"$2\"\n";
  fs::permissions(s.file("train"), fs::perms::owner_all);
  SpawnRequest req;
  req.argv = {"train", "ran", s.file("out")};
  req.env = {{"PATH", "/nonexistent:" + fs::path(s.file("train")).parent_path().string()}};
  const auto r = spawn_and_wait(req);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(slurp_file(s.file("out")), "ran\n");

  EXPECT_EQ(*find_program("train", req.env), s.file("train"));
  EXPECT_EQ(*find_program("sh", kEnv), "/usr/bin/sh");
  EXPECT_EQ(*find_program("/bin/sh", {}), "/bin/sh");
  const auto missing = find_program("trian.py", kEnv);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "cannot run 'trian.py': No such file or directory");
}

TEST(Spawn, TheJobGetsExactlyItsEnvironment) {
  Scratch s;
  auto req = shell("env > \"$1\"", {s.file("env")});
  req.env["DLTUNE_TEST"] = "a b=c";
  const auto r = spawn_and_wait(req);
  ASSERT_TRUE(r) << r.error().message();
  const auto env = slurp_file(s.file("env"));
  EXPECT_NE(env.find("DLTUNE_TEST=a b=c\n"), std::string::npos);
  EXPECT_NE(env.find("LC_ALL=C\n"), std::string::npos);
  EXPECT_EQ(env.find("HOME="), std::string::npos) << env;  // not dltune's own
}

TEST(Spawn, StartFailureBeforeExecIsReportedWithItsStep) {
  auto req = shell("true");
  req.cgroup_procs = {"/nonexistent/dltune/cgroup.procs"};
  const auto r = spawn_and_wait(req);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "cannot run 'sh' (cgroup): No such file or directory");
  expect_no_children();

  auto cpus = shell("true");
  cpus.cpus = std::vector<int>{4000};  // no such CPU: sched_setaffinity says EINVAL
  const auto r2 = spawn_and_wait(cpus);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().message(), "cannot run 'sh' (affinity): Invalid argument");
  expect_no_children();

  auto bad = shell("true");
  bad.limits.push_back({RLIMIT_NOFILE, "nofile", 100, 50});  // soft above hard
  const auto r3 = spawn_and_wait(bad);
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.error().message(), "cannot run 'sh' (setrlimit nofile): Invalid argument");
  expect_no_children();

  SpawnRequest empty;
  EXPECT_FALSE(spawn_and_wait(empty));
}

TEST(Spawn, AffinityAsTheJobSeesIt) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  int last = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) last = c;
  Scratch s;
  auto req = shell("grep Cpus_allowed_list /proc/self/status > \"$1\"", {s.file("status")});
  req.cpus = std::vector<int>{last};
  const auto r = spawn_and_wait(req);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(slurp_file(s.file("status")),
            std::string("Cpus_allowed_list:\t") + std::to_string(last) + "\n");
}

// "Max open files            1000                 2000                 files"
std::pair<std::string, std::string> limits_line(const std::string& limits,
                                                const std::string& name) {
  std::istringstream in(limits);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0) continue;
    std::istringstream f(line.substr(name.size()));
    std::string soft, hard;
    f >> soft >> hard;
    return {soft, hard};
  }
  return {};
}

TEST(Spawn, ResourceLimitsAsTheJobSeesThem) {
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  if (now.rlim_max < 2000) GTEST_SKIP() << "nofile hard limit below 2000 here";
  Scratch s;
  auto req = shell("cat /proc/self/limits > \"$1\"", {s.file("limits")});
  req.limits.push_back({RLIMIT_NOFILE, "nofile", 1000, 2000});
  const auto r = spawn_and_wait(req);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->warnings.empty());
  const auto [soft, hard] = limits_line(slurp_file(s.file("limits")), "Max open files");
  EXPECT_EQ(soft, "1000");
  EXPECT_EQ(hard, "2000");
}

bool has_cap_sys_resource() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CapEff:", 0) == 0)
      return (std::stoull(line.substr(7), nullptr, 16) >> CAP_SYS_RESOURCE) & 1;
  }
  return false;
}

TEST(Spawn, MemlockAboveTheHardLimitIsAWarningAndTheJobRuns) {
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_MEMLOCK, &now), 0);
  if (now.rlim_max == RLIM_INFINITY) GTEST_SKIP() << "memlock is unlimited here";
  if (has_cap_sys_resource()) GTEST_SKIP() << "this process may raise memlock (CAP_SYS_RESOURCE)";
  Scratch s;
  auto req = shell("cat /proc/self/limits > \"$1\"", {s.file("limits")});
  req.limits.push_back({RLIMIT_MEMLOCK, "memlock", RLIM_INFINITY, RLIM_INFINITY});
  const auto r = spawn_and_wait(req);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0].rfind("memlock: cannot raise to unlimited (hard limit ", 0), 0u)
      << r->warnings[0];
  EXPECT_NE(r->warnings[0].find(", needs CAP_SYS_RESOURCE)"), std::string::npos);
  // The job runs with as much as the hard limit allows.
  const auto [soft, hard] = limits_line(slurp_file(s.file("limits")), "Max locked memory");
  EXPECT_EQ(soft, std::to_string(now.rlim_max));
  EXPECT_EQ(hard, std::to_string(now.rlim_max));
}

TEST(Spawn, UsageIncludesTheChildrenTheJobWaitedFor) {
  // sh waits for python, which touches 64 MiB: sh alone stays far below that.
  const auto r = spawn_and_wait(
      shell("/usr/bin/python3 -c 'b = bytes(64 << 20).replace(b\"\\0\", b\"x\")'; true"));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_GE(r->max_rss_bytes, 64u << 20);
  EXPECT_GT(r->user_seconds + r->system_seconds, 0);
}

TEST(Spawn, OutputPassesThroughByteForByte) {
  // '\r' redraws, a NUL, a partial multi-byte character split across writes, no final newline.
  const std::string err = std::string(" 10%|#  | 1/10\r 20%|## | 2/10 [00:00<00:00, 5.0it/s]\r") +
                          std::string("\0x\xe2\x96", 4) + "\x88 end";
  const auto run = in_child([&] {
    SpawnRequest req;
    req.env = kEnv;
    // Octal escapes: an argument string could not hold the NUL.
    req.argv = {"sh", "-c",
                "printf ' 10%%|#  | 1/10\\r 20%%|## | 2/10 [00:00<00:00, 5.0it/s]\\r' >&2; "
                "printf 'out\\r'; printf '\\000x\\342\\226' >&2; printf '\\210 end' >&2",
                "sh"};
    const auto r = spawn_and_wait(req);
    if (!r) return r.error().message();
    return std::to_string(r->progress.samples) + " " + std::to_string(*r->progress.last_rate);
  });
  ASSERT_TRUE(WIFEXITED(run.status));
  EXPECT_EQ(run.report, "1 5.000000");
  EXPECT_EQ(run.err, err);
  EXPECT_EQ(run.out, "out\r");  // stdout not watched: inherited, untouched
}

TEST(Spawn, WatchedStdoutPassesThroughAndIsRead) {
  const auto run = in_child([&] {
    auto req = shell("printf 'a 2.5it/s\\rb 3.5it/s\\r'; printf 'e\\n' >&2");
    req.watch_stdout = true;
    const auto r = spawn_and_wait(req);
    if (!r) return r.error().message();
    return std::to_string(r->progress.samples) + " " + std::to_string(*r->progress.median_rate);
  });
  EXPECT_EQ(run.report, "2 3.000000");
  EXPECT_EQ(run.out, "a 2.5it/s\rb 3.5it/s\r");
  EXPECT_EQ(run.err, "e\n");
}

TEST(Spawn, OutputIntoADescriptorWithStdinFromDevNull) {
  Scratch s;
  const auto log = s.file("run.log");
  const auto run = in_child([&] {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return std::string("cannot create the log");
    // Reading stdin ends at once (/dev/null), rather than waiting on the test's terminal.
    auto req = shell("cat; printf 'a 2.5it/s\\r'; printf 'e 4.5it/s\\n' >&2");
    req.output_fd = fd;
    const auto r = spawn_and_wait(req);
    ::close(fd);
    if (!r) return r.error().message();
    return std::to_string(r->exit_code) + " " + std::to_string(r->progress.samples);
  });
  EXPECT_EQ(run.report, "0 2");
  EXPECT_EQ(run.out, "");  // nothing on dltune's own streams
  EXPECT_EQ(run.err, "");
  const auto logged = slurp_file(log);
  EXPECT_NE(logged.find("a 2.5it/s\r"), std::string::npos) << logged;
  EXPECT_NE(logged.find("e 4.5it/s\n"), std::string::npos) << logged;
}

TEST(Spawn, RateFromATqdmLikeJobAndACustomRegex) {
  const auto run = in_child([&] {
    std::string script;
    for (int i = 1; i <= 20; ++i)
      script += std::string("printf '\\r") + std::to_string(i * 5) + "%%|##| " + std::to_string(i) +
                "/20 [00:00<00:00, " + std::to_string(i < 3 ? 1 : 10 + i) + ".00it/s]' >&2; ";
    script += "printf '\\n' >&2; echo 'throughput: 1190.5 img/s' >&2";
    const auto r = spawn_and_wait(shell(script));
    if (!r) return r.error().message();
    auto custom = shell(script);
    custom.rate_regex = *RatePattern::compile("throughput: ([0-9.]+)");
    const auto c = spawn_and_wait(custom);
    if (!c) return c.error().message();
    const auto& p = r->progress;
    return std::to_string(p.samples) + " " + p.unit + " " + std::to_string(*p.last_rate) + " " +
           std::to_string(*p.median_rate) + " | " + std::to_string(c->progress.samples) + " '" +
           c->progress.unit + "' " + std::to_string(*c->progress.last_rate);
  });
  // Warm-up: the first 2 of 20 readings; the median of 13..30 is 21.5.
  EXPECT_EQ(run.report, "20 it/s 30.000000 21.500000 | 1 '' 1190.500000");
}

TEST(Spawn, RealTqdmOutputIsRead) {
  const auto has_tqdm = spawn_and_wait([] {
    SpawnRequest r;
    r.argv = {"/usr/bin/python3", "-c", "import tqdm"};
    r.env = kEnv;
    return r;
  }());
  if (!has_tqdm || has_tqdm->exit_code != 0) GTEST_SKIP() << "Debian's python3-tqdm is missing";
  const auto run = in_child([&] {
    SpawnRequest req;
    req.argv = {"/usr/bin/python3", "-c",
                "import time, tqdm\n"
                "for i in tqdm.tqdm(range(40), mininterval=0, unit='img'):\n"
                "    time.sleep(0.002)\n"};
    req.env = kEnv;
    const auto r = spawn_and_wait(req);
    if (!r) return r.error().message();
    // tqdm draws once at the start (no rate yet), then about once per item (mininterval=0).
    const auto& p = r->progress;
    return std::to_string(r->exit_code) + " " + p.unit + " " +
           (p.samples >= 20 ? "many" : std::to_string(p.samples)) + " " +
           (p.median_rate > 0.0 ? "positive" : "zero");
  });
  EXPECT_EQ(run.report, "0 img/s many positive") << run.err;
  EXPECT_NE(run.err.find("40/40"), std::string::npos);
}

TEST(Spawn, SignalsFromAnotherProcessAreForwarded) {
  Scratch s;
  const auto ready = s.file("ready"), got = s.file("got");
  const auto run = in_child(
      [&] {
        auto req = shell(
            "trap 'echo TERM > \"$2\"; exit 7' TERM; echo > \"$1\"; "
            "while :; do sleep 0.05; done",
            {ready, got});
        const auto r = spawn_and_wait(req);
        if (!r) return r.error().message();
        std::string forwarded;
        for (const int sig : r->forwarded_signals) forwarded += std::to_string(sig) + ",";
        forwarded += " received ";
        for (const int sig : r->received_signals) forwarded += std::to_string(sig) + ",";
        // SIGTERM is ours again once the job is over: the handler the test child had.
        struct sigaction now {};
        ::sigaction(SIGTERM, nullptr, &now);
        sigset_t mask;
        ::sigprocmask(SIG_SETMASK, nullptr, &mask);
        return std::to_string(r->exit_code) + " " + forwarded + " " +
               (now.sa_handler == SIG_DFL ? "dfl" : "other") + " " +
               (::sigismember(&mask, SIGTERM) ? "blocked" : "unblocked");
      },
      [&](pid_t child) {
        // Waits for the job to be ready (not a timing assertion: the job signals it).
        for (int i = 0; i < 2000 && !fs::exists(ready); ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ::kill(child, SIGTERM);
      });
  ASSERT_TRUE(WIFEXITED(run.status)) << "the spawner itself was killed";
  EXPECT_EQ(run.report, "7 15, received 15, dfl unblocked");
  EXPECT_EQ(slurp_file(got), "TERM\n");
}

TEST(Spawn, TheJobStartsWithDefaultSignalsEvenWhenDltuneBlocksThem) {
  Scratch s;
  const auto run = in_child([&] {
    // The job inherits no blocked or handled signal from dltune.
    sigset_t set;
    ::sigemptyset(&set);
    ::sigaddset(&set, SIGUSR1);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    ::signal(SIGUSR2, [](int) {});
    const auto r = spawn_and_wait(
        shell("grep -E 'Sig(Blk|Cgt)' /proc/self/status > \"$1\"", {s.file("status")}));
    return r ? std::to_string(r->exit_code) : r.error().message();
  });
  EXPECT_EQ(run.report, "0");
  const auto status = slurp_file(s.file("status"));
  EXPECT_NE(status.find("SigBlk:\t0000000000000000\n"), std::string::npos) << status;
}

}  // namespace
}  // namespace dltune::launch::spawn_test

namespace dltune::launch::spawn_test {
namespace {

// The ranks of `run --nproc N`: all started, each one's end, the output of each passed through.
TEST(SpawnGroup, EveryMemberRunsToItsEndAndItsOwnExitIsKept) {
  Scratch s;
  std::vector<SpawnRequest> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back(shell("echo $RANK > \"$1\"; exit 0", {s.file("rank-" + std::to_string(r))}));
  for (int r = 0; r < 3; ++r) ranks[static_cast<std::size_t>(r)].env["RANK"] = std::to_string(r);
  std::vector<pid_t> seen;
  GroupOptions o;
  o.on_start = [&](const std::vector<pid_t>& pids) { seen = pids; };
  const auto g = spawn_group_and_wait(ranks, o);
  ASSERT_TRUE(g) << g.error().message();
  ASSERT_EQ(g->members.size(), 3u);
  EXPECT_FALSE(g->first_failure);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(g->members[r].result.exit_code, 0);
    EXPECT_FALSE(g->members[r].stopped);
    EXPECT_EQ(g->members[r].result.pid, seen[r]);
    EXPECT_EQ(slurp_file(s.file("rank-" + std::to_string(r))), std::to_string(r) + "\n");
  }
  expect_no_children();
}

// One fails while the others would run for long: they are stopped (SIGTERM), and one that
// ignores SIGTERM is killed after the grace; the first failure is named. (`exec`: the member is
// the sleep itself. A shell's child would outlive its SIGTERM and hold the test's output open,
// which kept ctest waiting for the minute it slept.)
TEST(SpawnGroup, AMemberThatFailsStopsTheOthers) {
  std::vector<SpawnRequest> ranks = {shell("exec sleep 60"), shell("sleep 0.2; exit 7"),
                                     shell("trap '' TERM; while :; do sleep 0.05; done")};
  GroupOptions o;
  o.grace = std::chrono::milliseconds(300);
  const auto g = spawn_group_and_wait(ranks, o);
  ASSERT_TRUE(g) << g.error().message();
  EXPECT_EQ(g->first_failure, 1u);
  EXPECT_EQ(g->members[1].result.exit_code, 7);
  EXPECT_FALSE(g->members[1].stopped);
  EXPECT_EQ(g->members[0].result.signal, SIGTERM);
  EXPECT_TRUE(g->members[0].stopped);
  EXPECT_EQ(g->members[2].result.signal, SIGKILL) << "it ignored SIGTERM";
  EXPECT_TRUE(g->members[2].stopped);
  expect_no_children();
}

// A member that cannot start takes down those started before it: an error naming it.
TEST(SpawnGroup, AMemberThatCannotStartStopsTheGroupBeforeItRuns) {
  Scratch s;
  std::vector<SpawnRequest> ranks = {shell("sleep 0.5; touch \"$1\"", {s.file("ran")}),
                                     shell("true")};
  ranks[1].argv = {"no-such-program-dltune"};
  const auto g = spawn_group_and_wait(ranks);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message().find("no-such-program-dltune' (exec) (rank 1)"), std::string::npos)
      << g.error().message();
  expect_no_children();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_FALSE(fs::exists(s.file("ran"))) << "rank 0 was killed, not left running";
}

}  // namespace
}  // namespace dltune::launch::spawn_test

// `dltune top` in a real terminal: tmux runs it in an 80x24 pane, the test reads the screen
// (capture-pane) and types keys (send-keys).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <regex>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "core/text.hpp"
#include "support/build_paths.hpp"
#include "support/host_values.hpp"
#include "support/run.hpp"

namespace top_tmux_test {

using dltune::testing::run;

namespace {

class TopTmux : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run({"/bin/sh", "-c", "command -v tmux"}).exit_code != 0)
      GTEST_SKIP() << "tmux is not installed (scripts/install-deps installs it)";
    // A server of its own per test: kill-server returns before the last test's server has gone,
    // and a new session on that socket can meet it exiting ("server exited unexpectedly").
    static int tests = 0;
    socket_ = fmt::format("dltune-top-test-{}-{}", ::getpid(), ++tests);
  }
  void TearDown() override {
    if (!socket_.empty()) run({"tmux", "-L", socket_, "kill-server"});
  }
  dltune::testing::RunResult tmux(std::vector<std::string> args) {
    args.insert(args.begin(), {"tmux", "-L", socket_});
    return run(args, {}, 20);
  }
  // Starts `command` in a detached 80x24 session; the pane stays after the program exits so that
  // its screen can be read. `exec`: the pane's process is the command itself (its pid is the
  // pane's), else a shell that runs it.
  // `env`: more NAME=VALUE for the pane (NO_COLOR=1).
  void start(const std::string& command, bool exec = true,
             const std::vector<std::string>& env = {}) {
    std::vector<std::string> args{"-f",          "/dev/null",
                                  "new-session", "-d",
                                  "-s",          "t",
                                  "-x",          "80",
                                  "-y",          std::to_string(height_),
                                  "-e",          "TERM=xterm-256color"};
    for (const auto& e : env) {
      args.push_back("-e");
      args.push_back(e);
    }
    args.push_back("sh -c 'sleep 0.3; " + std::string(exec ? "exec " : "") + command + "'");
    const auto made = tmux(args);
    ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
    ASSERT_EQ(tmux({"set-option", "-t", "t", "remain-on-exit", "on"}).exit_code, 0);
  }
  std::string screen() { return tmux({"capture-pane", "-p", "-t", "t"}).out; }
  // The screen with its attributes as escape sequences.
  std::string painted() { return tmux({"capture-pane", "-p", "-e", "-t", "t"}).out; }
  void keys(const std::vector<std::string>& names) {
    std::vector<std::string> args{"send-keys", "-t", "t"};
    args.insert(args.end(), names.begin(), names.end());
    tmux(args);
  }
  void text(const std::string& literal) { tmux({"send-keys", "-t", "t", "-l", literal}); }
  std::string pane(const std::string& format) {
    return std::string(dltune::text::trim(tmux({"display-message", "-p", "-t", "t", format}).out));
  }
  // Polls until `pred` holds of the screen, for up to `seconds`.
  bool wait_for(const std::function<bool(const std::string&)>& pred, int seconds = 10) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (pred(screen())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  std::string socket_;
  int height_ = 24;  // the pane's lines
};

bool has(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

// The process rows: the lines between the header and the status line.
std::vector<std::string> rows(const std::string& screen) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto l : dltune::text::lines(screen)) {
    if (in) out.emplace_back(l);
    if (has(std::string(l), "PID ROLE")) in = true;
  }
  while (!out.empty() && (out.back().empty() || has(out.back(), "q quit"))) out.pop_back();
  return out;
}

// Whether a line of capture-pane -e turns reverse video on (SGR 7, alone or in a list).
bool reverse(const std::string& line) {
  static const std::regex sgr("\x1b\\[(?:[0-9]+;)*7(?:;[0-9]+)*m");
  return std::regex_search(line, sgr);
}

// The row in reverse video (SGR 7), without its escapes; empty when none is.
std::string reversed_row(const std::string& painted) {
  for (const auto l : dltune::text::lines(painted)) {
    const std::string line(l);
    if (!reverse(line)) continue;
    std::string plain;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b') {
        while (i < line.size() && line[i] != 'm') ++i;
        continue;
      }
      plain += line[i];
    }
    if (!has(plain, "PID ROLE") && !has(plain, "dltune top") && !has(plain, "q quit")) return plain;
  }
  return "";
}

// A row's first word: its PID.
std::string pid_of(std::string_view row) {
  row = dltune::text::trim(row);
  return std::string(row.substr(0, row.find(' ')));
}

// Whether the screen sets a foreground or background colour (SGR 30-37, 40-47, 38;..., 48;...,
// 90-97, 100-107).
bool coloured(const std::string& painted) {
  static const std::regex sgr("\x1b\\[([0-9;]*)m");
  for (auto it = std::sregex_iterator(painted.begin(), painted.end(), sgr);
       it != std::sregex_iterator(); ++it) {
    const std::string params = (*it)[1].str();
    for (const auto part : dltune::text::split(params, ';')) {
      const auto n = dltune::text::to_uint(std::string(part));
      if (n && ((*n >= 30 && *n <= 38) || (*n >= 40 && *n <= 48) || (*n >= 90 && *n <= 97) ||
                (*n >= 100 && *n <= 107)))
        return true;
    }
  }
  return false;
}

}  // namespace

TEST_F(TopTmux, ShowsTheJobFitsTheTerminalSortsOnAKeyAndRestoresItOnQuit) {
  pid_t job = ::fork();
  if (job == 0) {
    ::setpgid(0, 0);  // killed whole at the end: no orphaned sleep holding ctest's pipe
    ::execl("/bin/sh", "sh", "-c", "/bin/sleep 60 & wait", nullptr);
    ::_exit(127);
  }
  // A shell runs top and writes its exit status down: tmux 3.3 at times leaves a pane's exited
  // process unreaped (a zombie, pane_dead_status empty), so the status is taken from the shell.
  const auto status_file = fmt::format("{}/top_status_{}", ::testing::TempDir(), ::getpid());
  ::unlink(status_file.c_str());
  start(fmt::format("{} top --no-gpus --interval 200ms --pid {}; echo $? > {}", DLTUNE_BINARY, job,
                    status_file),
        false);
  const bool drawn = wait_for([&](const std::string& s) {
    return has(s, "dltune top") && has(s, fmt::format("{:>7} main", job)) && has(s, "sleep 60");
  });
  const auto first = screen();
  EXPECT_TRUE(drawn) << first;
  EXPECT_LE(dltune::text::lines(first).size(), 24u);
  for (const auto l : dltune::text::lines(first)) EXPECT_LE(l.size(), 80u);
  EXPECT_TRUE(has(first, "PID ROLE")) << first;
  EXPECT_TRUE(has(first, "q quit")) << first;
  EXPECT_EQ(pane("#{alternate_on}"), "1") << "top draws on the alternate screen";

  tmux({"send-keys", "-t", "t", "m"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "sort mem"); })) << screen();
  tmux({"send-keys", "-t", "t", "q"});
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::optional<std::string> status;
  while (!((status = dltune::testing::slurp(status_file)) && status->ends_with("\n")) &&
         std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(status) << "top did not exit on q: " << screen();
  EXPECT_EQ(dltune::text::trim(*status), "0");
  ::unlink(status_file.c_str());
  EXPECT_EQ(pane("#{alternate_on}"), "0") << "the terminal is given back";
  EXPECT_FALSE(has(screen(), "PID ROLE")) << screen();
  ::kill(-job, SIGKILL);
  ::waitpid(job, nullptr, 0);
}

TEST_F(TopTmux, SigtermRestoresTheTerminal) {
  start(fmt::format("{} top --no-gpus --interval 200ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
  const auto pid = dltune::text::to_uint(pane("#{pane_pid}"));
  ASSERT_TRUE(pid);
  ASSERT_EQ(::kill(static_cast<pid_t>(*pid), SIGTERM), 0);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pane("#{pane_dead}") != "1" && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(pane("#{pane_dead}"), "1");
  EXPECT_EQ(pane("#{alternate_on}"), "0") << "endwin ran: the terminal is given back";
}

// A terminal that hangs up without SIGHUP reaching top (blocked here, as under a tracer or a
// parent that blocks it): top sees the keyboard gone and exits, rather than spin on it.
TEST_F(TopTmux, ATerminalThatHangsUpEndsTopWithoutSighup) {
  start(
      fmt::format("/usr/bin/python3 -c \"import os, signal, sys; "
                  "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGHUP]); "
                  "os.execv(sys.argv[1], sys.argv[1:])\" {} top --no-gpus --interval 100ms",
                  DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
  const auto pid = pane("#{pane_pid}");
  ASSERT_FALSE(pid.empty());
  tmux({"kill-server"});
  socket_.clear();
  const auto stat = "/proc/" + pid + "/stat";
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    const auto text = dltune::testing::slurp(stat);
    // Gone, or a zombie whose parent (init, once the server went) has not reaped it yet.
    ended = !text || text->find(") Z ") != std::string::npos;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(ended) << "dltune top (pid " << pid << ") still runs after its terminal went";
  if (!ended) ::kill(std::stoi(pid), SIGKILL);
}

TEST_F(TopTmux, HelpOpensOnHAndAnyKeyClosesIt) {
  start(fmt::format("{} top --no-gpus --interval 200ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
  EXPECT_TRUE(has(screen(), "h help")) << screen();
  keys({"h"});
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "dltune top: keys"); }))
      << screen();
  const auto help = screen();
  for (const char* key : {"PgUp PgDn", "filter by command line", "send a signal", "follow the"})
    EXPECT_TRUE(has(help, key)) << key << "\n" << help;
  EXPECT_FALSE(has(help, "PID ROLE")) << help;
  keys({"x"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    return has(s, "PID ROLE") && !has(s, "dltune top: keys");
  })) << screen();
  keys({"?"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "dltune top: keys"); }))
      << screen();
  keys({"Escape"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
}

TEST_F(TopTmux, SlashFiltersTheProcessesByCommandLine) {
  pid_t job = ::fork();
  if (job == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sleep", "sleep", "61.25", nullptr);
    ::_exit(127);
  }
  start(fmt::format("{} top --no-gpus --interval 200ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return rows(s).size() > 3; })) << screen();
  keys({"/"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "filter: _"); })) << screen();
  text("sleep 61.2");
  keys({"Enter"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    const auto r = rows(s);
    return has(s, "filter \"sleep 61.2\"") && r.size() == 1 && has(r[0], "sleep 61.25");
  })) << screen();
  // Esc at the prompt clears it: every process again.
  keys({"/"});
  keys({"Escape"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    return !has(s, "filter \"") && rows(s).size() > 3;
  })) << screen();
  ::kill(-job, SIGKILL);
  ::waitpid(job, nullptr, 0);
}

// At 10 Hz the processes off screen are read about once a second (and /proc listed as often): a
// process that starts after top, and works, is found and rises to the first row by its own CPU.
TEST_F(TopTmux, AProcessThatStartsWorkingOffScreenRisesToTheFirstRow) {
  start(fmt::format("{} top --no-gpus --interval 100ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return rows(s).size() > 3; })) << screen();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past a full turn of reads
  pid_t spin = ::fork();
  if (spin == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", "while :; do :; done", nullptr);
    ::_exit(127);
  }
  const auto pid = std::to_string(spin);
  EXPECT_TRUE(wait_for([&](const std::string& s) {
    const auto r = rows(s);
    return !r.empty() && pid_of(r[0]) == pid && has(r[0], "sh -c while :;");
  })) << screen();
  ::kill(-spin, SIGKILL);
  ::waitpid(spin, nullptr, 0);
  // Gone: its row goes too.
  EXPECT_TRUE(wait_for([&](const std::string& s) {
    for (const auto& r : rows(s))
      if (pid_of(r) == pid) return false;
    return true;
  })) << screen();
}

// The whole host's view (no job): its rows on screen show their I/O (root reads every
// /proc/PID/io), i sorts by it, and K hides the kernel's threads (kthreadd's children).
TEST_F(TopTmux, TheHostViewShowsIoSortsByItAndHidesKernelThreads) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to read every process's /proc/PID/io";
  start(fmt::format("{} top --no-gpus --interval 200ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return rows(s).size() > 5; })) << screen();
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "IO/s"); })) << screen();
  keys({"i"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "sort io"); })) << screen();
  const auto kernel = [](const std::string& s) {
    for (const auto& r : rows(s))
      if (has(r, "[kworker") || has(r, "[kthreadd]") || has(r, "[ksoftirqd")) return true;
    return false;
  };
  keys({"p"});
  EXPECT_TRUE(wait_for(kernel)) << "by pid, kthreadd and its first children lead\n" << screen();
  keys({"K"});
  EXPECT_TRUE(wait_for([&](const std::string& s) { return !kernel(s); })) << screen();
  keys({"K"});
  EXPECT_TRUE(wait_for(kernel)) << screen();
}

TEST_F(TopTmux, ArrowsAndEndMoveTheSelectedRow) {
  start(fmt::format("{} top --no-gpus --interval 200ms --sort pid", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return rows(s).size() > 5; })) << screen();
  // The first row is selected, in reverse video.
  ASSERT_TRUE(wait_for([this](const std::string&) { return !reversed_row(painted()).empty(); }))
      << painted();
  const auto first_rows = rows(screen());
  ASSERT_FALSE(first_rows.empty());
  EXPECT_EQ(pid_of(reversed_row(painted())), pid_of(first_rows[0])) << painted();
  keys({"Down", "Down", "Down"});
  EXPECT_TRUE(wait_for([this](const std::string& s) {
    const auto r = rows(s);
    return r.size() > 3 && pid_of(reversed_row(painted())) == pid_of(r[3]);
  })) << painted();
  // End: the last process, the list scrolled to it when there are more than fit.
  keys({"End"});
  EXPECT_TRUE(wait_for([this](const std::string& s) {
    const auto r = rows(s);
    return !r.empty() && pid_of(reversed_row(painted())) == pid_of(r.back());
  })) << painted();
  keys({"Home"});
  EXPECT_TRUE(wait_for([this, &first_rows](const std::string& s) {
    const auto r = rows(s);
    return !r.empty() && pid_of(r[0]) == pid_of(first_rows[0]) &&
           pid_of(reversed_row(painted())) == pid_of(r[0]);
  })) << screen();
}

TEST_F(TopTmux, ColourOnAColourTerminalAndNoneWithNoColor) {
  start(fmt::format("{} top --no-gpus --interval 200ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
  EXPECT_TRUE(wait_for([this](const std::string&) { return coloured(painted()); })) << painted();
  tmux({"kill-server"});
  // A server of its own for the second run: the killed one may still be going away, and a new
  // session on its socket then fails (seen on a loaded CI machine).
  socket_ += "-no-color";

  start(fmt::format("{} top --no-gpus --interval 200ms", DLTUNE_BINARY), true, {"NO_COLOR=1"});
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a few samples drawn
  const auto plain = painted();
  EXPECT_FALSE(coloured(plain)) << plain;
  EXPECT_TRUE(reverse(plain)) << "the title, header and selection in reverse video";
}

TEST_F(TopTmux, KSignalsTheSelectedProcessOfTheJobAfterYesAndFFollowsATree) {
  pid_t job = ::fork();
  if (job == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", "/bin/sleep 62.5 & /bin/sleep 63.5 & wait", nullptr);
    ::_exit(127);
  }
  start(fmt::format("{} top --no-gpus --interval 200ms --sort pid --pid {}", DLTUNE_BINARY, job));
  ASSERT_TRUE(wait_for([](const std::string& s) {
    return has(s, "sleep 62.5") && has(s, "sleep 63.5");
  })) << screen();
  // The rows by pid: sh, then the two sleeps. Select the first sleep and follow it.
  keys({"Down"});
  keys({"F"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    return has(s, "following ") && rows(s).size() == 1 && has(s, "sleep 62.5");
  })) << screen();
  keys({"F"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return rows(s).size() == 3; })) << screen();
  keys({"k"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "send SIGTERM to "); }))
      << screen();
  keys({"n"});  // no: nothing sent
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "q quit"); })) << screen();
  keys({"k"});
  keys({"y"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    return has(s, "sent SIGTERM to ") && !has(s, "sleep 62.5") && has(s, "sleep 63.5");
  })) << screen();
  ::kill(-job, SIGKILL);
  ::waitpid(job, nullptr, 0);
}

TEST_F(TopTmux, ReplayStepsThroughSamplesWithTheLiveViewsKeys) {
  char dir[] = "/tmp/dltune-replay-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/r.db";
  // A recording of a command with two children: 0.8 s at 100 ms, enough samples to step.
  const auto r =
      run({DLTUNE_BINARY, "record", "-o", db, "--interval", "100ms", "--no-gpus", "--quiet", "--",
           "/bin/sh", "-c", "/bin/sleep 0.81 & /bin/sleep 0.82 & wait"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  height_ = 60;  // room for the rows below a host's many network interfaces
  start(fmt::format("{} record --replay {} --sort pid", DLTUNE_BINARY, db));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "replay 1/"); })) << screen();
  EXPECT_TRUE(has(screen(), "/ filter")) << screen();
  // Right steps to the next sample, End to the last, Home back to the first.
  keys({"Right"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "replay 2/"); })) << screen();
  keys({"Right", "Right"});
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "replay 4/"); })) << screen();
  // The filter keeps one of the two sleeps (and the shell, whose command line names both), and
  // stays as the samples change.
  keys({"/"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "filter: _"); })) << screen();
  text("sleep 0.82");
  keys({"Enter"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    const auto r = rows(s);
    return r.size() == 2 && has(r[1], "sleep 0.82");
  })) << screen();
  keys({"Left"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    const auto r = rows(s);
    return has(s, "replay 3/") && r.size() == 2 && has(r[1], "sleep 0.82");
  })) << screen();
  keys({"Escape"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return rows(s).size() >= 3; })) << screen();
  // No signals from a replay; the help names the replay's keys.
  keys({"k"});
  EXPECT_TRUE(wait_for([](const std::string& s) { return has(s, "a replay sends no signals"); }))
      << screen();
  keys({"h"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    return has(s, "record --replay: the previous");
  })) << screen();
  keys({"x"});
  keys({"q"});
  EXPECT_TRUE(wait_for([this](const std::string&) { return pane("#{pane_dead}") == "1"; }))
      << screen();
  std::filesystem::remove_all(dir);
}

// The screen is drawn a line at a time from the first character that changed; what the terminal
// shows after steps through a replay (rows changing, the help over them and gone, a filter) is
// what a whole redraw (Ctrl-L) of the same sample shows, attributes and colours included. A
// resize draws it whole at the new size.
TEST_F(TopTmux, WhatChangedIsDrawnAsAWholeRedrawWouldAndAResizeDrawsAll) {
  char dir[] = "/tmp/dltune-redraw-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string db = std::string(dir) + "/r.db";
  const auto r = run(
      {DLTUNE_BINARY, "record", "-o", db, "--interval", "100ms", "--no-gpus", "--quiet", "--",
       "/bin/sh", "-c",
       "/bin/sleep 1.01 & /bin/sleep 1.02 & timeout 1 sh -c 'while :; do :; done'; wait; exit 0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  height_ = 60;
  start(fmt::format("{} record --replay {}", DLTUNE_BINARY, db));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "replay 1/"); })) << screen();
  for (int step = 2; step <= 6; ++step) {
    keys({"Right"});
    const auto at = fmt::format("replay {}/", step);
    ASSERT_TRUE(wait_for([&](const std::string& s) { return has(s, at); })) << screen();
  }
  keys({"h"});
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "dltune top: keys"); }));
  keys({"x"});
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); }));
  keys({"Right", "m"});
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "replay 7/"); })) << screen();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto stepped = painted();
  EXPECT_TRUE(coloured(stepped)) << stepped;
  keys({"C-l"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(painted(), stepped);

  ASSERT_EQ(tmux({"resize-window", "-t", "t", "-x", "100", "-y", "30"}).exit_code, 0);
  EXPECT_TRUE(wait_for([](const std::string& s) {
    const auto ls = dltune::text::lines(s);
    return ls.size() >= 29 && has(s, "replay 7/") && has(std::string(ls[0]), "dltune top") &&
           !rows(s).empty();
  })) << screen();
  const auto small = screen();
  for (const auto l : dltune::text::lines(small)) EXPECT_LE(l.size(), 100u) << small;
  keys({"C-l"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(screen(), small);
  std::filesystem::remove_all(dir);
}

// A row on screen whose process has slept for seconds (top then asks about it a few times a
// second, not every sample) and that starts spinning: its CPU shows it within a few samples.
TEST_F(TopTmux, ARowAsleepForSecondsThatStartsSpinningShowsItsCpu) {
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  pid_t spin = ::fork();
  if (spin == 0) {
    ::setpgid(0, 0);
    ::dup2(go[0], STDIN_FILENO);
    ::close(go[0]);
    ::close(go[1]);
    ::execl("/bin/sh", "sh", "-c", "read x; while :; do :; done # dltune-quiet-row", nullptr);
    ::_exit(127);
  }
  ::close(go[0]);
  start(fmt::format("{} top --no-gpus --interval 100ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
  keys({"/"});
  text("dltune-quiet-row");
  keys({"Enter"});
  const auto pid = std::to_string(spin);
  // The row's state and CPU%: "PID [ROLE] S CPU% ...".
  const auto state_and_cpu = [&](const std::string& s) -> std::pair<std::string, double> {
    for (const auto& r : rows(s)) {
      if (pid_of(r) != pid) continue;
      const auto f = dltune::text::fields(r);
      const std::size_t at = f.size() > 2 && f[1].size() == 1 ? 1 : 2;  // no ROLE: S is second
      if (f.size() <= at + 1) break;
      return {std::string(f[at]), dltune::text::to_double(f[at + 1]).value_or(-1)};
    }
    return {"", -1};
  };
  ASSERT_TRUE(wait_for([&](const std::string& s) { return state_and_cpu(s).first == "S"; }))
      << screen();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // asleep past a second
  EXPECT_EQ(state_and_cpu(screen()).second, 0.0) << screen();
  ASSERT_EQ(::write(go[1], "\n", 1), 1);
  EXPECT_TRUE(wait_for([&](const std::string& s) { return state_and_cpu(s).second >= 30.0; }, 5))
      << screen();
  ::close(go[1]);
  ::kill(-spin, SIGKILL);
  ::waitpid(spin, nullptr, 0);
}

// A command line is anyone's bytes: a C1 control (U+009B, CSI to some terminals) or a byte that
// is not UTF-8 reaches the terminal as '?', never as itself.
TEST_F(TopTmux, ControlCharactersInACommandLineAreNotWrittenToTheTerminal) {
  pid_t job = ::fork();
  if (job == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", "sleep 61.7;:", "\xc2\x9bX\xffY", nullptr);
    ::_exit(127);
  }
  start(fmt::format("{} top --no-gpus --interval 200ms", DLTUNE_BINARY));
  ASSERT_TRUE(wait_for([](const std::string& s) { return has(s, "PID ROLE"); })) << screen();
  keys({"/"});
  text("61.7;:");
  keys({"Enter"});
  EXPECT_TRUE(wait_for([](const std::string& s) {
    for (const auto& r : rows(s))
      if (has(r, "sh -c sleep 61.7;: ?X?Y")) return true;
    return false;
  })) << screen();
  ::kill(-job, SIGKILL);
  ::waitpid(job, nullptr, 0);
}

}  // namespace top_tmux_test

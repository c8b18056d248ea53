// `dltune top` in a real terminal: tmux runs it in an 80x24 pane, the test reads the screen
// (capture-pane) and types keys (send-keys).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/text.hpp"
#include "support/host_values.hpp"
#include "support/run.hpp"

using dltune::testing::run;

namespace {

class TopTmux : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run({"/bin/sh", "-c", "command -v tmux"}).exit_code != 0)
      GTEST_SKIP() << "tmux is not installed (scripts/install-deps installs it)";
    socket_ = fmt::format("dltune-top-test-{}", ::getpid());
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
  void start(const std::string& command, bool exec = true) {
    ASSERT_EQ(tmux({"-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "-e",
                    "TERM=xterm-256color",
                    "sh -c 'sleep 0.3; " + std::string(exec ? "exec " : "") + command + "'"})
                  .exit_code,
              0);
    ASSERT_EQ(tmux({"set-option", "-t", "t", "remain-on-exit", "on"}).exit_code, 0);
  }
  std::string screen() { return tmux({"capture-pane", "-p", "-t", "t"}).out; }
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
};

bool has(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
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

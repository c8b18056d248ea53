// The watchdog ends a process whose guarded work hangs, with its message and exit status, and
// leaves one whose work finishes in time alone.
#include "core/watchdog.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace watchdog_test {

namespace {

// Runs `work` under a watchdog of `limit` in a child; its exit status and what it wrote on stderr.
std::pair<int, std::string> in_child(std::chrono::milliseconds limit,
                                     std::chrono::milliseconds work) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, ""};
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    {
      const dltune::Watchdog watchdog(limit, "no verdict in time\n", 2);
      std::this_thread::sleep_for(work);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string err;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) err.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

}  // namespace

TEST(Watchdog, WorkThatHangsEndsTheProcessWithTheMessageAndStatus) {
  const auto [code, err] = in_child(std::chrono::milliseconds(50), std::chrono::seconds(20));
  EXPECT_EQ(code, 2);
  EXPECT_EQ(err, "no verdict in time\n");
}

TEST(Watchdog, WorkDoneInTimeIsLeftAlone) {
  const auto [code, err] = in_child(std::chrono::seconds(20), std::chrono::milliseconds(10));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(err, "");
}

}  // namespace watchdog_test

#pragma once
// Runs a piece of a test in a forked child of the test process, with the child's stdout and
// stderr going to files: for code that takes over signals or writes to dltune's own output
// (spawn_and_wait), so that a signal meant for it cannot reach the test runner and its output
// can be compared byte for byte.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace dltune::testing {

constexpr int kHangSeconds = 120;

struct ChildRun {
  int status = -1;     // the child's wait status
  std::string report;  // what the function returned
  std::string out;     // what the child wrote to its stdout
  std::string err;     // ... and to its stderr
};

inline std::string slurp_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `body` runs in the child; `meanwhile` (optional) runs in the test process with the child's
// pid while the child runs. The child ends with _exit: no gtest or sanitizer exit handlers.
inline ChildRun in_child(const std::function<std::string()>& body,
                         const std::function<void(pid_t)>& meanwhile = {}) {
  static int counter = 0;
  const auto base =
      std::filesystem::path(::testing::TempDir()) /
      (std::string("dltune_child_") + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  const auto out_path = base.string() + ".out", err_path = base.string() + ".err";
  ChildRun r;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return r;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0 || err < 0 || ::dup2(out, 1) != 1 || ::dup2(err, 2) != 2) ::_exit(120);
    const std::string text = body();
    std::size_t done = 0;
    while (done < text.size()) {
      const auto n = ::write(report[1], text.data() + done, text.size() - done);
      if (n <= 0) ::_exit(121);
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return r;
  }
  if (meanwhile) meanwhile(pid);
  char buffer[4096];
  for (;;) {
    // A guard against a regression that hangs (a signal never passed on), not a timing check.
    pollfd p{report[0], POLLIN, 0};
    if (::poll(&p, 1, kHangSeconds * 1000) == 0) {
      ::kill(pid, SIGKILL);
      r.report =
          std::string("(the child hung for ") + std::to_string(kHangSeconds) + " s and was killed)";
      break;
    }
    const auto n = ::read(report[0], buffer, sizeof buffer);
    if (n > 0) {
      r.report.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(report[0]);
  while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
  }
  r.out = slurp_file(out_path);
  r.err = slurp_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

}  // namespace dltune::testing

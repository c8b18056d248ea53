#pragma once
// Debian's headless Chromium for the tests that render dltune's HTML pages (report, compare):
// the program in a process group of its own, killed whole at the end, and the flags it needs
// here (root, no GPU, no network).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

namespace dltune::testing {

namespace fs = std::filesystem;

inline constexpr const char* kChromium = "/usr/bin/chromium";

// The whole file (empty when it cannot be read).
inline std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct Exit {
  int code = -1;  // -1: killed (timeout) or a signal
  std::string out, err;
};

// Runs argv in a process group of its own with stdout and stderr to files; on timeout the whole
// group is killed (Chromium's renderer and GPU helper processes with it), and after a normal exit
// too, so that no helper outlives the test.
inline Exit run_group(const std::vector<std::string>& argv, const fs::path& dir, int timeout_s) {
  const auto out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::fflush(nullptr);  // or the child's freopen writes what this process had buffered
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    std::FILE* o = std::freopen(out.c_str(), "w", stdout);
    std::FILE* e = std::freopen(err.c_str(), "w", stderr);
    if (o == nullptr || e == nullptr) ::_exit(126);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from here: no race with the kill below
  Exit r;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.err = fmt::format("timed out after {} s; ", timeout_s);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);
  r.out = read_bytes(out);
  r.err += read_bytes(err);
  return r;
}

// Flags for a Chromium that is root, has no GPU and must not try the network: without the
// background-networking flags it reaches for Google's hosts, which are closed here.
inline std::vector<std::string> chromium(const fs::path& profile, std::vector<std::string> extra) {
  std::vector<std::string> argv{kChromium,
                                "--headless",
                                "--no-sandbox",
                                "--disable-gpu",
                                "--disable-quic",
                                "--no-first-run",
                                "--disable-background-networking",
                                "--disable-component-update",
                                "--disable-sync",
                                "--disable-extensions",
                                "--hide-scrollbars",
                                "--user-data-dir=" + profile.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace dltune::testing

#pragma once
// Programs a live test starts and watches: one in a process group of its own with its stderr in
// a pipe (killed with its group when the guard goes), and a free TCP port on loopback.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace dltune::testing {

// A program in a process group of its own, its stderr in a pipe; the group is killed when the
// guard goes.
struct Process {
  pid_t pid = -1;
  int err = -1;
  std::string err_text;

  Process(const std::vector<std::string>& argv, const std::string& stdin_path = "/dev/null") {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    if (::posix_spawn(&pid, a[0], &fa, &attr, a.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(p[1]);
    err = p[0];
  }
  ~Process() {
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (err >= 0) ::close(err);
  }
  // Reads stderr until `pattern` matches (its first group returned) or `timeout`.
  std::optional<std::string> wait_for(const std::regex& pattern,
                                      std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    std::smatch m;
    while (!std::regex_search(err_text, m, pattern)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd pf{err, POLLIN, 0};
      if (::poll(&pf, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      const auto n = ::read(err, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      err_text.append(buf, static_cast<std::size_t>(n));
    }
    return m.size() > 1 ? m[1].str() : m[0].str();
  }
  // The rest of stderr, once the process has exited.
  std::string rest_of_stderr() {
    char buf[4096];
    pollfd pf{err, POLLIN, 0};
    while (::poll(&pf, 1, 0) > 0) {
      const auto n = ::read(err, buf, sizeof buf);
      if (n <= 0) break;
      err_text.append(buf, static_cast<std::size_t>(n));
    }
    return err_text;
  }
  // Waits for the exit status, up to `timeout`; -1 if it did not exit.
  int wait_exit(std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
};

inline int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

}  // namespace dltune::testing

#include "core/program.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>

namespace dltune::program {

namespace {

std::string first_line(const std::string& text) {
  const auto start = text.find_first_not_of(" \t\n");
  if (start == std::string::npos) return {};
  const auto end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

struct Pipe {
  int read = -1, write = -1;
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
};

}  // namespace

std::string Output::failure(const std::string& name) const {
  std::string said = first_line(err);
  if (said.empty()) said = first_line(out);
  std::string how = timed_out     ? "did not answer in time (killed)"
                    : signal != 0 ? "killed by signal " + std::to_string(signal)
                                  : "exit " + std::to_string(exit_code);
  return name + ": " + how + (said.empty() ? "" : ": " + said);
}

Result<Output> run(const std::vector<std::string>& argv, const Options& options) {
  if (argv.empty() || argv[0].empty()) return fail("no program to run");
  Pipe out, err;
  {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return fail("cannot create a pipe", argv[0], errno);
    out.read = p[0];
    out.write = p[1];
    if (::pipe2(p, O_CLOEXEC) != 0) return fail("cannot create a pipe", argv[0], errno);
    err.read = p[0];
    err.write = p[1];
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> env;
  char** envp = environ;
  if (options.env) {
    for (const auto& [k, v] : *options.env) env_strings.push_back(k + "=" + v);
    for (auto& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);
    envp = env.data();
  }
  // posix_spawnp searches PATH (confstr's default path when it is unset), never a shell.
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return fail("cannot run", argv[0], rc);
  ::close(out.write);
  out.write = -1;
  ::close(err.write);
  err.write = -1;

  Output result;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::array<std::pair<int*, std::string*>, 2> streams = {std::pair{&out.read, &result.out},
                                                          std::pair{&err.read, &result.err}};
  while (out.read >= 0 || err.read >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    std::array<pollfd, 2> fds{};
    nfds_t n = 0;
    for (auto& [fd, text] : streams)
      if (*fd >= 0) fds[n++] = pollfd{*fd, POLLIN, 0};
    const int ready = ::poll(fds.data(), n, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      ::kill(pid, SIGKILL);
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      for (auto& [fd, text] : streams) {
        if (*fd != fds[i].fd) continue;
        char buffer[4096];
        const ssize_t got = ::read(*fd, buffer, sizeof buffer);
        if (got > 0) {
          const auto keep = std::min<std::size_t>(
              static_cast<std::size_t>(got),
              options.max_output - std::min(options.max_output, text->size()));
          text->append(buffer, keep);
        } else if (got == 0 || errno != EINTR) {
          ::close(*fd);
          *fd = -1;
        }
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = 128 + result.signal;
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace dltune::program

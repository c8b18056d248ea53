#include "cli/bench_launch.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace dltune::cli::bench_launch {

namespace {

constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};

// The signal that asked bench to stop, and the `dltune run` it goes on to (its own process
// group: a terminal's ^C reaches bench only, which stops the run and then rolls back).
volatile std::sig_atomic_t g_stop = 0;
volatile pid_t g_child = 0;

extern "C" void on_stop_signal(int sig) {
  g_stop = sig;
  if (g_child > 0) ::kill(g_child, sig);
}

}  // namespace

int stop_signal() {
  return g_stop;
}

StopSignals::StopSignals() {
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  ::sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
}

Launch launch_run(const std::vector<std::string>& argv, const std::string& log) {
  Launch l;
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    l.error = fmt::format("cannot create {}: {}", log, std::strerror(errno));
    return l;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::execv("/proc/self/exe", cargv.data());
    std::fprintf(stderr, "dltune bench: cannot start dltune run: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  ::close(out);
  if (child < 0) {
    l.error = fmt::format("cannot fork: {}", std::strerror(errno));
    return l;
  }
  ::setpgid(child, child);  // also here: no window in which ^C reaches it as well
  g_child = child;
  if (g_stop != 0) ::kill(child, g_stop);  // a signal that came just before it started
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  l.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return l;
}

}  // namespace dltune::cli::bench_launch

#include "launch/supervise.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>

namespace dltune::launch {
namespace {

constexpr std::array kForwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Writes all of `data`, waiting while `fd` is non-blocking and full. False when `fd` refuses.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const auto n = ::write(fd, data, size);
    if (n > 0) {
      data += n;
      size -= static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Job::~Job() {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  reap();
}

void Job::reap() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

Result<std::optional<Ended>> Job::try_wait() {
  Ended end;
  const pid_t r = ::wait4(pid_, &end.status, WNOHANG, &end.usage);
  if (r == pid_) {
    reaped_ = true;
    return std::optional<Ended>(end);
  }
  if (r == 0 || (r < 0 && errno == EINTR)) return std::optional<Ended>();
  const int err = errno;
  reaped_ = true;  // nothing left to reap (ECHILD)
  return fail("cannot wait for the job", std::to_string(pid_), err);
}

Result<std::unique_ptr<ForwardedSignals>> ForwardedSignals::block() {
  std::unique_ptr<ForwardedSignals> s(new ForwardedSignals);
  sigset_t set;
  ::sigemptyset(&set);
  for (const int sig : kForwarded) ::sigaddset(&set, sig);
  ::sigaddset(&set, SIGPIPE);
  if (const int err = ::pthread_sigmask(SIG_BLOCK, &set, &s->old_mask_); err != 0)
    return fail("cannot block signals", "", err);
  const int fd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &s->old_mask_, nullptr);
    return fail("cannot create a signalfd", "", err);
  }
  s->fd_ = Fd(fd);
  // With SIGCHLD ignored the kernel reaps the job itself and wait4 learns nothing.
  struct sigaction chld {};
  if (::sigaction(SIGCHLD, nullptr, &chld) == 0 && chld.sa_handler == SIG_IGN) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    if (::sigaction(SIGCHLD, &dfl, nullptr) == 0) s->old_sigchld_ = chld;
  }
  return s;
}

ForwardedSignals::~ForwardedSignals() {
  // Signals that came after the job ended would otherwise kill dltune before it reports and
  // cleans up.
  signalfd_siginfo info{};
  while (::read(fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
  }
  if (old_sigchld_) ::sigaction(SIGCHLD, &*old_sigchld_, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void ForwardedSignals::note(int sig) {
  if (sig != SIGPIPE) received_.push_back(sig);
}

std::vector<int> ForwardedSignals::received() {
  signalfd_siginfo info{};
  while (::read(fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info))
    note(static_cast<int>(info.ssi_signo));
  return received_;
}

std::vector<int> ForwardedSignals::forward_to(const std::vector<pid_t>& jobs) {
  std::vector<int> passed;
  signalfd_siginfo info{};
  while (::read(fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int sig = static_cast<int>(info.ssi_signo);
    note(sig);
    if (sig == SIGPIPE) continue;
    if (info.ssi_code == SI_KERNEL) continue;
    if (std::find(jobs.begin(), jobs.end(), static_cast<pid_t>(info.ssi_pid)) != jobs.end())
      continue;
    bool any = false;
    for (const pid_t job : jobs) any = ::kill(job, sig) == 0 || any;
    if (any) passed.push_back(sig);
  }
  return passed;
}

void Supervision::add_stream(Fd from, int to, bool metered, std::optional<int> rank) {
  std::optional<std::size_t> channel;
  if (metered) channel = metered_++;
  streams_.push_back(Stream{std::move(from), to, true, channel, streams_.size(), rank});
}

bool Supervision::pump(Stream& stream) {
  char buffer[65536];
  const auto n = ::read(stream.from.get(), buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  const auto size = static_cast<std::size_t>(n);
  // Copied before it is scanned, and unchanged: a tqdm bar redraws in place with '\r'.
  if (stream.passing) stream.passing = write_all(stream.to, buffer, size);
  if (stream.channel) meter_.feed(std::string_view(buffer, size), *stream.channel);
  watch_.feed(std::string_view(buffer, size), stream.watch_channel, stream.rank);
  return true;
}

void Supervision::drain(Stream& stream) {
  if (stream.from.get() < 0) return;
  // Only what is in the pipe now: a process the job left behind may hold the pipe open.
  const int flags = ::fcntl(stream.from.get(), F_GETFL);
  if (flags >= 0) ::fcntl(stream.from.get(), F_SETFL, flags | O_NONBLOCK);
  for (int i = 0; i < 64 && pump(stream); ++i) {
    int available = 0;
    if (::ioctl(stream.from.get(), FIONREAD, &available) == 0 && available == 0) break;
  }
  stream.from.reset();
}

Result<GroupEnd> Supervision::run_all() {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const std::size_t n = jobs_.size();
  // A pidfd becomes readable when its job exits (pidfd_open(2), Linux 5.3); without one the
  // loop looks every 50 ms.
  std::vector<Fd> pidfds;
  bool polling = false;
  for (const auto* job : jobs_) {
    pidfds.emplace_back(static_cast<int>(::syscall(SYS_pidfd_open, job->pid(), 0)));
    polling = polling || pidfds.back().get() < 0;
  }
  GroupEnd out;
  out.ends.resize(n);
  out.seconds.resize(n, 0);
  out.stopped.resize(n, false);
  std::vector<bool> ended(n, false);
  std::size_t left = n;
  // SIGKILL to those still running at kill_at (a plain time point and a flag: g++ 12 warns of a
  // maybe-uninitialized std::optional<time_point> here).
  bool kill_pending = false;
  Clock::time_point kill_at{};
  bool stopping = false;
  const auto running = [&] {
    std::vector<pid_t> pids;
    for (std::size_t i = 0; i < n; ++i)
      if (!ended[i]) pids.push_back(jobs_[i]->pid());
    return pids;
  };
  while (left > 0) {
    std::vector<pollfd> fds;
    fds.push_back({signals_.fd(), POLLIN, 0});
    for (std::size_t i = 0; i < n; ++i) fds.push_back({ended[i] ? -1 : pidfds[i].get(), POLLIN, 0});
    for (const auto& s : streams_) fds.push_back({s.from.get(), POLLIN, 0});
    int timeout = polling ? 50 : -1;
    if (kill_pending) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now());
      timeout = static_cast<int>(std::clamp<std::int64_t>(ms.count() + 1, 0, 60'000));
    }
    const int rc = ::poll(fds.data(), fds.size(), timeout);
    if (rc < 0 && errno != EINTR) return fail("cannot watch the job", "", errno);
    if (rc > 0 && fds[0].revents != 0) {
      const auto passed = signals_.forward_to(running());
      out.forwarded.insert(out.forwarded.end(), passed.begin(), passed.end());
    }
    for (std::size_t i = 0; rc > 0 && i < streams_.size(); ++i) {
      if (fds[i + 1 + n].revents == 0 || streams_[i].from.get() < 0) continue;
      if (!pump(streams_[i])) streams_[i].from.reset();
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (ended[i]) continue;
      if (pidfds[i].get() >= 0 && (rc <= 0 || fds[i + 1].revents == 0)) continue;
      auto end = jobs_[i]->try_wait();
      if (!end) return tl::unexpected(end.error());
      if (!*end) continue;
      ended[i] = true;
      --left;
      out.ends[i] = std::move(**end);
      out.seconds[i] = std::chrono::duration<double>(Clock::now() - started).count();
      out.stopped[i] = stopping;
      const int st = out.ends[i].status;
      const bool failed = WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0);
      if (failed && !out.first_failure && !stopping) out.first_failure = i;
      if (failed && grace_ && !stopping && left > 0) {
        stopping = true;
        for (const pid_t pid : running()) ::kill(pid, SIGTERM);
        kill_at = Clock::now() + *grace_;
        kill_pending = true;
      }
    }
    if (kill_pending && Clock::now() >= kill_at) {
      for (const pid_t pid : running()) ::kill(pid, SIGKILL);
      kill_pending = false;
    }
  }
  // Signals still pending are not passed on: the pids may already belong to someone else.
  for (auto& s : streams_) drain(s);
  return out;
}

}  // namespace dltune::launch

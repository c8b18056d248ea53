// Recorder (store/recorder.hpp).
#include "store/recorder.hpp"
#include "core/clock.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

namespace dltune::store {

std::unique_ptr<Recorder> Recorder::start(std::unique_ptr<monitor::Sampler> sampler,
                                          RecordingWriter& writer, RecorderOptions options) {
  std::unique_ptr<Recorder> r(new Recorder());
  r->sampler_ = std::move(sampler);
  r->writer_ = &writer;
  r->options_ = std::move(options);
  r->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  r->done_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // The thread starts with every signal blocked, so that SIGINT reaches the command's handler
  // (or spawn_and_wait's signalfd) and never this thread.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  r->thread_ = std::thread([p = r.get()] { p->loop(); });
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return r;
}

Recorder::~Recorder() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (done_fd_ >= 0) ::close(done_fd_);
}

void Recorder::stop() {
  stop_.store(true);
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
}

RecorderStats Recorder::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::int64_t Pace::next(std::int64_t now) {
  deadline_ += interval_;
  if (deadline_ < now - interval_) deadline_ = now - (now - deadline_) % interval_ + interval_;
  return deadline_ > now ? deadline_ - now : 0;
}

void Recorder::loop() {
  // The samples held for the writer, each one's storage reused: the sampler fills every field.
  std::vector<monitor::Sample> held(std::max<std::size_t>(options_.hold, 1));
  std::size_t taken = 0;  // held[0..taken) are waiting for the writer
  const Clock& clock = clock_or_system(options_.clock);
  const std::int64_t start = clock.monotonic_ns();
  Pace pace(start, options_.interval_ns);
  const auto fail_with = [this](Error e) {
    std::lock_guard lock(mu_);
    stats_.error = std::move(e);
  };
  bool writer_failed = false;
  const auto hand_over = [&] {
    for (std::size_t i = 0; i < taken && !writer_failed; ++i)
      if (auto ok = writer_->append(held[i]); !ok) {
        fail_with(ok.error());
        writer_failed = true;
      }
    taken = 0;
    return !writer_failed;
  };
  const auto scope = sampler_->options().scope.kind;
  while (!stop_.load()) {
    const std::int64_t began = clock.monotonic_ns();
    const bool late = pace.late(began);
    monitor::Sample& sample = held[taken];
    if (auto ok = sampler_->sample(sample); !ok) {
      fail_with(ok.error());
      break;
    }
    ++taken;
    for (auto& n : sampler_->take_notices())
      if (options_.on_notice) options_.on_notice(n);
    if (taken == held.size() && !hand_over()) break;
    if (options_.after_sample) options_.after_sample(sample);
    {
      std::lock_guard lock(mu_);
      ++stats_.samples;
      if (late) ++stats_.late;
      stats_.thread_cpu_seconds = static_cast<double>(now_ns(CLOCK_THREAD_CPUTIME_ID)) / 1e9;
    }
    if (options_.stop_when_scope_ends) {
      // A process that exited but that its parent has not reaped yet is a zombie (state Z):
      // the job has ended all the same.
      const bool tree_gone =
          scope == monitor::Scope::Kind::kTree &&
          std::all_of(sample.processes.begin(), sample.processes.end(),
                      [](const monitor::Process& p) { return p.state == 'Z' || p.state == 'X'; });
      const bool group_gone = scope == monitor::Scope::Kind::kCgroup && !sample.cgroup;
      if (tree_gone || group_gone) break;
    }
    if (options_.duration_ns && began - start >= *options_.duration_ns) break;
    if (const std::int64_t wait = pace.next(clock.monotonic_ns()); wait > 0) {
      const timespec ts{static_cast<time_t>(wait / 1'000'000'000),
                        static_cast<long>(wait % 1'000'000'000)};
      pollfd p{wake_fd_, POLLIN, 0};
      ::ppoll(&p, 1, &ts, nullptr);
    }
  }
  // What is held is written, also after the sampler failed: those samples are whole.
  if (hand_over()) {
    if (auto ok = writer_->flush(); !ok) fail_with(ok.error());
  }
  {
    std::lock_guard lock(mu_);
    stats_.thread_cpu_seconds = static_cast<double>(now_ns(CLOCK_THREAD_CPUTIME_ID)) / 1e9;
  }
  finished_.store(true);
  if (done_fd_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(done_fd_, &one, sizeof one);
  }
}

}  // namespace dltune::store

#include "pystack/sample_run.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include <cerrno>

#include <fmt/core.h>

namespace dltune::pystack {

namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSecond + ts.tv_nsec;
}

// This process's CPU time (user + system), as getrusage(2) counts it.
std::int64_t own_cpu_ns() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  return (static_cast<std::int64_t>(r.ru_utime.tv_sec) + r.ru_stime.tv_sec) * kNsPerSecond +
         (static_cast<std::int64_t>(r.ru_utime.tv_usec) + r.ru_stime.tv_usec) * 1000;
}

}  // namespace

SampleRun sample_for(PythonProcess& process, const SampleRunRequest& request) {
  SampleRun run;
  const auto stopped = [&] { return request.stop != nullptr && request.stop->load(); };
  const auto period = kNsPerSecond / (request.rate_hz > 0 ? request.rate_hz : 1);
  const auto cpu_start = own_cpu_ns();
  const auto start = monotonic_ns();
  auto next = start;
  while (!stopped() && next - start < request.duration_ns) {
    auto threads = process.sample();
    if (threads) {
      run.counts.add(*threads);
    } else if (threads.error().errno_ == ESRCH) {
      run.ended = threads.error().message();
      break;
    } else {
      ++run.skipped;
    }
    next += period;
    const auto now = monotonic_ns();
    if (next < now) next = now;  // behind: no burst of samples to catch up
    timespec ts{static_cast<time_t>(next / kNsPerSecond), static_cast<long>(next % kNsPerSecond)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR && !stopped()) {
    }
  }
  run.wall_ns = monotonic_ns() - start;
  run.cpu_ns = own_cpu_ns() - cpu_start;
  return run;
}

std::string SampleRun::cost_text() const {
  const auto n = taken();
  const auto wall = static_cast<double>(wall_ns), cpu = static_cast<double>(cpu_ns);
  return fmt::format(
      "{} samples in {:.1f} s ({} skipped: frames changed under the reader); sampler CPU {:.1f} "
      "ms, {:.0f} us a sample, {:.2f}% of a core{}",
      n, wall / 1e9, skipped, cpu / 1e6, n ? cpu / 1e3 / static_cast<double>(n) : 0.0,
      wall_ns ? 100.0 * cpu / wall : 0.0, ended.empty() ? "" : "; " + ended);
}

Result<std::vector<ThreadStack>> sample_settled(PythonProcess& process) {
  auto threads = process.sample();
  for (int tries = 0; !threads && tries < 3 && threads.error().errno_ != ESRCH; ++tries)
    threads = process.sample();
  return threads;
}

namespace {

std::atomic<bool> g_stop_sampling{false};
void on_stop_sampling(int) {
  g_stop_sampling = true;
}

}  // namespace

SampleRun sample_until_stopped(PythonProcess& process, SampleRunRequest request) {
  g_stop_sampling = false;
  struct sigaction action {
  }, old_int{}, old_term{};
  action.sa_handler = on_stop_sampling;
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);
  request.stop = &g_stop_sampling;
  auto run = sample_for(process, request);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return run;
}

tl::expected<PythonProcess, Failure> attach_named(const host::Root& root, pid_t pid) {
  auto process = PythonProcess::attach(root, pid);
  if (process) return std::move(*process);
  if (::kill(pid, 0) != 0 && errno == ESRCH)
    return refused(fmt::format("--pid {}: no such process", pid));
  return tl::unexpected(Failure{not_python(process.error()), process.error()});
}

}  // namespace dltune::pystack

#pragma once
// Clock readings in nanoseconds as one integer (what Samples and recordings store), and the
// Clock that code whose behaviour depends on time takes (the sampler's stamps, the recorder's
// lateness, the exporter's staleness), so that a test can set the time instead of sleeping.
#include <time.h>

#include <cstdint>

namespace dltune {

// CLOCK_REALTIME for wall time, CLOCK_MONOTONIC for intervals, CLOCK_THREAD_CPUTIME_ID for
// the calling thread's CPU time.
[[nodiscard]] inline std::int64_t now_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual std::int64_t wall_ns() const = 0;       // CLOCK_REALTIME
  [[nodiscard]] virtual std::int64_t monotonic_ns() const = 0;  // CLOCK_MONOTONIC
};

// The machine's clocks.
class SystemClock final : public Clock {
 public:
  [[nodiscard]] std::int64_t wall_ns() const override { return now_ns(CLOCK_REALTIME); }
  [[nodiscard]] std::int64_t monotonic_ns() const override { return now_ns(CLOCK_MONOTONIC); }
};

[[nodiscard]] inline const Clock& system_clock() {
  static const SystemClock kClock;
  return kClock;
}

// `clock`, or the machine's when it is null (the default of every options struct).
[[nodiscard]] inline const Clock& clock_or_system(const Clock* clock) {
  return clock != nullptr ? *clock : system_clock();
}

}  // namespace dltune

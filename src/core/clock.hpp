#pragma once
// Clock readings in nanoseconds as one integer (what Samples and recordings store).
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

}  // namespace dltune

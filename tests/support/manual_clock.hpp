#pragma once
// A Clock that a test sets: time moves only when the test says, so that staleness, lateness and
// cadence are tested without sleeping.
#include <atomic>
#include <cstdint>

#include "core/clock.hpp"

namespace dltune::testing {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t wall_ns = 1'796'000'000'000'000'000,
                       std::int64_t monotonic_ns = 1'000'000'000'000)
      : wall_(wall_ns), monotonic_(monotonic_ns) {}
  [[nodiscard]] std::int64_t wall_ns() const override { return wall_.load(); }
  [[nodiscard]] std::int64_t monotonic_ns() const override { return monotonic_.load(); }
  void advance(std::int64_t ns) {
    wall_ += ns;
    monotonic_ += ns;
  }

 private:
  std::atomic<std::int64_t> wall_, monotonic_;
};

}  // namespace dltune::testing

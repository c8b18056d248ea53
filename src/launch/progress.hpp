#pragma once
// Reading a job's progress from its output: tqdm's rates ("12.5it/s", "3.20s/it",
// "1.23kit/s", "96.3samples/s"), or the first group of a user's --rate-regex. Pure: bytes in,
// rates out, so the pass-through loop in spawn.cpp and the tests share it.
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/rate_pattern.hpp"
#include "launch/spawn.hpp"

namespace dltune::launch {

// One rate read from a line: per second, and its unit ("it/s", "samples/s"; "" for a custom
// regex). tqdm's "s/it" is turned into "it/s".
struct RateReading {
  double per_second = 0;
  std::string unit;
};
[[nodiscard]] std::optional<RateReading> read_rate(std::string_view line,
                                                   const std::optional<RatePattern>& custom);

// Rates of one unit, kept evenly spaced in bounded memory: when full, every other one is
// dropped and only every 2nd (then 4th, ...) new one is kept, so a job that prints for days
// costs at most kCapacity doubles and the first 10 % stay the first 10 %.
class RateSeries {
 public:
  static constexpr std::size_t kCapacity = 1 << 16;
  void add(double rate);
  [[nodiscard]] int count() const { return count_; }
  [[nodiscard]] double last() const { return last_; }
  // Median of the kept rates after the first 10 % (tqdm's first readings include start-up).
  [[nodiscard]] double median_after_warmup() const;

 private:
  std::vector<double> kept_;
  std::size_t stride_ = 1;  // keep every stride_-th reading
  std::size_t seen_ = 0;
  int count_ = 0;
  double last_ = 0;
};

// Splits a stream into '\r'- or '\n'-terminated segments and reads a rate from each. Feed the
// bytes as they come (any chunking); finish() reads a last unterminated segment. Two channels
// (stderr, stdout) keep their partial segments apart.
class ProgressMeter {
 public:
  explicit ProgressMeter(std::optional<RatePattern> custom = std::nullopt);
  void feed(std::string_view bytes, std::size_t channel = 0);
  void finish();
  // The unit read most often wins (a download bar in B/s before the training bar in it/s).
  [[nodiscard]] Progress progress() const;

 private:
  void segment(std::string_view line);
  std::optional<RatePattern> custom_;
  std::array<std::string, 2> pending_;
  std::map<std::string, RateSeries> series_;
};

}  // namespace dltune::launch

#pragma once
// A user's --rate-regex, compiled once. Its std::regex lives in rate_pattern.cpp, so that the
// launch headers that carry a pattern (spawn.hpp, run_job.hpp, progress.hpp) do not bring
// <regex> into every file that includes them.
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::launch {

class RatePattern {
 public:
  // ECMAScript syntax. The error is std::regex's own text; the caller names the option.
  [[nodiscard]] static Result<RatePattern> compile(const std::string& pattern);

  [[nodiscard]] const std::string& pattern() const;
  // How many groups the pattern has.
  [[nodiscard]] std::size_t groups() const;
  // Calls `each` with the text of the first group (the whole match when there is no group) of
  // each match in `line`, left to right, skipping matches where that group did not take part.
  void each_match(std::string_view line, const std::function<void(std::string_view)>& each) const;

 private:
  struct Compiled;
  explicit RatePattern(std::shared_ptr<const Compiled> c) : compiled_(std::move(c)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace dltune::launch

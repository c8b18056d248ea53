#pragma once
// Result<T> and Error: what failed, on which input, and errno where there is one
// (CONTRIBUTING.md, convention 4). Exceptions do not cross module boundaries.
#include <cerrno>
#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace dltune {

struct Error {
  std::string what;   // what failed, in the user's words: "cannot read", "not a number"
  std::string input;  // the path, argument or item it failed on
  int errno_ = 0;     // errno when the failure came from the kernel, else 0

  // "cannot read /proc/meminfo: Permission denied"
  [[nodiscard]] std::string message() const;
  [[nodiscard]] bool not_found() const { return errno_ == ENOENT || errno_ == ENOTDIR; }
};

template <class T>
using Result = tl::expected<T, Error>;

[[nodiscard]] inline tl::unexpected<Error> fail(std::string what, std::string input = {},
                                                int err = 0) {
  return tl::unexpected<Error>(Error{std::move(what), std::move(input), err});
}

// A failure that says whose it is: bad input (the user's to change; exit 2, nothing was done) or
// a failure of the host or of the work itself (exit 1).
struct Failure {
  bool bad_input = false;
  Error error;
};
// Bad input, as a failure: `what` (and `input`) as fail() takes them, or an Error as it came.
[[nodiscard]] inline tl::unexpected<Failure> refused(Error error) {
  return tl::unexpected(Failure{true, std::move(error)});
}
[[nodiscard]] inline tl::unexpected<Failure> refused(std::string what, std::string input = {}) {
  return refused(Error{std::move(what), std::move(input), 0});
}

}  // namespace dltune

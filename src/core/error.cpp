#include "core/error.hpp"

#include <cstring>

namespace dltune {

std::string Error::message() const {
  std::string m = what;
  if (!input.empty()) {
    if (!m.empty()) m += ' ';
    m += input;
  }
  if (errno_ != 0) m += std::string(": ") + std::strerror(errno_);
  return m;
}

}  // namespace dltune

// Sysctl names (owner: profile helper; minimal version until then).
#include "tune/sysctl_name.hpp"

namespace dltune::tune {

Result<std::string> sysctl_path(std::string_view name) {
  if (name.empty() || name.find("..") != std::string_view::npos || name[0] == '/' ||
      name[0] == '.')
    return fail("not a sysctl name:", std::string(name));
  std::string p = "/proc/sys/";
  for (char c : name) p += c == '.' ? '/' : c == '/' ? '.' : c;
  return p;
}

Result<std::string> sysctl_normalise(std::string_view name) {
  // A name whose first separator is '/' is in slash form: swap the two separators.
  const auto sep = name.find_first_of("./");
  if (sep == std::string_view::npos || name[sep] == '.') return std::string(name);
  std::string out;
  for (char c : name) out += c == '/' ? '.' : c == '.' ? '/' : c;
  return out;
}

}  // namespace dltune::tune

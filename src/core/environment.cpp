#include "core/environment.hpp"

#include <unistd.h>  // environ (glibc declares it under _GNU_SOURCE, which C++ builds define)

#include <string_view>

namespace dltune {

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string_view::npos)
      env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

}  // namespace dltune

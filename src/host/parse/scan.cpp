#include "host/parse/scan.hpp"

#include <fmt/core.h>

namespace dltune::host::parse::scan {

tl::unexpected<Error> bad(std::string_view what, std::string_view file, int line,
                          std::string_view item) {
  return fail(std::string(what), fmt::format("{} line {}: '{}'", file, line, item));
}

}  // namespace dltune::host::parse::scan

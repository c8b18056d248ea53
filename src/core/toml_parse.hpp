#pragma once
// A TOML document's text parsed, its syntax error as an Error instead of toml++'s exception
// (Debian builds toml++ with TOML_EXCEPTIONS; CONTRIBUTING.md, convention 4: they stop here):
// "Error while parsing key: ... at line 3, column 7 of knowledge/xid.toml".
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <toml++/toml.h>

#include "core/error.hpp"

namespace dltune {

[[nodiscard]] inline Result<toml::table> parse_toml(std::string_view text, std::string_view name) {
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    return tl::unexpected(Error{fmt::format("{} at line {}, column {} of", e.description(),
                                            e.source().begin.line, e.source().begin.column),
                                std::string(name), 0});
  }
}

}  // namespace dltune

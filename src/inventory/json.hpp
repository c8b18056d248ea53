#pragma once
// JSON for `--json`: key order is kept as written (docs/json.md documents the schema). A header
// that only declares functions taking or returning Json includes core/json_fwd.hpp instead.
#include <optional>
#include <string_view>

#include "core/json.hpp"

namespace dltune::inventory {

// Sets j[key] only when the value is present: absent facts are left out, never null.
template <class T>
void put(Json& j, std::string_view key, const std::optional<T>& v) {
  if (v) j[std::string(key)] = *v;
}

}  // namespace dltune::inventory

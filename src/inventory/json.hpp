#pragma once
// JSON for `--json`: key order is kept as written (docs/json.md documents the schema).
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dltune::inventory {

using Json = nlohmann::ordered_json;

// Sets j[key] only when the value is present: absent facts are left out, never null.
template <class T>
void put(Json& j, std::string_view key, const std::optional<T>& v) {
  if (v) j[std::string(key)] = *v;
}

}  // namespace dltune::inventory

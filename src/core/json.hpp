#pragma once
// The project's JSON type, whole (core/json_fwd.hpp says which header to include where).
#include <optional>

#include <nlohmann/json.hpp>

#include "core/json_fwd.hpp"

namespace dltune {

// An optional figure as JSON: its value, or null when it was not measured.
template <class T>
[[nodiscard]] Json json_or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

}  // namespace dltune

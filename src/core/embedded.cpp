#include "core/embedded.hpp"

namespace dltune {

std::optional<std::string_view> knowledge_text(std::string_view name) {
  for (const auto& f : embedded_knowledge())
    if (f.name == name) return f.text;
  return std::nullopt;
}

}  // namespace dltune

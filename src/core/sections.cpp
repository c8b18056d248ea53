#include "core/sections.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace dltune::text {

std::string render_sections(const std::vector<Section>& sections) {
  std::string out;
  for (const auto& s : sections) {
    if (s.rows.empty()) continue;
    if (!out.empty()) out += '\n';
    out += s.title + '\n';
    std::size_t width = 0;
    for (const auto& r : s.rows)
      width = std::max(width, r.label.size() + 2 * static_cast<std::size_t>(r.indent));
    for (const auto& r : s.rows) {
      const std::string label = std::string(2 * static_cast<std::size_t>(r.indent), ' ') + r.label;
      if (r.value.empty()) {
        out += fmt::format("  {}\n", label);
      } else {
        out += fmt::format("  {:<{}}  {}\n", label, width, r.value);
      }
    }
  }
  return out;
}

}  // namespace dltune::text

#pragma once
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct MemoryFacts {};

[[nodiscard]] MemoryFacts collect_memory(Context& ctx);
[[nodiscard]] Json to_json(const MemoryFacts& f);
[[nodiscard]] std::vector<render::Section> render_memory(const MemoryFacts& f);

}  // namespace dltune::inventory

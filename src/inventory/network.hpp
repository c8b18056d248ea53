#pragma once
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct NetworkFacts {};

[[nodiscard]] NetworkFacts collect_network(Context& ctx);
[[nodiscard]] Json to_json(const NetworkFacts& f);
[[nodiscard]] std::vector<render::Section> render_network(const NetworkFacts& f);

}  // namespace dltune::inventory

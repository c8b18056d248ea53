#pragma once
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct CpuFacts {};

[[nodiscard]] CpuFacts collect_cpu(Context& ctx);
[[nodiscard]] Json to_json(const CpuFacts& f);
[[nodiscard]] std::vector<render::Section> render_cpu(const CpuFacts& f);

}  // namespace dltune::inventory

#pragma once
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct OsFacts {};

[[nodiscard]] OsFacts collect_os(Context& ctx);
[[nodiscard]] Json to_json(const OsFacts& f);
[[nodiscard]] std::vector<render::Section> render_os(const OsFacts& f);

}  // namespace dltune::inventory

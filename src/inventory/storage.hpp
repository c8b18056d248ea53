#pragma once
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct StorageFacts {};

[[nodiscard]] StorageFacts collect_storage(Context& ctx);
[[nodiscard]] Json to_json(const StorageFacts& f);
[[nodiscard]] std::vector<render::Section> render_storage(const StorageFacts& f);

}  // namespace dltune::inventory

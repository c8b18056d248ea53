#include "inventory/memory.hpp"

namespace dltune::inventory {

MemoryFacts collect_memory(Context&) { return {}; }
Json to_json(const MemoryFacts&) { return Json::object(); }
std::vector<render::Section> render_memory(const MemoryFacts&) { return {}; }

}  // namespace dltune::inventory

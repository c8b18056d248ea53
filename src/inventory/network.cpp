#include "inventory/network.hpp"

namespace dltune::inventory {

NetworkFacts collect_network(Context&) { return {}; }
Json to_json(const NetworkFacts&) { return Json::object(); }
std::vector<render::Section> render_network(const NetworkFacts&) { return {}; }

}  // namespace dltune::inventory

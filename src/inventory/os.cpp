#include "inventory/os.hpp"

namespace dltune::inventory {

OsFacts collect_os(Context&) { return {}; }
Json to_json(const OsFacts&) { return Json::object(); }
std::vector<render::Section> render_os(const OsFacts&) { return {}; }

}  // namespace dltune::inventory

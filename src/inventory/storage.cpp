#include "inventory/storage.hpp"

namespace dltune::inventory {

StorageFacts collect_storage(Context&) { return {}; }
Json to_json(const StorageFacts&) { return Json::object(); }
std::vector<render::Section> render_storage(const StorageFacts&) { return {}; }

}  // namespace dltune::inventory

#include "inventory/gpu.hpp"

namespace dltune::inventory {

GpuFacts collect_gpus(Context&, const std::string&) { return {}; }
Json to_json(const GpuFacts&) { return Json::object(); }
std::vector<render::Section> render_gpus(const GpuFacts&) { return {}; }

}  // namespace dltune::inventory

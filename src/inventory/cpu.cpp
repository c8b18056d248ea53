#include "inventory/cpu.hpp"

namespace dltune::inventory {

CpuFacts collect_cpu(Context&) { return {}; }
Json to_json(const CpuFacts&) { return Json::object(); }
std::vector<render::Section> render_cpu(const CpuFacts&) { return {}; }

}  // namespace dltune::inventory

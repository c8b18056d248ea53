#include "inventory/cuda.hpp"

namespace dltune::inventory {

CudaFacts collect_cuda(Context&, const PythonFacts&) { return {}; }
Json to_json(const CudaFacts&) { return Json::object(); }
std::vector<render::Section> render_cuda(const CudaFacts&) { return {}; }

}  // namespace dltune::inventory

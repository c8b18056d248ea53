#pragma once
// The CUDA stack: toolkits (/usr/local/cuda*, CUDA_HOME, PATH), cuDNN and NCCL (headers and
// library file names), the same libraries inside Python site-packages (nvidia-* wheels), BLAS.
// OWNER: cuda/python helper (stub interface; to be filled in).
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "inventory/python.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct CudaFacts {};

[[nodiscard]] CudaFacts collect_cuda(Context& ctx, const PythonFacts& python);
[[nodiscard]] Json to_json(const CudaFacts& f);
[[nodiscard]] std::vector<render::Section> render_cuda(const CudaFacts& f);

}  // namespace dltune::inventory

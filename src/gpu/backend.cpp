#include "gpu/backend.hpp"

#include <fmt/core.h>

#include "gpu/nvml_backend.hpp"
#include "gpu/nvml_types.hpp"

namespace dltune::gpu {

std::string label(const Device& d) {
  return d.pci_bus_id ? fmt::format("GPU {} ({})", d.index, *d.pci_bus_id)
                      : fmt::format("GPU {}", d.index);
}

std::string path_name(const GpuPair& p) {
  if (p.nvlinks > 0) return fmt::format("NV{}", p.nvlinks);
  if (!p.level) return "?";
  // nvmlGpuTopologyLevel_t (NVML API Reference) as nvidia-smi topo -m's legend names it.
  switch (*p.level) {
    case nvml::kTopologyInternal:
      return "BRD";
    case nvml::kTopologySingle:
      return "PIX";
    case nvml::kTopologyMultiple:
      return "PXB";
    case nvml::kTopologyHostBridge:
      return "PHB";
    case nvml::kTopologyNode:
      return "NODE";
    case nvml::kTopologySystem:
      return "SYS";
    default:
      return "?";
  }
}

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
  std::vector<std::string> out;
  std::uint64_t named = 0;
  for (const auto& r : nvml::kClockEventReasons) {
    named |= r.bit;
    if (mask & r.bit) out.emplace_back(r.name);
  }
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    if ((mask & bit) && !(named & bit)) out.push_back(fmt::format("{:#x}", bit));
  }
  return out;
}

std::optional<std::string> cuda_version_string(int v) {
  // NVML reference, nvmlSystemGetCudaDriverVersion: 1000 * major + 10 * minor (CUDA 2.0 is the
  // oldest there is; 99.x is far beyond any that exists).
  if (v < 2000 || v > 99990) return std::nullopt;
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::vector<std::unique_ptr<GpuBackend>> make_backends(const BackendOptions& options) {
  std::vector<std::unique_ptr<GpuBackend>> out;
  out.push_back(std::make_unique<NvmlBackend>(options.nvml_library, options.nvml_fallbacks));
  return out;
}

}  // namespace dltune::gpu

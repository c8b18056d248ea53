#pragma once
// The NVML backend: the facts NVML gives about the driver and each GPU.
#include <cstdint>
#include <string>

#include "gpu/backend.hpp"
#include "gpu/nvml_library.hpp"

namespace dltune::gpu {

// Beyond this an ECC count is not believed (a GPU off the bus reads as all ones): the backend
// and the sampler bound counts with it.
inline constexpr std::uint64_t kMaxEccCount = std::uint64_t{1} << 48;

// At most this many devices are read, whatever nvmlDeviceGetCount says (the largest systems
// have 16 GPUs; a library that says a million is broken or hostile).
inline constexpr unsigned kMaxDevices = 64;

class NvmlBackend : public GpuBackend {
 public:
  // `library`: the file to dlopen (DLTUNE_NVML_LIBRARY), or empty for the driver's names.
  // `fallbacks`: tried after the driver's names when `library` is empty.
  explicit NvmlBackend(std::string library, std::vector<std::string> fallbacks = {})
      : library_(std::move(library)), fallbacks_(std::move(fallbacks)) {}
  [[nodiscard]] std::string_view name() const override { return "nvml"; }
  [[nodiscard]] Report query() override;

 private:
  std::string library_;
  std::vector<std::string> fallbacks_;
};

// The facts of a library that is loaded and initialised.
[[nodiscard]] Report query_nvml(const NvmlLibrary& lib);

}  // namespace dltune::gpu

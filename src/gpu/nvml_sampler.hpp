#pragma once
// NVML for sampling: the GPUs' changing figures, read again and again (monitor's GpuCollector
// calls it from a thread of its own). The library is loaded and initialised by `open` and shut
// down when the sampler goes, on the thread that holds it.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/reading.hpp"

namespace dltune::gpu {

class NvmlSampler {
 public:
  // `library`: the libnvidia-ml.so to load (empty: the driver's own names). Errors name it.
  // `more`: tried after the driver's names when `library` is empty (nvml_libraries_in).
  [[nodiscard]] static Result<NvmlSampler> open(const std::string& library,
                                                const std::vector<std::string>& more = {});
  NvmlSampler();
  ~NvmlSampler();
  NvmlSampler(NvmlSampler&&) noexcept;
  NvmlSampler& operator=(NvmlSampler&&) noexcept;

  // Every GPU into `out` (its elements reused); calls that failed other than "not supported"
  // are added to `failed` by NVML function name and error, for one notice each.
  void read(std::vector<GpuReading>& out, std::set<std::string>& failed);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dltune::gpu

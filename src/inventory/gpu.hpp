#pragma once
// GPU facts: PCI devices from sysfs (NVIDIA 0x10de, AMD 0x1002), NVML when it loads, the NVIDIA
// kernel module and user library versions, nouveau/nvidia modules loaded.
// OWNER: gpu helper (stub interface; to be filled in).
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct GpuFacts {};

// `nvml_library`: the library to dlopen (DLTUNE_NVML_LIBRARY, or empty for the default names).
// NVML is only asked when ctx.root() is the live host; for a capture its answer is read from
// capture_files::kNvml.
[[nodiscard]] GpuFacts collect_gpus(Context& ctx, const std::string& nvml_library);
[[nodiscard]] Json to_json(const GpuFacts& f);
[[nodiscard]] std::vector<render::Section> render_gpus(const GpuFacts& f);

}  // namespace dltune::inventory

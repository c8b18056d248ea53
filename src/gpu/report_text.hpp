#pragma once
// A backend's Report as text rows for `env` (the GPU section is put together in
// inventory/gpu.cpp).
#include <optional>
#include <string>
#include <vector>

#include "core/sections.hpp"
#include "gpu/backend.hpp"

namespace dltune::gpu {

// "Gen4 x16 (max Gen4 x16)"; parts that are unknown are left out; empty when all are.
[[nodiscard]] std::string pcie_text(std::optional<int> generation, std::optional<int> width,
                                    std::optional<int> max_generation,
                                    std::optional<int> max_width);

// The rows of what NVML says about one device (name and PCI address are the caller's), at
// `indent`. `with_pcie`: add NVML's PCIe link row (when sysfs had none).
void add_device_rows(text::Section& s, const Device& d, int indent, bool with_pcie);

// "18 links active, version 4, to NVSwitch; errors: 0 replay, 0 recovery, 0 CRC", or
// "16 of 18 links active (down: 3, 7)".
[[nodiscard]] std::string nvlink_text(const Device& d);

// nvidia-smi topo -m's matrix: a header row and one row per GPU, each cell the pair's path
// ("NV18", "PIX", "SYS", ...; "X" on the diagonal). Empty without a topology.
[[nodiscard]] std::vector<std::string> topology_matrix(const Report& r);

// "libnvidia-ml.so.1: driver 550.54.15, CUDA 12.4, NVML 12.550.54.15" or
// "not loaded (cannot load NVML: ...)".
[[nodiscard]] std::string summary(const Report& r);

}  // namespace dltune::gpu

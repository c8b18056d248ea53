#pragma once
// The compute GPUs on PCI, from sysfs alone: what the host has whether or not a driver answers
// for them. `serve`'s dltune_gpu_up is one series per GPU found here, 0 when its driver's
// interface (NVML, amdgpu's sysfs) did not answer for it.
//
// A GPU is a PCI device of vendor NVIDIA (0x10de) or AMD (0x1002) whose class is a display
// controller (0x03) or a processing accelerator (0x12, AMD Instinct MI300); sysfs's `vendor` and
// `class` files (kernel Documentation/ABI/testing/sysfs-bus-pci).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/reading.hpp"
#include "host/root.hpp"

namespace dltune::gpu {

struct PciGpuSlot {
  std::string address;  // sysfs's form, "0000:9a:00.0"
  std::string vendor;   // "nvidia" or "amd"
};

// By address. Empty when /sys/bus/pci/devices cannot be listed.
[[nodiscard]] std::vector<PciGpuSlot> find_pci_gpus(const host::Root& root);

// One PCI GPU and whether its driver's interface answered for it at the last reading.
struct GpuSlot {
  // As the GPU's other series name it: NVML's form for NVIDIA ("00000000:9A:00.0", what
  // nvmlDeviceGetPciInfo writes, taken from NVML when it listed the GPU), sysfs's for AMD.
  std::string pci_bus_id;
  std::string vendor;
  bool up = false;
  std::optional<unsigned> index;  // the reading's index (dltune_gpu_info's gpu) when listed
};

// The slots of `pci` from a reading: a GPU is up when a reading has its address, no call said
// the GPU is lost, and (NVIDIA) NVML gave its handle and identity. `out` is reused.
void match_slots(const std::vector<PciGpuSlot>& pci, const std::vector<GpuReading>& readings,
                 std::vector<GpuSlot>& out);

// NVML's form of a sysfs address: an 8-digit domain, upper case ("0000:9a:00.0" ->
// "00000000:9A:00.0").
[[nodiscard]] std::string nvml_bus_id(std::string_view sysfs_address);

}  // namespace dltune::gpu

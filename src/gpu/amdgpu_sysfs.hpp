#pragma once
// AMD GPUs from the amdgpu driver's sysfs alone (no library): the second vendor beside NVML.
//
// Each GPU is a PCI device of vendor 0x1002, class display (0x03) or processing accelerator
// (0x12), bound to the amdgpu driver. Its files, in /sys/bus/pci/devices/ADDR (Linux
// Documentation/gpu/amdgpu/driver-misc.rst and thermal.rst; drivers/gpu/drm/amd/pm/amdgpu_pm.c,
// amdgpu/amdgpu_ras.c for the formats):
//   gpu_busy_percent, mem_busy_percent      "97\n": percent busy now
//   mem_info_vram_total, mem_info_vram_used  bytes
//   product_name, unique_id, serial_number   (boards with a FRU EEPROM / SOC15 and newer)
//   ras/umc_err_count                        "ue: N\nce: N\n": memory errors since the driver
//   loaded ras/gpu_vram_bad_pages                   "0x%08x : 0x%08x : %1s" per page; R reserved
//   (retired),
//                                            P pending, F failed to reserve
//   hwmon/hwmonN (name "amdgpu"):            temp[1-3]_input (m°C; labels edge, junction, mem),
//                                            power1_average or power1_input (µW), power1_cap,
//                                            power1_cap_default, _min, _max (µW), freq1_input
//                                            (sclk, Hz), freq2_input (mclk, Hz), energy1_input (µJ)
// Everything is read through host::Root, so a host tree (tests/fixtures/roots/amd-mi210x4) is read
// as the live host is. A file that is absent leaves its field out.
#include <optional>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/reading.hpp"
#include "host/root.hpp"

namespace dltune::gpu::amdgpu {

// One AMD GPU bound to amdgpu: where its files are.
struct Card {
  std::string pci_address;               // "0000:03:00.0"
  std::string device_dir;                // "/sys/bus/pci/devices/0000:03:00.0"
  std::optional<std::string> hwmon_dir;  // ".../hwmon/hwmon3", the one named "amdgpu"
};

// The AMD GPUs bound to amdgpu, by PCI address (the order ROCm's tools number them in on a
// host without a HIP_VISIBLE_DEVICES).
[[nodiscard]] std::vector<Card> find_cards(const host::Root& root);

// What sysfs tells of them: backend "amdgpu", library "sysfs"; loaded when any GPU was found,
// else the reason. Indexes from 0 in find_cards' order.
[[nodiscard]] Report query(const host::Root& root);

// One reading of each card into `out` (appended), indexes from `first_index`: busy percent,
// VRAM, power, temperature (junction, else edge), clocks, energy, memory error counts.
void read(const host::Root& root, const std::vector<Card>& cards, unsigned first_index,
          std::vector<GpuReading>& out);

// "R"/"P"/"F" counts of ras/gpu_vram_bad_pages' text (lines that do not parse are skipped).
struct BadPages {
  std::uint32_t retired = 0, pending = 0, failed = 0;
};
[[nodiscard]] BadPages parse_bad_pages(std::string_view text);
// ras/*_err_count's "ue: N\nce: N\n".
struct ErrCount {
  std::optional<std::uint64_t> ue, ce;
};
[[nodiscard]] ErrCount parse_err_count(std::string_view text);
// pp_dpm_sclk's current level ("1: 1700Mhz *" -> 1700), or nullopt.
[[nodiscard]] std::optional<std::uint32_t> parse_dpm_current_mhz(std::string_view text);

}  // namespace dltune::gpu::amdgpu

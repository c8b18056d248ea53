#pragma once
// What one reading of a GPU holds (NvmlSampler fills it; monitor's Sample keeps one per GPU as
// monitor::Gpu). Counters and instantaneous values as NVML reports them; each may be absent.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dltune::gpu {

// One GPU, from NVML. Counters and instantaneous values as NVML reports them.
struct GpuProcess {
  pid_t pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;
  // nvmlDeviceGetProcessUtilization's SM utilisation of the process over the reading's interval,
  // %: 0 for a process the call did not list (it lists only those that used the GPU); absent
  // where the call is missing or failed.
  std::optional<std::uint32_t> sm_util_pct = std::nullopt;
};
// How many Xid events of one code a GPU had.
struct XidCount {
  std::uint32_t code = 0;
  std::uint64_t count = 0;
  bool operator==(const XidCount&) const = default;
};
// The most Xid codes kept per GPU (NVIDIA's catalog has a few hundred; one GPU shows a handful).
inline constexpr std::size_t kMaxXidCodes = 64;

struct GpuReading {
  unsigned index = 0;
  std::optional<std::string> uuid, name, pci_bus_id;
  std::optional<std::string> vendor;  // "nvidia" (from NVML) or "amd" (from amdgpu's sysfs)
  std::optional<std::uint32_t> utilization_gpu_pct, utilization_memory_pct;  // NVML's own window
  std::optional<std::uint64_t> memory_used_bytes, memory_total_bytes;
  // NVML's free: under nvmlMemory_v2_t total less used and the driver's reserve, so not always
  // total - used.
  std::optional<std::uint64_t> memory_free_bytes;
  // nvmlDeviceGetMinorNumber: the N of /dev/nvidiaN (dcgm-exporter's device="nvidiaN").
  std::optional<std::uint32_t> minor_number;
  std::optional<double> power_watts;
  std::optional<std::uint32_t> temperature_celsius;
  std::optional<std::uint32_t> sm_clock_mhz, memory_clock_mhz;
  std::optional<std::uint64_t> clock_event_reasons;           // nvmlClocksEventReasons bits
  std::optional<std::uint32_t> pcie_tx_kib_s, pcie_rx_kib_s;  // NVML's 20 ms window, KB/s
  std::optional<std::uint64_t> energy_mj;     // total energy since the driver loaded
  std::vector<GpuProcess> processes;          // compute processes
  std::optional<std::int64_t> sampled_at_ns;  // monotonic time NVML was read (slower rate)
  // nvmlDeviceGetPcieReplayCounter: link-level retransmissions since the driver loaded.
  std::optional<std::uint64_t> pcie_replay_count;
  // Xid events (nvmlEventTypeXidCriticalError) seen since the collector started, and the last
  // one's code; empty when NVML's event API is missing or refused.
  std::optional<std::uint64_t> xid_errors;
  std::optional<std::uint32_t> last_xid;
  std::vector<XidCount> xid_codes;  // those events by code, sorted by code
  // Volatile ECC counts (since the driver loaded); absent when ECC is off or unknown.
  std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected;
  // NVML's NVLink data counters (KiB since the driver loaded): NVLink payload sent and
  // received, the GPU's links together; absent on a GPU without NVLink.
  std::optional<std::uint64_t> nvlink_tx_kib, nvlink_rx_kib;
  // GPU Performance Monitoring (Hopper and newer; NVML's GPM metrics over the interval since the
  // last reading, as ratios): the share of SMs busy (what DCGM calls SM activity), of warps
  // resident against the SMs' maximum (occupancy), of time a tensor pipe was busy, and of DRAM
  // bandwidth used. NVML's utilisation says a kernel ran; these say how much of the GPU it used.
  std::optional<double> sm_active_ratio, sm_occupancy_ratio, tensor_active_ratio, dram_active_ratio;
  // NVML said NVML_ERROR_GPU_IS_LOST to a call on this GPU at this reading (it fell off the bus
  // or stopped answering), or could not give its handle: its values are missing, not zero.
  bool lost = false;
};

}  // namespace dltune::gpu

#pragma once
// GpuBackend: where facts about GPUs come from beyond sysfs (docs/architecture.md). The backends
// are listed in make_backends, in the order they are asked (CONTRIBUTING.md, convention 8: no
// static registration). NVML is the one backend today.
//
// Every fact is optional: a call that fails leaves its field out, and, when the failure says
// something (anything but "not supported"), its error text is kept with the device.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::gpu {

struct EccCounts {
  std::optional<std::uint64_t> volatile_corrected;
  std::optional<std::uint64_t> volatile_uncorrected;
  std::optional<std::uint64_t> aggregate_corrected;
  std::optional<std::uint64_t> aggregate_uncorrected;
};

// Row remapping (A100, H100 and newer): rows of HBM replaced by spare rows after ECC errors.
struct RowRemap {
  std::uint32_t corrected_rows = 0;    // remapped after correctable errors
  std::uint32_t uncorrected_rows = 0;  // remapped after uncorrectable errors
  bool pending = false;                // a remap waits for the next GPU reset
  bool failure = false;                // a remap failed (no spare row left): service the GPU
};

// Page retirement (Kepler to Turing; AMD's bad pages): pages taken out of use after ECC errors.
struct RetiredPages {
  std::optional<std::uint32_t> multiple_single_bit;  // after repeated corrected errors
  std::optional<std::uint32_t> double_bit;           // after an uncorrectable error
  std::optional<bool> pending;                       // retirement waits for the next reset
  std::optional<std::uint32_t> failed;               // amdgpu: bad pages it could not retire
};

// A MIG device (a GPU instance with a compute instance) of a GPU in MIG mode.
struct MigDevice {
  unsigned index = 0;  // nvmlDeviceGetMigDeviceHandleByIndex's
  std::optional<std::string> name;
  std::optional<std::string> uuid;  // "MIG-..."
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint32_t> gpu_instance_id;
  std::optional<std::uint32_t> compute_instance_id;
};

struct NvLink {
  unsigned link = 0;
  bool active = false;
  std::optional<std::string> remote_pci_bus_id;  // "0000:18:00.0" (an NVSwitch or a peer GPU)
  std::optional<std::uint32_t> version;          // nvmlDeviceGetNvLinkVersion's value
  std::optional<std::string> remote_type;        // "gpu", "switch", "ibmnpu"
  // Data-link error counters since the driver loaded: replays (a flit sent again), recoveries
  // (the link retrained), CRC errors in flits and in data.
  std::optional<std::uint64_t> replay_errors;
  std::optional<std::uint64_t> recovery_errors;
  std::optional<std::uint64_t> crc_flit_errors;
  std::optional<std::uint64_t> crc_data_errors;
};

// How two GPUs reach each other (nvidia-smi topo -m): NVML's common ancestor in the PCIe tree,
// and whether peer-to-peer access works over NVLink and over PCIe.
struct GpuPair {
  unsigned a = 0, b = 0;     // NVML indexes, a < b
  std::optional<int> level;  // nvmlGpuTopologyLevel_t: 0 board, 10, 20, 30, 40, 50
  std::optional<bool> p2p_nvlink;
  std::optional<bool> p2p_read;
  unsigned nvlinks = 0;  // active links from a that reach b (directly, or through NVSwitches)
};

// nvidia-smi topo -m's name of a pair's path: "NV18" (NVLinks), "PIX" (one PCIe switch), "PXB"
// (several switches), "PHB" (a host bridge), "NODE" (the same NUMA node), "SYS" (across the
// CPUs' interconnect), "BRD" (the same board), "?" when unknown.
[[nodiscard]] std::string path_name(const GpuPair& p);

struct Device {
  unsigned index = 0;  // the backend's own index (NVML's, not CUDA's, order)
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;  // normalised: "0000:17:00.0"
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<bool> persistence_mode;
  std::optional<bool> ecc_enabled;          // current mode
  std::optional<bool> ecc_pending_enabled;  // the mode after the next reboot
  EccCounts ecc_errors;                     // only read when ECC is on
  std::optional<RowRemap> row_remap;
  RetiredPages retired_pages;
  std::optional<std::uint32_t> sm_clock_mhz;
  std::optional<std::uint32_t> memory_clock_mhz;
  std::optional<std::uint32_t> max_sm_clock_mhz;
  std::optional<std::uint32_t> max_memory_clock_mhz;
  std::optional<std::uint32_t> app_sm_clock_mhz;  // application clocks (the target under load)
  std::optional<std::uint32_t> app_memory_clock_mhz;
  std::optional<std::uint32_t> default_app_sm_clock_mhz;
  std::optional<std::uint32_t> default_app_memory_clock_mhz;
  std::optional<std::uint64_t> clock_event_reasons;  // nvmlClocksEventReasons bits
  std::optional<std::uint32_t> pcie_generation;
  std::optional<std::uint32_t> pcie_width;
  std::optional<std::uint32_t> pcie_max_generation;
  std::optional<std::uint32_t> pcie_max_width;
  std::optional<std::uint32_t> temperature_celsius;
  std::optional<double> power_watts;
  std::optional<double> power_limit_watts;             // enforced: the lowest of every limit
  std::optional<double> power_management_limit_watts;  // the limit set (nvidia-smi -pl)
  std::optional<double> power_default_limit_watts;     // the board's default
  std::optional<double> power_min_limit_watts;         // the range a limit may be set in
  std::optional<double> power_max_limit_watts;
  std::optional<bool> mig_enabled;          // MIG mode now
  std::optional<bool> mig_pending_enabled;  // after the next GPU reset
  std::vector<MigDevice> mig_devices;
  std::vector<NvLink> nvlinks;      // the links that exist on this device
  std::vector<std::string> errors;  // "nvmlDeviceGetUUID: NVML_ERROR_GPU_IS_LOST (15): ..."
};

// "GPU 3 (0000:5d:00.0)", or "GPU 3" without a bus id: how findings and plans name a GPU.
[[nodiscard]] std::string label(const Device& d);

// What one backend reported.
struct Report {
  std::string backend;                             // "nvml"
  bool loaded = false;                             // the library loaded and initialised
  std::string library;                             // the file loaded, or the name that was tried
  std::optional<std::string> error;                // why it did not load
  std::optional<std::string> driver_version;       // "550.54.15"
  std::optional<std::string> cuda_driver_version;  // "12.4": the newest CUDA the driver runs
  std::optional<std::string> nvml_version;         // "12.550.54.15"
  std::optional<std::uint64_t> device_count;       // as the library said, before any cap
  std::vector<Device> devices;
  std::vector<GpuPair> topology;    // every pair of devices, when NVML answers for it
  std::vector<std::string> errors;  // calls that failed outside any one device
};

// The names of the set bits ("GpuIdle", "SwPowerCap"); an unnamed bit is written "0x200".
[[nodiscard]] std::vector<std::string> clock_event_reason_names(std::uint64_t mask);

// "12.4" from NVML's 12040 (1000 * major + 10 * minor); nullopt for absurd values.
[[nodiscard]] std::optional<std::string> cuda_version_string(int v);

struct BackendOptions {
  std::string nvml_library;  // DLTUNE_NVML_LIBRARY, or empty for the driver's default names
  std::vector<std::string> nvml_fallbacks;  // tried after the default names (nvml_libraries_in)
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Never throws: a library that does not load gives a Report with loaded = false and the error.
  [[nodiscard]] virtual Report query() = 0;
};

// The backends, in the order they are asked.
[[nodiscard]] std::vector<std::unique_ptr<GpuBackend>> make_backends(const BackendOptions& options);

}  // namespace dltune::gpu

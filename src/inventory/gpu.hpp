#pragma once
// GPU facts: PCI display devices from sysfs (NVIDIA 0x10de and AMD 0x1002 are compute GPUs;
// any other display device, such as a BMC's ASPEED VGA or a VM's virtio-gpu, is listed with
// compute = false), NVML when it loads (joined to sysfs by PCI address), the NVIDIA kernel module
// and user library versions side by side, and the GPU kernel modules loaded.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "gpu/backend.hpp"
#include "inventory/context.hpp"
#include "inventory/pcie_path.hpp"

namespace dltune::inventory {

struct PciLinkFacts {
  std::optional<double> speed_gts;  // current, per lane
  std::optional<double> max_speed_gts;
  std::optional<int> generation;  // PCIe generation of the current speed
  std::optional<int> max_generation;
  std::optional<int> width;  // lanes
  std::optional<int> max_width;
  // Current speed or width below the maximum. An idle GPU may lower its link speed to save
  // power, so a downgrade is only a fault when it persists under load.
  std::optional<bool> downgraded;
};

struct PciGpu {
  std::string address;  // "0000:17:00.0"
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::optional<std::uint16_t> subsystem_vendor_id;
  std::optional<std::uint16_t> subsystem_device_id;
  std::uint32_t class_code = 0;               // 0x030200 (3D controller), 0x030000 (VGA)
  std::string vendor;                         // "nvidia", "amd", or "other"
  bool compute = false;                       // an NVIDIA or AMD GPU
  std::optional<std::string> vendor_name;     // pci.ids, or a few built in for other displays
  std::optional<std::string> device_name;     // pci.ids
  std::optional<std::string> subsystem_name;  // pci.ids
  std::optional<int> numa_node;
  std::optional<std::string> numa_node_source;  // "numa_node" or "local_cpulist"
  std::optional<std::string> local_cpus;        // "0-31,64-95"
  // Its host bridge and the bridges above it (inventory/pcie_path.hpp), from the resolved link
  // /sys/bus/pci/devices/ADDR; absent when the link is not there or leads elsewhere.
  std::optional<PciePlace> pcie_place;
  std::optional<std::string> driver;  // "nvidia", "nouveau", "amdgpu", "vfio-pci"
  PciLinkFacts link;
  std::optional<unsigned> nvml_index;    // the NVML device at the same address
  std::optional<unsigned> amdgpu_index;  // the amdgpu device (GpuFacts::amdgpu) at the address
};

struct DriverVersions {
  std::optional<std::string> kernel_module_version;  // /proc/driver/nvidia/version
  std::optional<bool> kernel_module_open;            // the open GPU kernel modules
  std::optional<std::string> user_library_version;   // NVML's driver version or the file name
  std::optional<std::string> user_library_source;    // "nvml" or the libnvidia-ml.so.X path
  // Both known and equal. false is NVML's "Driver/library version mismatch".
  std::optional<bool> match;
};

// Where an nvidia kernel module was built to, read only when NVIDIA GPUs are on PCI and no
// nvidia module is loaded: the usual cause is a kernel update that DKMS did not build the driver
// for. From each /lib/modules/RELEASE/modules.dep (depmod's list of every module file, DKMS's
// included).
struct NvidiaModuleBuilds {
  std::optional<std::string> running_kernel;  // /proc/sys/kernel/osrelease
  std::optional<bool> for_running_kernel;     // nvidia.ko in its modules.dep
  std::optional<std::string> path;            // "updates/dkms/nvidia.ko.xz"
  std::vector<std::string> other_kernels;     // other releases that have one
};

struct GpuFacts {
  std::vector<PciGpu> devices;     // display-class PCI devices, by address
  gpu::Report nvml;                // loaded = false with the error when it did not load
  bool nvml_from_capture = false;  // read from capture_files::kNvml, not asked live
  gpu::Report amdgpu;              // AMD GPUs from amdgpu's sysfs (loaded = false: none)
  DriverVersions driver;
  std::map<std::string, bool> modules;  // nvidia, nvidia_uvm, ... -> loaded (empty: unknown)
  std::optional<std::string> pci_ids;   // the pci.ids file that named the devices
  // The NVIDIA device files in /dev ("nvidia0", "nvidiactl", "nvidia-uvm"), read when an NVIDIA
  // GPU is on PCI or in NVML; absent when /dev could not be listed. In a container, the GPUs the
  // runtime gave it.
  std::optional<std::vector<std::string>> dev_nodes;
  std::optional<NvidiaModuleBuilds> module_builds;  // only when the nvidia module is not loaded
};

// `nvml_library`: the library to dlopen (DLTUNE_NVML_LIBRARY, or empty for the default names).
// NVML is only asked when ctx.root() is the live host; for a capture its answer is read from
// capture_files::kNvml.
[[nodiscard]] GpuFacts collect_gpus(Context& ctx, const std::string& nvml_library);
// The same with NVML's answer given (the sysfs facts are still read through ctx.root()).
[[nodiscard]] GpuFacts collect_gpus(Context& ctx, gpu::Report nvml);

[[nodiscard]] Json to_json(const GpuFacts& f);

// Whether the host has an NVIDIA GPU: in sysfs or in NVML's answer.
[[nodiscard]] bool has_nvidia_gpu(const GpuFacts& g);
inline constexpr const char* kNoNvidiaGpu = "no NVIDIA GPU on this host";
// What `capture` writes to capture_files::kNvml: exactly to_json(f)["nvml"].
[[nodiscard]] Json nvml_json(const GpuFacts& f);
[[nodiscard]] std::vector<text::Section> render_gpus(const GpuFacts& f);

}  // namespace dltune::inventory

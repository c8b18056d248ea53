// gpu.health: every NVIDIA GPU on the PCI bus is driven by the nvidia module and answers NVML.
// GPUs fail by not answering: a driver not loaded after a kernel update, a GPU fallen off the
// bus (Xid 79), NVML unreachable in a container. Each of those is a finding here, never silence;
// what cannot be judged (a host tree without NVML's answer) is unknown, never ok.
#include <algorithm>

#include <fmt/format.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;

namespace {

constexpr const char* kExpected = "every NVIDIA GPU on PCI bound to nvidia and answering NVML";

std::vector<const inventory::PciGpu*> nvidia_on_pci(const inventory::GpuFacts& g) {
  std::vector<const inventory::PciGpu*> out;
  for (const auto& d : g.devices)
    if (d.vendor == "nvidia" && d.compute) out.push_back(&d);
  return out;
}

std::string addresses(const std::vector<const inventory::PciGpu*>& gpus) {
  std::vector<std::string> a;
  for (const auto* d : gpus) a.push_back(d->address);
  return fmt::format("{}", fmt::join(a, ", "));
}

bool has(const std::string& text, std::string_view what) {
  return text.find(what) != std::string::npos;
}

// GPU device nodes (/dev/nvidia0, ...), not nvidiactl or nvidia-uvm.
int gpu_nodes(const std::vector<std::string>& nodes) {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [](const std::string& n) {
    return n.size() > 6 &&
           std::all_of(n.begin() + 6, n.end(), [](char c) { return c >= '0' && c <= '9'; });
  }));
}

constexpr const char* kDmesg = "dmesg | grep -i -e nvrm -e nvidia";

Finding module_not_loaded(const AuditInput& in, const settings::ProfileEntry& e,
                          const std::vector<const inventory::PciGpu*>& gpus) {
  const auto& g = in.facts.gpu;
  Finding f = frame(e, kExpected);
  f.severity = not_met(e);
  f.actual = "the nvidia kernel module is not loaded";
  f.summary = fmt::format(
      "the nvidia kernel module is not loaded: {} NVIDIA GPU{} on PCI ({}) {} no driver, and "
      "CUDA sees none",
      gpus.size(), gpus.size() == 1 ? "" : "s", addresses(gpus), gpus.size() == 1 ? "has" : "have");
  f.evidence.push_back({"/proc/modules", "no nvidia line"});
  f.evidence.push_back({"/proc/driver/nvidia/version", "absent"});
  const auto& b = g.module_builds;
  const std::string release = b && b->running_kernel ? *b->running_kernel : "$(uname -r)";
  if (b && b->for_running_kernel == true) {
    f.evidence.push_back(
        {"/lib/modules/" + release + "/modules.dep", b->path.value_or("nvidia.ko")});
    f.fix = Fix{"modprobe nvidia && nvidia-smi", false};
    f.notes.push_back(fmt::format(
        "The module is built for the running kernel ({}) but not loaded. If modprobe fails, `{}` "
        "says why: Secure Boot refusing an unsigned module, a GPU this driver does not support, "
        "or nouveau holding the GPUs (gpu.nouveau).",
        release, kDmesg));
  } else if (b && b->for_running_kernel == false && !b->other_kernels.empty()) {
    f.summary += fmt::format("; the module is built for {} but not for the running kernel {}",
                             fmt::join(b->other_kernels, ", "), release);
    f.evidence.push_back({"/lib/modules/" + release + "/modules.dep", "no nvidia.ko"});
    for (const auto& k : b->other_kernels)
      f.evidence.push_back({"/lib/modules/" + k + "/modules.dep", "nvidia.ko"});
    f.fix = Fix{"apt-get install linux-headers-$(uname -r) && dkms autoinstall && modprobe nvidia",
                false};
    f.notes.push_back(
        "A kernel update that DKMS did not build the driver for (its headers were missing, or "
        "the build failed: /var/lib/dkms/nvidia/*/build/make.log). On RHEL-like systems: dnf "
        "install kernel-devel-$(uname -r) && dkms autoinstall. Or boot the kernel it was built "
        "for.");
  } else if (b && b->for_running_kernel == false) {
    f.summary += fmt::format("; no nvidia module is built for any kernel here");
    f.evidence.push_back({"/lib/modules/" + release + "/modules.dep", "no nvidia.ko"});
    f.fix = Fix{"apt-get install nvidia-driver && reboot", false};
    f.notes.push_back(
        "Install the NVIDIA driver for this kernel: Debian's nvidia-driver (non-free), Ubuntu's "
        "`ubuntu-drivers install`, or NVIDIA's repository (apt-get install cuda-drivers); then "
        "reboot, or modprobe nvidia.");
  } else {
    f.fix = Fix{"modprobe nvidia && nvidia-smi", false};
    f.notes.push_back(fmt::format(
        "Whether a module is built for this kernel could not be read (/lib/modules). If "
        "modprobe fails, `{}` says why; after a kernel update, `dkms autoinstall` builds it.",
        kDmesg));
  }
  host_only(f, in, "the host's kernel modules");
  return f;
}

Finding not_bound(const AuditInput& in, const settings::ProfileEntry& e,
                  const inventory::PciGpu& d) {
  const auto& g = in.facts.gpu;
  Finding f = frame(e, kExpected);
  f.severity = not_met(e);
  const std::string driver_file = fmt::format("/sys/bus/pci/devices/{}/driver", d.address);
  f.evidence.push_back({driver_file, d.driver.value_or("no driver")});
  if (d.driver == "vfio-pci") {
    f.actual = "bound to vfio-pci";
    f.summary = fmt::format(
        "{} is bound to vfio-pci (passed through to a virtual machine), not to nvidia: this "
        "host cannot use it",
        label(g, d));
    f.fix = Fix{fmt::format("echo {0} > /sys/bus/pci/drivers/vfio-pci/unbind && echo {0} > "
                            "/sys/bus/pci/drivers/nvidia/bind",
                            d.address),
                false};
    f.notes.push_back(
        "If the GPU is meant for a VM, leave it out of this profile's hosts (--skip gpu.health); "
        "a binding set by driverctl or a vfio-pci.ids= kernel option comes back at boot.");
  } else if (d.driver) {
    f.actual = "bound to " + *d.driver;
    f.summary =
        fmt::format("{} is bound to {}, not to nvidia: CUDA cannot use it", label(g, d), *d.driver);
    f.fix = Fix{fmt::format("echo {0} > /sys/bus/pci/drivers/{1}/unbind && echo {0} > "
                            "/sys/bus/pci/drivers/nvidia/bind",
                            d.address, *d.driver),
                false};
  } else {
    f.actual = "no driver";
    f.summary = fmt::format(
        "{} has no driver although the nvidia module is loaded: the driver refused it or it "
        "failed to initialise",
        label(g, d));
    f.fix = Fix{fmt::format("{}; echo {} > /sys/bus/pci/drivers/nvidia/bind", kDmesg, d.address),
                false};
    f.notes.push_back(
        "The kernel log says why (NVRM: a GPU this driver version does not support, a failed "
        "initialisation, an Xid); a GPU that fell off the bus needs a reset or a reboot.");
  }
  host_only(f, in, "the host's driver bindings");
  return f;
}

Finding nvml_fails(const AuditInput& in, const settings::ProfileEntry& e,
                   const std::vector<const inventory::PciGpu*>& gpus) {
  const auto& g = in.facts.gpu;
  const std::string error = g.nvml.error.value_or("it did not load");
  Finding f = frame(e, kExpected);
  f.severity = not_met(e);
  f.actual = "NVML fails: " + error;
  f.evidence.push_back({nvml_path(g), error});
  const std::string on_pci =
      fmt::format("{} NVIDIA GPU{} on PCI", gpus.size(), gpus.size() == 1 ? "" : "s");
  if (has(error, "NVML_ERROR_LIB_RM_VERSION_MISMATCH")) {
    const auto& d = g.driver;
    f.summary = fmt::format(
        "NVML fails with a driver/library version mismatch (kernel module {}, user library {}): "
        "every CUDA and NVML call fails on the {}",
        d.kernel_module_version.value_or("?"), d.user_library_version.value_or("?"), on_pci);
    f.fix = Fix{"reboot", false};
    f.notes.push_back(
        "The driver was upgraded without a reboot. Without one, when no process uses the GPUs "
        "(fuser -v /dev/nvidia*): rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && modprobe "
        "nvidia.");
  } else if (has(error, "NVML_ERROR_DRIVER_NOT_LOADED")) {
    f.summary = fmt::format(
        "NVML says the driver is not loaded although the nvidia module is: it cannot open "
        "/dev/nvidiactl ({})",
        on_pci);
    f.fix = Fix{"nvidia-modprobe -c 0 -u && ls -l /dev/nvidia*", false};
    f.notes.push_back(
        "The device files are made by nvidia-modprobe or the driver's udev rule; in a container "
        "the runtime passes them (docker run --gpus all).");
  } else if (has(error, "NVML_ERROR_NO_PERMISSION")) {
    f.summary = fmt::format(
        "NVML is refused access to the GPUs: /dev/nvidia* is not open to this user ({})", on_pci);
    f.fix = Fix{"ls -l /dev/nvidia*", false};
    f.notes.push_back(
        "The device files' mode comes from the nvidia module's NVreg_DeviceFileMode and "
        "NVreg_DeviceFileGID options (/etc/modprobe.d) or a udev rule; run as root, or give the "
        "user the group they name.");
  } else if (has(error, "cannot load NVML") || has(error, "cannot open shared object")) {
    f.summary = fmt::format(
        "NVML (libnvidia-ml.so.1) is missing although the nvidia module is loaded: the driver's "
        "user-space part is not installed ({})",
        on_pci);
    f.fix = Fix{
        fmt::format("apt-get install libnvidia-ml1{}",
                    g.driver.kernel_module_version
                        ? "  # at the kernel module's version, " + *g.driver.kernel_module_version
                        : ""),
        false};
    f.notes.push_back(
        "The user-space libraries must be the module's version. Inside a container, the NVIDIA "
        "Container Toolkit mounts them (docker run --gpus all; Apptainer --nv).");
  } else {
    f.summary = fmt::format("NVML fails: {} ({})", error, on_pci);
    f.fix = Fix{fmt::format("nvidia-smi; {}", kDmesg), false};
  }
  host_only(f, in, "the host's driver");
  return f;
}

Finding no_device_nodes(const AuditInput& in, const settings::ProfileEntry& e,
                        const std::vector<const inventory::PciGpu*>& gpus) {
  Finding f = frame(e, kExpected);
  f.severity = Severity::kWarn;
  f.actual = "no /dev/nvidia* in this container";
  f.summary = fmt::format(
      "this container was given no GPU: its host has {} NVIDIA GPU{} on PCI, and /dev has no "
      "nvidia device",
      gpus.size(), gpus.size() == 1 ? "" : "s");
  f.evidence.push_back({"/dev", "no nvidia* device files"});
  f.evidence.push_back({nvml_path(in.facts.gpu), in.facts.gpu.nvml.error.value_or("no GPU")});
  f.fix = Fix{"docker run --gpus all ...", false};
  f.notes.push_back(
      "The runtime must be asked for GPUs: docker run --gpus all (or --gpus '\"device=0,1\"'), "
      "podman run --device nvidia.com/gpu=all (CDI), Kubernetes resources.limits "
      "nvidia.com/gpu: N, Apptainer --nv.");
  return f;
}

// What NVML said about a GPU that means it is gone or wedged, not merely a call it lacks.
std::optional<std::string> fatal_error(const gpu::Device& d) {
  for (const char* code :
       {"NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED", "NVML_ERROR_IRQ_ISSUE",
        "NVML_ERROR_CORRUPTED_INFOROM", "NVML_ERROR_TIMEOUT", "NVML_ERROR_UNKNOWN"})
    for (const auto& e : d.errors)
      if (has(e, code)) return e;
  return std::nullopt;
}

}  // namespace

std::vector<Finding> gpu_health(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(g)) return no_gpu(e, kExpected);
  const auto gpus = nvidia_on_pci(g);
  const auto nvidia = g.modules.find("nvidia");
  const bool module_unknown = nvidia == g.modules.end();
  const bool module_loaded = !module_unknown && nvidia->second;

  // The module first: without it nothing else can answer.
  if (!gpus.empty() && !module_unknown && !module_loaded && !g.driver.kernel_module_version)
    return {module_not_loaded(in, e, gpus)};

  // A container that was not given the GPUs its host has.
  if (in.in_container && !g.nvml.loaded && g.dev_nodes && gpu_nodes(*g.dev_nodes) == 0 &&
      !gpus.empty())
    return {no_device_nodes(in, e, gpus)};

  std::vector<Finding> out;
  // Each GPU bound to another driver, or to none. nouveau is gpu.nouveau's.
  if (module_loaded)
    for (const auto* d : gpus)
      if (d->driver != "nvidia" && d->driver != "nouveau") out.push_back(not_bound(in, e, *d));

  if (!g.nvml.loaded) {
    if (g.nvml_from_capture || module_unknown) {
      // A host tree without NVML's answer, or a host whose modules could not be read: nothing
      // says whether the GPUs answer.
      for (auto& f : without_nvml(e, g, "Whether every GPU answers", kExpected)) {
        f.actual = "unknown";
        out.push_back(std::move(f));
      }
      return out;
    }
    out.push_back(nvml_fails(in, e, gpus));
    return out;
  }

  // NVML answers: every GPU the driver has must be among its devices.
  std::vector<const inventory::PciGpu*> missing;
  int bound = 0;
  for (const auto* d : gpus) {
    if (d->driver != "nvidia") continue;
    ++bound;
    if (!d->nvml_index) missing.push_back(d);
  }
  if (in.in_container) {
    // A container sees its host's PCI bus but only the GPUs the runtime gave it: those are its
    // device files.
    const int given = g.dev_nodes ? gpu_nodes(*g.dev_nodes) : 0;
    if (given > 0 && g.nvml.devices.size() < static_cast<std::size_t>(given)) {
      Finding f = frame(e, kExpected);
      f.severity = not_met(e);
      f.actual = fmt::format("{} in NVML", g.nvml.devices.size());
      f.summary = fmt::format("NVML lists {} GPU{}, but this container has {} GPU device files",
                              g.nvml.devices.size(), g.nvml.devices.size() == 1 ? "" : "s", given);
      f.evidence.push_back({"/dev", fmt::format("{} nvidiaN device files", given)});
      f.evidence.push_back({nvml_path(g), fmt::format("{} devices", g.nvml.devices.size())});
      f.fix = Fix{kDmesg, false};
      out.push_back(std::move(f));
    }
  } else {
    for (const auto* d : missing) {
      Finding f = frame(e, kExpected);
      f.severity = not_met(e);
      f.actual = "missing from NVML";
      f.summary = fmt::format(
          "GPU {} is missing from NVML: {} bound to nvidia on PCI, {} in NVML (lost: Xid 79, "
          "\"fallen off the bus\", or failed to initialise)",
          d->address, bound, g.nvml.devices.size());
      f.evidence.push_back({fmt::format("/sys/bus/pci/devices/{}/driver", d->address), "nvidia"});
      f.evidence.push_back(
          {nvml_path(g), fmt::format("{} devices, none at {}", g.nvml.devices.size(), d->address)});
      f.fix = Fix{fmt::format("{}; nvidia-smi -r -i {}  # or reboot", kDmesg, d->address), false};
      f.notes.push_back(
          "Drain the node: a job placed on it fails or runs on fewer GPUs. The kernel log "
          "names the Xid (dltune doctor reads it).");
      out.push_back(std::move(f));
    }
  }
  for (const auto& n : g.nvml.devices) {
    const auto bad = fatal_error(n);
    if (!bad) continue;
    Finding f = frame(e, kExpected);
    f.severity = not_met(e);
    const bool lost = has(*bad, "NVML_ERROR_GPU_IS_LOST");
    f.actual = lost ? "lost" : "failing";
    f.summary = lost ? fmt::format("{} is lost: NVML says it fell off the bus", label(n))
                     : fmt::format("{} fails NVML's calls: {}", label(n), *bad);
    f.evidence.push_back({nvml_path(g), *bad});
    f.fix = Fix{fmt::format("{}; nvidia-smi -r -i {}  # or reboot", kDmesg,
                            n.pci_bus_id.value_or(std::to_string(n.index))),
                false};
    out.push_back(std::move(f));
  }
  if (!out.empty()) return out;

  Finding f = frame(e, kExpected);
  f.actual = fmt::format("{} answering NVML", g.nvml.devices.size());
  f.summary = gpus.empty()
                  ? fmt::format("NVML answers for {} GPU{} (none seen in PCI sysfs)",
                                g.nvml.devices.size(), g.nvml.devices.size() == 1 ? "" : "s")
              : in.in_container
                  ? fmt::format("NVML answers for the {} GPU{} of this container",
                                g.nvml.devices.size(), g.nvml.devices.size() == 1 ? "" : "s")
                  : fmt::format("{} NVIDIA GPU{} on PCI, all bound to nvidia and answering NVML",
                                bound, bound == 1 ? "" : "s");
  f.evidence.push_back({nvml_path(g), fmt::format("{} devices", g.nvml.devices.size())});
  return {std::move(f)};
}

}  // namespace dltune::audit

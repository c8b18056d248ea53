// GPU rules on NVIDIA's driver and NVML's per-GPU state: gpu.persistence, gpu.nouveau,
// gpu.driver_match, gpu.ecc and gpu.throttle. (gpu.driver_cuda: gpu_driver_cuda.cpp;
// gpu.pcie_link: gpu_link.cpp.)
#include <algorithm>

#include <fmt/format.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;

namespace {

// NVML reference, nvmlClocksEventReasons: the reasons that mean the GPU is held back by heat or
// by a power emergency (as opposed to idling, application clocks or its normal power limit).
constexpr std::uint64_t kSwPowerCap = 0x4;
constexpr std::uint64_t kHwSlowdown = 0x8;
constexpr std::uint64_t kSwThermalSlowdown = 0x20;
constexpr std::uint64_t kHwThermalSlowdown = 0x40;
constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
constexpr std::uint64_t kSlowdowns =
    kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;

template <class T>
std::string opt_count(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "?";
}

}  // namespace

std::vector<Finding> gpu_nouveau(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  const bool want_loaded = expected_bool(e).value_or(false);
  const std::string expected = want_loaded ? "loaded" : "not loaded";
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  Finding f = frame(e, expected);
  const auto it = g.modules.find("nouveau");
  if (it == g.modules.end()) {
    f.severity = Severity::kInfo;
    f.summary = "cannot tell whether nouveau is loaded: /proc/modules was not read";
    f.evidence.push_back({"/proc/modules", "not read"});
    return {std::move(f)};
  }
  const bool loaded = it->second;
  const auto& blacklist = in.facts.os.nouveau_blacklist;
  f.actual = loaded ? "loaded" : "not loaded";
  f.evidence.push_back({"/proc/modules", loaded ? "nouveau listed" : "nouveau not listed"});
  for (const auto& where : blacklist) {  // "path: line" (inventory/os.cpp)
    const auto colon = where.find(": ");
    if (colon == std::string::npos)
      f.evidence.push_back({where, "blacklist nouveau"});
    else
      f.evidence.push_back({where.substr(0, colon), where.substr(colon + 2)});
  }
  for (const auto& d : g.devices)
    if (d.vendor == "nvidia" && d.driver == "nouveau") {
      f.evidence.push_back({fmt::format("/sys/bus/pci/devices/{}/driver", d.address), "nouveau"});
      f.notes.push_back(
          fmt::format("{} is bound to nouveau, so the NVIDIA driver cannot use it.", label(g, d)));
    }
  if (loaded == want_loaded) {
    f.summary = fmt::format("nouveau is {}", f.actual);
    if (!blacklist.empty())
      f.notes.push_back(fmt::format("nouveau is blacklisted: {}.", fmt::join(blacklist, "; ")));
    return {std::move(f)};
  }
  f.severity = not_met(e);
  if (!loaded) {
    f.summary = "nouveau is not loaded, expected loaded";
    return {std::move(f)};
  }
  f.summary = "nouveau is loaded beside the NVIDIA driver";
  if (blacklist.empty()) {
    f.fix =
        Fix{"printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > "
            "/etc/modprobe.d/blacklist-nouveau.conf && update-initramfs -u && reboot",
            false};
    f.notes.push_back(
        "Nothing blacklists nouveau: no file in /etc/modprobe.d, "
        "/usr/lib/modprobe.d or /lib/modprobe.d, nor the kernel command line.");
  } else {
    f.fix = Fix{"update-initramfs -u && reboot", false};
    f.notes.push_back(fmt::format(
        "nouveau is blacklisted ({}) but loaded all the same: the initramfs still holds the "
        "old configuration, or the host has not rebooted since the blacklist was written.",
        fmt::join(blacklist, "; ")));
  }
  f.notes.push_back(
      "On RHEL-like systems rebuild the initramfs with dracut -f instead of "
      "update-initramfs -u.");
  host_only(f, in, "the host's kernel modules");
  return {std::move(f)};
}

std::vector<Finding> gpu_driver_match(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  const std::string expected = "kernel module and user library at the same version";
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  const auto& d = g.driver;
  Finding f = frame(e, expected);
  constexpr const char* kVersionFile = "/proc/driver/nvidia/version";
  const std::string library_path = !d.user_library_source             ? "libnvidia-ml.so.1"
                                   : *d.user_library_source == "nvml" ? nvml_path(g)
                                                                      : *d.user_library_source;
  f.evidence.push_back({kVersionFile, d.kernel_module_version.value_or("absent")});
  f.evidence.push_back({library_path, d.user_library_version.value_or("not found")});
  if (!d.kernel_module_version || !d.user_library_version) {
    f.severity = Severity::kInfo;
    f.summary = !d.kernel_module_version
                    ? "cannot compare the driver versions: the nvidia kernel module is not "
                      "loaded (no /proc/driver/nvidia/version)"
                    : "cannot compare the driver versions: no NVIDIA user library "
                      "(libnvidia-ml.so.1) found";
    return {std::move(f)};
  }
  f.actual = fmt::format("kernel module {}, user library {}", *d.kernel_module_version,
                         *d.user_library_version);
  if (*d.kernel_module_version == *d.user_library_version) {
    f.summary = fmt::format("kernel module and user library are both {}", *d.user_library_version);
    return {std::move(f)};
  }
  f.severity = not_met(e);
  f.summary = fmt::format("nvidia kernel module {} but user library {}", *d.kernel_module_version,
                          *d.user_library_version);
  f.fix = Fix{"reboot", false};
  f.notes.push_back(fmt::format(
      "This is what \"Failed to initialize NVML: Driver/library version mismatch\" means: the "
      "driver's user-space libraries were changed (to {}) but the running kernel module is "
      "still {}. nvidia-smi fails, and CUDA programs fail to start, until the module is "
      "replaced.",
      *d.user_library_version, *d.kernel_module_version));
  f.notes.push_back(
      "Without a reboot, when no process uses the GPUs (fuser -v /dev/nvidia*): stop "
      "nvidia-persistenced, then modprobe -r nvidia_uvm nvidia_drm nvidia_modeset nvidia && "
      "modprobe nvidia && modprobe nvidia_uvm.");
  if (in.in_container)
    f.notes.push_back(
        "In a container the library normally comes from the host (NVIDIA Container Toolkit). An "
        "image that ships its own libnvidia-ml.so.* brings this mismatch with it: remove the "
        "driver libraries from the image.");
  host_only(f, in, "the host's NVIDIA kernel module");
  return {std::move(f)};
}

// ECC counts, row remapping and page retirement of one GPU with ECC on, judged together
// (NVIDIA's "GPU Memory Error Management" in the GPU deployment guide: a pending remap or
// retirement needs a GPU reset, a failed remap needs service; uncorrectable errors since the
// driver loaded need the GPU drained and reset; an old uncorrectable error that a remap has
// handled is history).
static void judge_memory_health(const gpu::Device& d, const settings::ProfileEntry& e, Finding& f) {
  const auto who = label(d);
  const auto& c = d.ecc_errors;
  const auto& rr = d.row_remap;
  const auto& rp = d.retired_pages;
  const std::string where = d.pci_bus_id.value_or(std::to_string(d.index));
  if (rr)
    f.evidence.push_back(
        {"nvml", fmt::format("{}: remapped rows {} for corrected, {} for uncorrected errors; "
                             "pending {}, failure {}",
                             who, rr->corrected_rows, rr->uncorrected_rows,
                             rr->pending ? "yes" : "no", rr->failure ? "yes" : "no")});
  if (rp.multiple_single_bit || rp.double_bit)
    f.evidence.push_back(
        {"nvml", fmt::format("{}: retired pages {} for repeated corrected, {} for uncorrected "
                             "errors; pending {}",
                             who, opt_count(rp.multiple_single_bit), opt_count(rp.double_bit),
                             rp.pending ? (*rp.pending ? "yes" : "no") : "?")});
  const std::uint64_t vol = c.volatile_uncorrected.value_or(0);
  const std::uint64_t agg = c.aggregate_uncorrected.value_or(0);
  if (c.volatile_uncorrected || c.aggregate_uncorrected)
    f.actual = fmt::format("uncorrectable: volatile {}, aggregate {}", vol, agg);
  std::vector<std::string> critical, warning;
  if (rr && rr->failure) critical.push_back("a row remap failed");
  if (rr && rr->pending) critical.push_back("a row remap waits for a GPU reset");
  if (rp.pending == true) critical.push_back("a page retirement waits for a GPU reset");
  // An uncorrectable error since the driver loaded, or an old one that no remap took care of.
  const bool handled = rr && !rr->pending && !rr->failure && rr->uncorrected_rows > 0;
  if (vol > 0 || (agg > 0 && !handled))
    critical.insert(critical.begin(),
                    fmt::format("uncorrectable ECC errors (volatile {}, aggregate {})", vol, agg));
  else if (agg > 0)
    warning.push_back(fmt::format(
        "{} uncorrectable ECC error{} in its life, handled by {} remapped row{}", agg,
        agg == 1 ? "" : "s", rr->uncorrected_rows, rr->uncorrected_rows == 1 ? "" : "s"));
  if (rr && rr->corrected_rows > 0)
    warning.push_back(fmt::format("{} row{} remapped after repeated corrected errors",
                                  rr->corrected_rows, rr->corrected_rows == 1 ? "" : "s"));
  if (rp.multiple_single_bit.value_or(0) > 0)
    warning.push_back(fmt::format("{} page{} retired after repeated corrected errors",
                                  *rp.multiple_single_bit,
                                  *rp.multiple_single_bit == 1 ? "" : "s"));
  if (rp.double_bit.value_or(0) > 0 && rp.pending != true)
    warning.push_back(fmt::format("{} page{} retired after uncorrectable errors", *rp.double_bit,
                                  *rp.double_bit == 1 ? "" : "s"));
  if (!critical.empty()) {
    f.severity = not_met(e);
    f.summary = fmt::format("{}: {}", who, fmt::join(critical, "; "));
    if (rr && rr->failure) {
      f.fix = Fix{fmt::format("nvidia-smi -q -d ROW_REMAPPER -i {}", where), false};
      f.notes.push_back(
          "A failed row remap means the GPU has no spare row left for a bad one: the bad memory "
          "stays in use. Drain the node and have the GPU serviced (RMA).");
    } else if ((rr && rr->pending) || rp.pending == true) {
      f.fix = Fix{fmt::format("nvidia-smi -r -i {}", where), false};
      f.notes.push_back(
          "The remap (or retirement) takes effect at the next GPU reset: stop the jobs on this "
          "GPU, reset it with nvidia-smi -r (or reboot), and check again. Until then the driver "
          "keeps the bad memory out of new allocations only where it can.");
    } else {
      f.fix = Fix{fmt::format("nvidia-smi -q -d ECC,PAGE_RETIREMENT -i {}", where), false};
    }
    f.notes.push_back(
        "Drain the node first (Slurm: scontrol update nodename=$(hostname -s) state=drain "
        "reason=ecc; Kubernetes: kubectl drain), so that no job runs on a GPU that corrupts "
        "memory. RMA the GPU if uncorrectable errors come back after a reset.");
    f.notes.push_back(
        "Volatile counts start again at each driver load; aggregate counts last across reboots. "
        "On A100 and newer GPUs row remapping replaced page retirement: also read nvidia-smi -q "
        "-d ROW_REMAPPER.");
    if (!warning.empty()) f.notes.push_back(fmt::format("Also: {}.", fmt::join(warning, "; ")));
    return;
  }
  if (!c.volatile_uncorrected && !c.aggregate_uncorrected && !rr && !rp.multiple_single_bit) {
    f.severity = Severity::kInfo;
    f.summary = fmt::format("{}: NVML did not report the ECC error counts", who);
    return;
  }
  if (!warning.empty()) {
    f.severity = std::min(Severity::kWarn, not_met(e));
    f.summary = fmt::format("{}: {}", who, fmt::join(warning, "; "));
    f.fix =
        Fix{fmt::format("nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i {}", where), false};
    f.notes.push_back(
        "The GPU's memory has rows (or pages) that failed more than once: the driver replaced "
        "them, and the GPU is usable. Watch the counts (dltune check in the node's health "
        "check, Xid 63/64/92 in dltune doctor): when they keep growing, or a remap fails, have "
        "it serviced.");
    return;
  }
  f.summary = fmt::format("{}: no uncorrectable ECC errors", who);
  if (rr) f.summary += ", no row remap pending";
  if (c.aggregate_corrected.value_or(0) > 0)
    f.notes.push_back(
        fmt::format("{} corrected ECC error{} over the GPU's life: corrected "
                    "errors are harmless unless they climb quickly.",
                    *c.aggregate_corrected, *c.aggregate_corrected == 1 ? "" : "s"));
}

std::vector<Finding> gpu_ecc(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  const std::string expected = "no uncorrectable ECC errors";
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  if (!g.nvml.loaded) return without_nvml(e, g, "ECC errors", expected);
  if (g.nvml.devices.empty()) return nvml_lists_none(e, g, expected);
  std::vector<Finding> out;
  for (const auto& d : g.nvml.devices) {
    if (const auto why =
            unreadable(d, {"nvmlDeviceGetEccMode", "nvmlDeviceGetTotalEccErrors",
                           "nvmlDeviceGetRemappedRows", "nvmlDeviceGetRetiredPages"})) {
      out.push_back(unknown_for_gpu(e, g, d, "its ECC state", expected, *why));
      continue;
    }
    Finding f = frame(e, expected);
    const auto who = label(d);
    if (!d.ecc_enabled) {
      // nvmlDeviceGetEccMode is NOT_SUPPORTED on GPUs without ECC memory (GeForce, most RTX).
      f.applicable = false;
      f.summary = fmt::format("{}: no ECC mode reported (a GPU without ECC memory)", who);
      f.evidence.push_back({nvml_path(g), fmt::format("{}: ECC mode not supported", who)});
      out.push_back(std::move(f));
      continue;
    }
    if (!*d.ecc_enabled) {
      f.severity = Severity::kInfo;
      f.actual = "ECC off";
      f.summary = fmt::format("{}: ECC is off, so memory errors are not even detected", who);
      f.evidence.push_back({nvml_path(g), fmt::format("{}: ECC mode off", who)});
      f.notes.push_back(
          d.ecc_pending_enabled.value_or(false)
              ? "ECC is set to be on after the next reboot or GPU reset."
              : fmt::format("Turn it on with nvidia-smi -i {} -e 1, then reboot (it costs a few "
                            "percent of memory and bandwidth).",
                            d.index));
      out.push_back(std::move(f));
      continue;
    }
    const auto& c = d.ecc_errors;
    f.evidence.push_back(
        {nvml_path(g),
         fmt::format("{}: ECC on; uncorrected volatile {}, aggregate {}; corrected volatile {}, "
                     "aggregate {}",
                     who, opt_count(c.volatile_uncorrected), opt_count(c.aggregate_uncorrected),
                     opt_count(c.volatile_corrected), opt_count(c.aggregate_corrected))});
    judge_memory_health(d, e, f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> gpu_throttle(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  const std::string expected = "no thermal or power-brake slowdown";
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  if (!g.nvml.loaded) return without_nvml(e, g, "clock slowdowns", expected);
  if (g.nvml.devices.empty()) return nvml_lists_none(e, g, expected);
  std::vector<Finding> out;
  for (const auto& d : g.nvml.devices) {
    if (const auto why = unreadable(d, {"nvmlDeviceGetCurrentClocksEventReasons",
                                        "nvmlDeviceGetCurrentClocksThrottleReasons"})) {
      out.push_back(unknown_for_gpu(e, g, d, "its clock event reasons", expected, *why));
      continue;
    }
    Finding f = frame(e, expected);
    const auto who = label(d);
    if (!d.clock_event_reasons) {
      f.severity = Severity::kInfo;
      f.summary = fmt::format("{}: NVML did not report clock event reasons", who);
      f.evidence.push_back(
          {nvml_path(g), fmt::format("{}: clock event reasons not reported", who)});
      out.push_back(std::move(f));
      continue;
    }
    const std::uint64_t mask = *d.clock_event_reasons;
    const auto names = gpu::clock_event_reason_names(mask);
    f.actual = names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
    std::string state = fmt::format("{}: clock event reasons {:#x} ({})", who, mask, f.actual);
    if (d.temperature_celsius) state += fmt::format("; {} °C", *d.temperature_celsius);
    if (d.power_watts && d.power_limit_watts)
      state += fmt::format("; {:.0f} W of {:.0f} W", *d.power_watts, *d.power_limit_watts);
    f.evidence.push_back({nvml_path(g), state});
    if (mask & kSlowdowns) {
      const auto slow = gpu::clock_event_reason_names(mask & kSlowdowns);
      f.severity = not_met(e);
      f.summary = fmt::format("{} is slowed down now: {}", who, fmt::join(slow, ", "));
      f.fix = Fix{fmt::format("nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i {}",
                              d.pci_bus_id.value_or(std::to_string(d.index))),
                  false};
      if (mask & (kSwThermalSlowdown | kHwThermalSlowdown))
        f.notes.push_back(
            "Thermal slowdown: the GPU is too hot. Check its fans or the chassis airflow, the "
            "inlet temperature and the heatsink's contact.");
      if (mask & kHwSlowdown)
        f.notes.push_back(
            "HwSlowdown: the board asserted a slowdown (overheating, or a power "
            "supply that cannot deliver).");
      if (mask & kHwPowerBrakeSlowdown)
        f.notes.push_back(
            "HwPowerBrakeSlowdown: the system asserted the power brake (a power "
            "supply failed or lost redundancy).");
    } else if (mask & kSwPowerCap) {
      f.severity = std::min(Severity::kInfo, not_met(e));
      f.summary = fmt::format("{} is at its power limit (SwPowerCap)", who);
      f.notes.push_back(
          "Normal for a busy GPU: it runs as fast as its power limit allows. A limit set below "
          "the board's default (nvidia-smi -q -d POWER) costs speed.");
    } else {
      f.summary = fmt::format("{}: no slowdown ({})", who, f.actual);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::audit

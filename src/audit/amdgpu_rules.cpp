// gpu.ecc and gpu.power_limit for AMD GPUs, from amdgpu's sysfs (gpu/amdgpu_sysfs.hpp): the same
// questions as NVML's rules ask of NVIDIA's GPUs, with AMD's tools in the fixes (rocm-smi, which
// ROCm installs; amd-smi answers the same on ROCm 6). A host with both vendors gets both.
#include <fmt/format.h>

#include <algorithm>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;

namespace {

bool has_amd_gpu(const inventory::GpuFacts& g) {
  return g.amdgpu.loaded && !g.amdgpu.devices.empty();
}

std::string sysfs(const gpu::Device& d, std::string_view file) {
  return fmt::format("/sys/bus/pci/devices/{}/{}", d.pci_bus_id.value_or("?"), file);
}

// AMD's findings after NVIDIA's: alone when the host has no NVIDIA GPU (NVIDIA's rule then says
// only "no GPU"), none when the host has no AMD GPU.
std::vector<Finding> with_amd(std::vector<Finding> nvidia, std::vector<Finding> amd,
                              const AuditInput& in) {
  if (amd.empty()) return nvidia;
  if (!has_nvidia_gpu(in.facts.gpu)) return amd;
  nvidia.insert(nvidia.end(), std::make_move_iterator(amd.begin()),
                std::make_move_iterator(amd.end()));
  return nvidia;
}

std::vector<Finding> amdgpu_ecc(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  std::vector<Finding> out;
  if (!has_amd_gpu(g) || expected_bool(e) == false) return out;
  for (const auto& d : g.amdgpu.devices) {
    Finding f = frame(e, "no uncorrectable ECC errors");
    const auto who = label(d);
    const auto& c = d.ecc_errors;
    const auto& p = d.retired_pages;
    if (!d.ecc_enabled) {
      // No RAS on the memory controller: a Radeon, or RAS turned off (amdgpu.ras_enable=0).
      f.applicable = false;
      f.summary = fmt::format("{}: amdgpu reports no memory error counts (no RAS)", who);
      f.evidence.push_back({sysfs(d, "ras/umc_err_count"), "absent"});
      out.push_back(std::move(f));
      continue;
    }
    f.evidence.push_back(
        {sysfs(d, "ras/umc_err_count"),
         fmt::format("{}: uncorrectable {}, correctable {} since the driver loaded", who,
                     c.volatile_uncorrected ? std::to_string(*c.volatile_uncorrected) : "?",
                     c.volatile_corrected ? std::to_string(*c.volatile_corrected) : "?")});
    const std::uint32_t retired = p.double_bit.value_or(0);
    const std::uint32_t failed = p.failed.value_or(0);
    if (p.double_bit)
      f.evidence.push_back(
          {sysfs(d, "ras/gpu_vram_bad_pages"),
           fmt::format("{}: {} bad page{} retired{}{}", who, retired, retired == 1 ? "" : "s",
                       p.pending == true ? ", some pending a reset" : "",
                       failed > 0 ? fmt::format(", {} FAILED", failed) : "")});
    const std::uint64_t ue = c.volatile_uncorrected.value_or(0);
    f.actual = fmt::format("uncorrectable: {}", ue);
    std::vector<std::string> critical;
    if (ue > 0)
      critical.push_back(fmt::format("{} uncorrectable ECC error{}", ue, ue == 1 ? "" : "s"));
    if (p.pending == true) critical.push_back("a bad page waits for a GPU reset to be retired");
    if (failed > 0)
      critical.push_back(
          fmt::format("{} bad page{} could not be retired", failed, failed == 1 ? "" : "s"));
    const std::string dev = d.pci_bus_id.value_or(std::to_string(d.index));
    if (!critical.empty()) {
      f.severity = not_met(e);
      f.summary = fmt::format("{}: {}", who, fmt::join(critical, "; "));
      if (p.pending == true && failed == 0) {
        f.fix = Fix{fmt::format("rocm-smi -d {} --gpureset", d.index), false};
        f.notes.push_back(
            "amdgpu retires a page that had an uncorrectable error at the next GPU reset: stop "
            "the jobs on this GPU, reset it (or reboot), and check again.");
      } else {
        f.fix =
            Fix{fmt::format("rocm-smi -d {} --showrasinfo umc --showretiredpages", d.index), false};
      }
      if (failed > 0)
        f.notes.push_back(
            "A page the driver could not retire stays in use although its memory is bad (the "
            "reserved-page table is full or the EEPROM failed): have the GPU serviced.");
      f.notes.push_back(
          "Drain the node first (Slurm: scontrol update nodename=$(hostname -s) state=drain "
          "reason=ecc; Kubernetes: kubectl drain), so that no job runs on a GPU that corrupts "
          "memory. RMA the GPU if uncorrectable errors come back after a reset.");
      f.notes.push_back(fmt::format(
          "The counts start again at each driver load; the bad pages last (the GPU's EEPROM keeps "
          "them). rocm-smi numbers GPUs in PCI order as dltune does; {} is at {}.",
          who, dev));
    } else if (retired > 0) {
      f.severity = std::min(Severity::kWarn, not_met(e));
      f.summary = fmt::format("{}: {} page{} retired after uncorrectable errors", who, retired,
                              retired == 1 ? "" : "s");
      f.fix = Fix{fmt::format("rocm-smi -d {} --showretiredpages", d.index), false};
      f.notes.push_back(
          "The GPU's memory had errors the driver handled by retiring pages: the GPU is usable. "
          "Watch the count (dltune check in the node's health check): when it keeps growing, "
          "have the GPU serviced.");
    } else {
      f.summary = fmt::format("{}: no uncorrectable ECC errors", who);
    }
    if (c.volatile_corrected.value_or(0) > 0)
      f.notes.push_back(fmt::format(
          "{} corrected error{} since the driver loaded: harmless unless they climb quickly "
          "(serve's dltune_gpu_ecc_errors_total and its alert watch the rate).",
          *c.volatile_corrected, *c.volatile_corrected == 1 ? "" : "s"));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> amdgpu_power_limit(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  std::vector<Finding> out;
  if (!has_amd_gpu(g) || expected_bool(e) == false) return out;
  for (const auto& d : g.amdgpu.devices) {
    Finding f = frame(e, "the board's default power limit and application clocks");
    const auto who = label(d);
    const auto& cap = d.power_management_limit_watts;
    const auto& def = d.power_default_limit_watts;
    std::string state = fmt::format("{}: power cap ", who);
    state += cap ? fmt::format("{:.0f} W", *cap) : "?";
    if (def) state += fmt::format(", {:.0f} W default", *def);
    if (d.power_min_limit_watts && d.power_max_limit_watts)
      state += fmt::format(" (settable {:.0f}-{:.0f} W)", *d.power_min_limit_watts,
                           *d.power_max_limit_watts);
    f.evidence.push_back({sysfs(d, "hwmon/*/power1_cap"), state});
    if (!cap || !def) {
      f.severity = Severity::kInfo;
      f.summary = fmt::format("{}: amdgpu reports no power cap{}", who,
                              cap ? " default (power1_cap_default, Linux 5.17 and newer)" : "");
      out.push_back(std::move(f));
      continue;
    }
    f.actual = fmt::format("{:.0f} W", *cap);
    if (*cap < *def * kPowerTolerance) {
      f.severity = not_met(e);
      f.summary = fmt::format("{}: power capped at {:.0f} W, below its default {:.0f} W ({:.0f}%)",
                              who, *cap, *def, 100.0 * *cap / *def);
      f.fix = Fix{fmt::format("rocm-smi -d {} --resetpoweroverdrive", d.index), false};
      f.notes.push_back(
          "The cap was set below the default (rocm-smi --setpoweroverdrive, amd-smi set "
          "--power-cap, or a write to power1_cap by a boot script). A GPU at its cap lowers its "
          "clocks, so every step takes longer. Raise it back unless the rack's power budget "
          "needs the cap; the setting lasts until the next reboot.");
    } else {
      f.summary = fmt::format("{}: power cap {:.0f} W, the default", who, *cap);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Finding> gpu_ecc_any_vendor(const AuditInput& in, const settings::ProfileEntry& e) {
  return with_amd(gpu_ecc(in, e), amdgpu_ecc(in, e), in);
}

std::vector<Finding> gpu_power_limit_any_vendor(const AuditInput& in,
                                                const settings::ProfileEntry& e) {
  return with_amd(gpu_power_limit(in, e), amdgpu_power_limit(in, e), in);
}

}  // namespace dltune::audit

// GPU rules on how a GPU is configured, from NVML: gpu.power_limit (a power cap or application
// clocks below the board's defaults), gpu.mig (MIG mode, now and after the next reset) and
// gpu.nvlink (links down).
#include <fmt/format.h>

#include <algorithm>

#include "audit/rules.hpp"
#include "gpu/report_text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;

namespace {

std::string where(const gpu::Device& d) {
  return d.pci_bus_id.value_or(std::to_string(d.index));
}

}  // namespace

std::vector<Finding> gpu_power_limit(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  const std::string expected = "the board's default power limit and application clocks";
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  if (!g.nvml.loaded) return without_nvml(e, g, "power limits", expected);
  if (g.nvml.devices.empty()) return nvml_lists_none(e, g, expected);
  std::vector<Finding> out;
  for (const auto& d : g.nvml.devices) {
    Finding f = frame(e, expected);
    const auto who = label(d);
    const auto& enforced = d.power_limit_watts;
    const auto& def = d.power_default_limit_watts;
    std::string state = fmt::format("{}: power limit ", who);
    state += enforced ? fmt::format("{:.0f} W enforced", *enforced) : "? enforced";
    if (d.power_management_limit_watts)
      state += fmt::format(", {:.0f} W set", *d.power_management_limit_watts);
    if (def) state += fmt::format(", {:.0f} W default", *def);
    if (d.power_min_limit_watts && d.power_max_limit_watts)
      state += fmt::format(" (settable {:.0f}-{:.0f} W)", *d.power_min_limit_watts,
                           *d.power_max_limit_watts);
    f.evidence.push_back({nvml_path(g), state});
    if (d.app_sm_clock_mhz && d.default_app_sm_clock_mhz)
      f.evidence.push_back(
          {nvml_path(g),
           fmt::format("{}: application clocks SM {} MHz (default {}), memory {} MHz (default {})",
                       who, *d.app_sm_clock_mhz, *d.default_app_sm_clock_mhz,
                       d.app_memory_clock_mhz ? std::to_string(*d.app_memory_clock_mhz) : "?",
                       d.default_app_memory_clock_mhz
                           ? std::to_string(*d.default_app_memory_clock_mhz)
                           : "?")});
    std::vector<std::string> problems;
    std::vector<std::string> fixes;
    const bool capped = enforced && def && *enforced < *def * kPowerTolerance;
    if (capped) {
      problems.push_back(
          fmt::format("power capped at {:.0f} W, below its default {:.0f} W ({:.0f}%)", *enforced,
                      *def, 100.0 * *enforced / *def));
      const bool set_by_admin = d.power_management_limit_watts &&
                                *d.power_management_limit_watts < *def * kPowerTolerance;
      if (set_by_admin) {
        fixes.push_back(fmt::format("nvidia-smi -i {} -pl {:.0f}", where(d), *def));
        f.notes.push_back(
            "The limit was set below the default (nvidia-smi -pl, a DCGM or power-capping "
            "policy, or a boot script). A GPU at its power limit lowers its clocks (clock event "
            "SwPowerCap), so every step takes longer. Raise it back unless the rack's power "
            "budget needs the cap; nvidia-smi -pl lasts until the next reboot.");
      } else {
        f.notes.push_back(
            "The limit set is the default, yet a lower one is enforced: the platform caps the "
            "board (a chassis or rack power budget, or the system's power brake). Ask the "
            "platform's power management (BMC) why.");
      }
    }
    const bool clocks_low = d.app_sm_clock_mhz && d.default_app_sm_clock_mhz &&
                            *d.app_sm_clock_mhz < *d.default_app_sm_clock_mhz;
    if (clocks_low) {
      problems.push_back(fmt::format("application clocks lowered to SM {} MHz (default {} MHz)",
                                     *d.app_sm_clock_mhz, *d.default_app_sm_clock_mhz));
      fixes.push_back(fmt::format("nvidia-smi -i {} -rac", where(d)));
      f.notes.push_back(
          "Application clocks are the clocks the GPU runs a kernel at; set below the default "
          "(nvidia-smi -ac) they slow every kernel. nvidia-smi -rac resets them.");
    }
    if (!enforced || !def) {
      if (problems.empty()) {
        f.severity = Severity::kInfo;
        f.summary = fmt::format("{}: NVML did not report the power limit and its default", who);
        out.push_back(std::move(f));
        continue;
      }
    } else {
      f.actual = fmt::format("{:.0f} W of {:.0f} W", *enforced, *def);
    }
    if (problems.empty()) {
      f.summary = fmt::format("{}: at its default power limit {:.0f} W", who, *def);
      out.push_back(std::move(f));
      continue;
    }
    f.severity = not_met(e);
    f.summary = fmt::format("{}: {}", who, fmt::join(problems, "; "));
    if (!fixes.empty()) f.fix = Fix{fmt::format("{}", fmt::join(fixes, " && ")), false};
    host_only(f, in, "the GPU's power limit and clocks");
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> gpu_mig(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  const auto want = expected_bool(e).value_or(false);
  const std::string expected = want ? "MIG on" : "MIG off (whole GPUs)";
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  if (!g.nvml.loaded) return without_nvml(e, g, "MIG mode", expected);
  if (g.nvml.devices.empty()) return nvml_lists_none(e, g, expected);
  std::vector<Finding> out;
  for (const auto& d : g.nvml.devices) {
    Finding f = frame(e, expected);
    const auto who = label(d);
    if (!d.mig_enabled) {
      f.applicable = false;
      f.summary = fmt::format("{}: no MIG mode reported (a GPU without MIG)", who);
      f.evidence.push_back({nvml_path(g), fmt::format("{}: MIG not supported", who)});
      out.push_back(std::move(f));
      continue;
    }
    const bool on = *d.mig_enabled;
    const bool pending = d.mig_pending_enabled.value_or(on);
    f.actual = on ? "MIG on" : "MIG off";
    std::string state =
        fmt::format("{}: MIG {}, {} after a reset", who, on ? "on" : "off", pending ? "on" : "off");
    if (on) {
      std::vector<std::string> devs;
      for (const auto& m : d.mig_devices)
        devs.push_back(fmt::format("{} ({})", m.name.value_or("?"), m.uuid.value_or("no UUID")));
      state += devs.empty() ? "; no MIG device"
                            : fmt::format("; {} MIG device{}: {}", devs.size(),
                                          devs.size() == 1 ? "" : "s", fmt::join(devs, ", "));
    }
    f.evidence.push_back({nvml_path(g), state});
    std::vector<std::string> problems;
    if (pending != on)
      problems.push_back(
          fmt::format("MIG mode turns {} at the next GPU reset", pending ? "on" : "off"));
    if (on != want)
      problems.push_back(on ? "MIG is on, so jobs see slices of the GPU, not the GPU"
                            : "MIG is off");
    if (on && d.mig_devices.empty())
      problems.push_back("MIG is on with no MIG device made, so CUDA sees no device on it");
    if (problems.empty()) {
      f.summary = fmt::format("{}: {}", who, f.actual);
      out.push_back(std::move(f));
      continue;
    }
    f.severity = not_met(e);
    f.summary = fmt::format("{}: {}", who, fmt::join(problems, "; "));
    if (pending != on)
      f.notes.push_back(
          "A MIG mode change waits for a GPU reset: stop the GPU's processes and run nvidia-smi "
          "-r -i on it (or reboot). Until then the GPU runs in its old mode.");
    if (on && !want) {
      f.fix = Fix{fmt::format("nvidia-smi -i {} -mig 0 && nvidia-smi -r -i {}", where(d), where(d)),
                  false};
      f.notes.push_back(
          "In MIG mode each process sees one MIG device, a fraction of the GPU's SMs and "
          "memory; NCCL cannot run between MIG devices, so data-parallel training across them "
          "does not work. Keep MIG for inference or small jobs, and whole GPUs for training.");
    } else if (!on && want) {
      f.fix = Fix{fmt::format("nvidia-smi -i {} -mig 1 && nvidia-smi -r -i {}", where(d), where(d)),
                  false};
    } else if (on && d.mig_devices.empty()) {
      f.fix = Fix{fmt::format("nvidia-smi mig -i {} -lgip", where(d)), false};
      f.notes.push_back(
          "Create GPU and compute instances (nvidia-smi mig -cgi PROFILES -C) or turn MIG off.");
    }
    host_only(f, in, "the GPU's MIG mode");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::audit

namespace dltune::audit {

// gpu.nvlink: every GPU's NVLinks up as on its peers (the GPUs of the same model), and not all
// down on a board that has them. The error counters are evidence.
std::vector<Finding> gpu_nvlink(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  const std::string expected = "every NVLink up, as on its peers";
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  if (!g.nvml.loaded) return without_nvml(e, g, "NVLinks", expected);
  if (g.nvml.devices.empty()) return nvml_lists_none(e, g, expected);
  auto active_of = [](const gpu::Device& d) {
    unsigned n = 0;
    for (const auto& l : d.nvlinks) n += l.active ? 1 : 0;
    return n;
  };
  bool any_links = false, any_active = false;
  for (const auto& d : g.nvml.devices) {
    any_links = any_links || !d.nvlinks.empty();
    any_active = any_active || active_of(d) > 0;
  }
  if (!any_links) {
    Finding f = frame(e, expected);
    f.applicable = false;
    f.summary = "no NVLink on these GPUs (PCIe only)";
    f.evidence.push_back({nvml_path(g), "nvmlDeviceGetNvLinkState: no link on any GPU"});
    return {std::move(f)};
  }
  std::vector<Finding> out;
  for (const auto& d : g.nvml.devices) {
    if (d.nvlinks.empty()) continue;
    Finding f = frame(e, expected);
    const auto who = label(d);
    const unsigned active = active_of(d);
    unsigned peers_best = 0;
    std::size_t peers = 0;
    for (const auto& p : g.nvml.devices)
      if (p.index != d.index && p.name == d.name && !p.nvlinks.empty()) {
        ++peers;
        peers_best = std::max(peers_best, active_of(p));
      }
    f.actual = fmt::format("{} of {} up", active, d.nvlinks.size());
    f.evidence.push_back({nvml_path(g), fmt::format("{}: NVLink {}", who, gpu::nvlink_text(d))});
    std::uint64_t replay = 0, recovery = 0, crc = 0;
    for (const auto& l : d.nvlinks) {
      replay += l.replay_errors.value_or(0);
      recovery += l.recovery_errors.value_or(0);
      crc += l.crc_flit_errors.value_or(0) + l.crc_data_errors.value_or(0);
    }
    if (replay + recovery + crc > 0)
      f.notes.push_back(fmt::format(
          "Since the driver loaded its links counted {} replay, {} recovery and {} CRC errors. "
          "A few are normal; a count that climbs while jobs run (nvidia-smi nvlink -e -i {}) is "
          "a link going bad.",
          replay, recovery, crc, where(d)));
    std::vector<std::string> down;
    for (const auto& l : d.nvlinks)
      if (!l.active) down.push_back(std::to_string(l.link));
    if (!any_active) {
      f.severity = not_met(e);
      f.summary = fmt::format("{}: none of its {} NVLinks is up, on no GPU of this host", who,
                              d.nvlinks.size());
      f.fix = Fix{"systemctl status nvidia-fabricmanager", false};
      f.notes.push_back(
          "On a board whose GPUs meet through NVSwitches (HGX, DGX), the links come up only "
          "when nvidia-fabricmanager runs, at the driver's version; without it CUDA fails to "
          "initialise (error 802, system not yet initialized). Elsewhere, check the NVLink "
          "bridges.");
    } else if (peers > 0 && active < peers_best) {
      f.severity = not_met(e);
      f.summary = fmt::format("{}: NVLink {} down, while its peers have {} links up", who,
                              fmt::join(down, ", "), peers_best);
      f.fix = Fix{fmt::format("nvidia-smi nvlink -s -i {}", where(d)), false};
      f.notes.push_back(
          "A GPU with fewer links has less bandwidth to its peers, and every all-reduce of a "
          "data-parallel job waits for the slowest GPU. Reset the GPU (nvidia-smi -r) or reboot; "
          "a link that stays down needs the board serviced.");
    } else {
      f.summary = fmt::format("{}: {} NVLinks up", who, active);
      if (!down.empty())
        f.notes.push_back(fmt::format("NVLink {} down, as on its peers.", fmt::join(down, ", ")));
    }
    host_only(f, in, "the GPUs' NVLinks");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::audit

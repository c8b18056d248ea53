#include "gpu/report_text.hpp"

#include <set>

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::gpu {

namespace {

std::string on_off(bool v) {
  return v ? "on" : "off";
}

template <class T>
std::string count(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : "?";
}

}  // namespace

std::string nvlink_text(const Device& d) {
  std::size_t active = 0;
  std::vector<std::string> down;
  std::set<std::uint32_t> versions;
  std::set<std::string> remotes;
  std::uint64_t replay = 0, recovery = 0, crc = 0;
  bool counted = false;
  for (const auto& l : d.nvlinks) {
    if (l.active)
      ++active;
    else
      down.push_back(std::to_string(l.link));
    if (l.version) versions.insert(*l.version);
    if (l.remote_type) remotes.insert(*l.remote_type == "switch" ? "NVSwitch" : *l.remote_type);
    counted = counted || l.replay_errors || l.recovery_errors || l.crc_flit_errors;
    replay += l.replay_errors.value_or(0);
    recovery += l.recovery_errors.value_or(0);
    crc += l.crc_flit_errors.value_or(0) + l.crc_data_errors.value_or(0);
  }
  std::string t = active == d.nvlinks.size()
                      ? fmt::format("{} link{} active", active, active == 1 ? "" : "s")
                      : fmt::format("{} of {} links active (down: {})", active, d.nvlinks.size(),
                                    text::join(down, ", "));
  if (versions.size() == 1) t += fmt::format(", version {}", *versions.begin());
  if (!remotes.empty()) {
    std::vector<std::string> r(remotes.begin(), remotes.end());
    t += fmt::format(", to {}", text::join(r, " and "));
  }
  if (counted) t += fmt::format("; errors: {} replay, {} recovery, {} CRC", replay, recovery, crc);
  return t;
}

std::vector<std::string> topology_matrix(const Report& r) {
  if (r.topology.empty() || r.devices.size() < 2) return {};
  std::vector<std::string> rows;
  std::string head = fmt::format("{:<6}", "");
  for (const auto& d : r.devices) head += fmt::format(" {:>5}", fmt::format("GPU{}", d.index));
  rows.push_back(head);
  for (const auto& a : r.devices) {
    std::string row = fmt::format("{:<6}", fmt::format("GPU{}", a.index));
    for (const auto& b : r.devices) {
      std::string cell = "X";
      if (a.index != b.index) {
        cell = "?";
        for (const auto& p : r.topology)
          if ((p.a == a.index && p.b == b.index) || (p.a == b.index && p.b == a.index))
            cell = path_name(p);
      }
      row += fmt::format(" {:>5}", cell);
    }
    rows.push_back(row);
  }
  return rows;
}

std::string pcie_text(std::optional<int> generation, std::optional<int> width,
                      std::optional<int> max_generation, std::optional<int> max_width) {
  auto part = [](std::optional<int> gen, std::optional<int> w) {
    std::string s = gen ? fmt::format("Gen{}", *gen) : "";
    if (w) s += fmt::format("{}x{}", s.empty() ? "" : " ", *w);
    return s;
  };
  std::string cur = part(generation, width);
  const std::string max = part(max_generation, max_width);
  if (!max.empty()) cur += fmt::format("{}(max {})", cur.empty() ? "" : " ", max);
  return cur;
}

void add_device_rows(text::Section& s, const Device& d, int indent, bool with_pcie) {
  if (d.uuid) s.add("UUID", *d.uuid, indent);
  if (with_pcie) {
    auto i = [](const std::optional<std::uint32_t>& v) -> std::optional<int> {
      if (!v) return std::nullopt;
      return static_cast<int>(*v);
    };
    const auto link = pcie_text(i(d.pcie_generation), i(d.pcie_width), i(d.pcie_max_generation),
                                i(d.pcie_max_width));
    if (!link.empty()) s.add("PCIe link", link + " (NVML)", indent);
  }
  if (d.persistence_mode) s.add("Persistence mode", on_off(*d.persistence_mode), indent);
  if (d.ecc_enabled) {
    std::string ecc = on_off(*d.ecc_enabled);
    if (d.ecc_pending_enabled && *d.ecc_pending_enabled != *d.ecc_enabled)
      ecc += fmt::format(" ({} after reboot)", on_off(*d.ecc_pending_enabled));
    const auto& e = d.ecc_errors;
    if (e.aggregate_corrected || e.aggregate_uncorrected)
      ecc += fmt::format(", errors corrected/uncorrected: {}/{} since boot, {}/{} lifetime",
                         count(e.volatile_corrected), count(e.volatile_uncorrected),
                         count(e.aggregate_corrected), count(e.aggregate_uncorrected));
    else if (e.volatile_corrected || e.volatile_uncorrected)  // amdgpu keeps no lifetime count
      ecc += fmt::format(", errors corrected/uncorrected: {}/{} since the driver loaded",
                         count(e.volatile_corrected), count(e.volatile_uncorrected));
    s.add("ECC", ecc, indent);
  }
  if (const auto& rr = d.row_remap) {
    std::string t =
        fmt::format("{} row{} for corrected, {} for uncorrected errors", rr->corrected_rows,
                    rr->corrected_rows == 1 ? "" : "s", rr->uncorrected_rows);
    if (rr->pending) t += "; a remap waits for a GPU reset";
    if (rr->failure) t += "; a remap FAILED";
    s.add("Remapped rows", t, indent);
  }
  if (const auto& p = d.retired_pages; p.multiple_single_bit || p.double_bit) {
    // amdgpu retires pages only after uncorrectable errors: no count for the other cause.
    std::string t = p.multiple_single_bit
                        ? fmt::format("{} for repeated corrected, {} for uncorrected errors",
                                      count(p.multiple_single_bit), count(p.double_bit))
                        : fmt::format("{} after uncorrectable errors", count(p.double_bit));
    if (p.pending == true) t += "; retirement waits for a GPU reset";
    if (p.failed.value_or(0) > 0) t += fmt::format("; {} could NOT be retired", *p.failed);
    s.add("Retired pages", t, indent);
  }
  if (d.memory_total_bytes) {
    std::string m = text::human_bytes(*d.memory_total_bytes);
    if (d.memory_used_bytes)
      m += fmt::format(" ({} used)", text::human_bytes(*d.memory_used_bytes));
    s.add("Memory", m, indent);
  }
  std::vector<std::string> clocks;
  auto clock = [&](const char* what, const std::optional<std::uint32_t>& cur,
                   const std::optional<std::uint32_t>& max) {
    if (cur && max)
      clocks.push_back(fmt::format("{} {} MHz (max {})", what, *cur, *max));
    else if (cur)
      clocks.push_back(fmt::format("{} {} MHz", what, *cur));
    else if (max)
      clocks.push_back(fmt::format("{} max {} MHz", what, *max));
  };
  clock("SM", d.sm_clock_mhz, d.max_sm_clock_mhz);
  clock("memory", d.memory_clock_mhz, d.max_memory_clock_mhz);
  if (!clocks.empty()) s.add("Clocks", text::join(clocks, ", "), indent);
  if (d.app_sm_clock_mhz || d.app_memory_clock_mhz) {
    std::string t = fmt::format("SM {} MHz, memory {} MHz", count(d.app_sm_clock_mhz),
                                count(d.app_memory_clock_mhz));
    if (d.default_app_sm_clock_mhz && d.app_sm_clock_mhz &&
        *d.default_app_sm_clock_mhz != *d.app_sm_clock_mhz)
      t += fmt::format(" (default SM {} MHz)", *d.default_app_sm_clock_mhz);
    s.add("Application clocks", t, indent);
  }
  if (d.clock_event_reasons) {
    const auto names = clock_event_reason_names(*d.clock_event_reasons);
    s.add("Clock events", names.empty() ? "none" : text::join(names, ", "), indent);
  }
  if (d.temperature_celsius)
    s.add("Temperature", fmt::format("{} C", *d.temperature_celsius), indent);
  if (d.power_watts || d.power_limit_watts) {
    std::string p = d.power_watts ? fmt::format("{:.1f} W", *d.power_watts) : "?";
    if (d.power_limit_watts) p += fmt::format(" (limit {:.0f} W", *d.power_limit_watts);
    if (d.power_limit_watts && d.power_default_limit_watts &&
        *d.power_default_limit_watts != *d.power_limit_watts)
      p += fmt::format(", default {:.0f} W", *d.power_default_limit_watts);
    if (d.power_limit_watts && d.power_min_limit_watts && d.power_max_limit_watts)
      p += fmt::format(", settable {:.0f}-{:.0f} W", *d.power_min_limit_watts,
                       *d.power_max_limit_watts);
    if (d.power_limit_watts) p += ")";
    s.add("Power", p, indent);
  }
  if (d.mig_enabled) {
    std::string t = on_off(*d.mig_enabled);
    if (d.mig_pending_enabled && *d.mig_pending_enabled != *d.mig_enabled)
      t += fmt::format(" ({} after a GPU reset)", on_off(*d.mig_pending_enabled));
    if (*d.mig_enabled) {
      std::vector<std::string> names;
      for (const auto& m : d.mig_devices)
        names.push_back(fmt::format("{}{}", m.name.value_or("?"),
                                    m.uuid ? fmt::format(" {}", *m.uuid) : std::string()));
      t += names.empty() ? ", no MIG device made"
                         : fmt::format(", {} device{}: {}", names.size(),
                                       names.size() == 1 ? "" : "s", text::join(names, "; "));
    }
    s.add("MIG", t, indent);
  }
  if (!d.nvlinks.empty()) s.add("NVLink", nvlink_text(d), indent);
  if (!d.errors.empty()) s.add("NVML errors", text::join(d.errors, "; "), indent);
}

std::string summary(const Report& r) {
  if (!r.loaded) return fmt::format("not loaded ({})", r.error.value_or("no reason given"));
  std::vector<std::string> parts;
  if (r.driver_version) parts.push_back("driver " + *r.driver_version);
  if (r.cuda_driver_version) parts.push_back("CUDA " + *r.cuda_driver_version);
  if (r.nvml_version) parts.push_back("NVML " + *r.nvml_version);
  std::string out = r.library;
  if (!parts.empty()) out += ": " + text::join(parts, ", ");
  if (!r.errors.empty()) out += " [" + text::join(r.errors, "; ") + "]";
  return out;
}

}  // namespace dltune::gpu

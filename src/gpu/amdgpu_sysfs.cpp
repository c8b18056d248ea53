// AMD GPUs from amdgpu's sysfs (amdgpu_sysfs.hpp).
#include "gpu/amdgpu_sysfs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/core.h>

#include "core/text.hpp"
#include "gpu/pci_gpus.hpp"

namespace dltune::gpu::amdgpu {

namespace {

constexpr std::string_view kPciDevices = "/sys/bus/pci/devices";

std::string_view trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' || s.back() == '\0'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::optional<std::string> text(const host::Root& root, const std::string& path) {
  auto r = root.read(path, 64u << 10);
  if (!r || !*r) return std::nullopt;
  return std::string(trim(**r));
}

std::optional<std::uint64_t> number(std::string_view s, int base = 10) {
  s = trim(s);
  if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
  std::uint64_t v = 0;
  const auto* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v, base);
  if (ec != std::errc() || p != end || s.empty()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> number_file(const host::Root& root, const std::string& path) {
  const auto t = text(root, path);
  return t ? number(*t) : std::nullopt;
}

// Watts from a microwatt file.
std::optional<double> watts(const host::Root& root, const std::string& path) {
  const auto v = number_file(root, path);
  if (!v) return std::nullopt;
  return static_cast<double>(*v) / 1e6;
}

std::optional<std::uint32_t> mhz_from_hz(std::optional<std::uint64_t> hz) {
  if (!hz) return std::nullopt;
  return static_cast<std::uint32_t>((*hz + 500'000) / 1'000'000);
}

std::optional<std::uint32_t> percent(const host::Root& root, const std::string& path) {
  const auto v = number_file(root, path);
  if (!v || *v > 100) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

// The hwmon temperature channel labelled `label` (temp1..temp3), in °C.
std::optional<std::uint32_t> temperature(const host::Root& root, const std::string& hwmon,
                                         std::string_view label) {
  for (int i = 1; i <= 3; ++i) {
    const auto l = text(root, fmt::format("{}/temp{}_label", hwmon, i));
    if (!l || *l != label) continue;
    const auto t = text(root, fmt::format("{}/temp{}_input", hwmon, i));
    if (!t) return std::nullopt;
    std::int64_t milli = 0;
    const auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), milli);
    if (ec != std::errc() || milli < 0) return std::nullopt;
    return static_cast<std::uint32_t>((milli + 500) / 1000);
  }
  return std::nullopt;
}

// The GPU's temperature as one number: the junction (hotspot) where the GPU has it, which is
// what throttles it and what amd-smi shows first; else the edge sensor.
std::optional<std::uint32_t> gpu_temperature(const host::Root& root, const std::string& hwmon) {
  if (auto t = temperature(root, hwmon, "junction")) return t;
  if (auto t = temperature(root, hwmon, "edge")) return t;
  // Older GPUs have one unlabelled channel.
  if (auto v = number_file(root, hwmon + "/temp1_input"))
    return static_cast<std::uint32_t>((*v + 500) / 1000);
  return std::nullopt;
}

std::optional<double> power_now(const host::Root& root, const std::string& hwmon) {
  // power1_average on most GPUs; power1_input (instantaneous) on newer ones, some with both.
  if (auto w = watts(root, hwmon + "/power1_average")) return w;
  return watts(root, hwmon + "/power1_input");
}

std::optional<std::uint32_t> frequency_mhz(const host::Root& root, const std::string& hwmon,
                                           std::string_view label) {
  for (int i = 1; i <= 2; ++i) {
    const auto l = text(root, fmt::format("{}/freq{}_label", hwmon, i));
    if (l && *l == label)
      return mhz_from_hz(number_file(root, fmt::format("{}/freq{}_input", hwmon, i)));
  }
  return std::nullopt;
}

}  // namespace

BadPages parse_bad_pages(std::string_view t) {
  BadPages b;
  for (const auto raw : text::lines(t)) {
    const std::string_view line = trim(raw);
    // "0x00001234 : 0x00001000 : R"
    const auto last = line.rfind(':');
    if (last == std::string_view::npos || !line.starts_with("0x")) continue;
    const auto flag = trim(line.substr(last + 1));
    if (flag == "R")
      ++b.retired;
    else if (flag == "P")
      ++b.pending;
    else if (flag == "F")
      ++b.failed;
  }
  return b;
}

ErrCount parse_err_count(std::string_view t) {
  ErrCount c;
  for (const auto raw : text::lines(t)) {
    const std::string_view line = trim(raw);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = trim(line.substr(0, colon));
    const auto v = number(line.substr(colon + 1));
    if (key == "ue") c.ue = v;
    if (key == "ce") c.ce = v;
  }
  return c;
}

std::optional<std::uint32_t> parse_dpm_current_mhz(std::string_view t) {
  for (const auto raw : text::lines(t)) {
    const std::string_view line = trim(raw);
    if (!line.ends_with('*')) continue;
    // "1: 1700Mhz *"
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view v = trim(line.substr(colon + 1));
    std::uint32_t mhz = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), mhz);
    if (ec == std::errc() && p != v.data()) return mhz;
  }
  return std::nullopt;
}

std::vector<Card> find_cards(const host::Root& root) {
  std::vector<Card> out;
  // The AMD GPUs on PCI (gpu/pci_gpus.hpp: vendor 0x1002, display or accelerator class, by
  // address), those bound to amdgpu.
  for (const auto& gpu : find_pci_gpus(root)) {
    if (gpu.vendor != "amd") continue;
    const std::string dir = fmt::format("{}/{}", kPciDevices, gpu.address);
    auto driver = root.readlink(dir + "/driver");
    if (!driver || !*driver) continue;
    const std::string& d = **driver;
    if (d.substr(d.rfind('/') + 1) != "amdgpu") continue;
    Card c;
    c.pci_address = gpu.address;
    c.device_dir = dir;
    if (auto mons = root.list(dir + "/hwmon"); mons && *mons)
      for (const auto& m : **mons) {
        const std::string h = dir + "/hwmon/" + m;
        if (text(root, h + "/name") == "amdgpu") {
          c.hwmon_dir = h;
          break;
        }
      }
    out.push_back(std::move(c));
  }
  return out;
}

Report query(const host::Root& root) {
  Report r;
  r.backend = "amdgpu";
  r.library = "sysfs";
  const auto cards = find_cards(root);
  if (cards.empty()) {
    r.error = "no AMD GPU bound to the amdgpu driver";
    return r;
  }
  r.loaded = true;
  // The out-of-tree driver (amdgpu-dkms, ROCm's) has a version; the kernel's own has none.
  r.driver_version = text(root, "/sys/module/amdgpu/version");
  r.device_count = cards.size();
  unsigned index = 0;
  for (const auto& c : cards) {
    Device d;
    d.index = index++;
    d.pci_bus_id = c.pci_address;
    d.name = text(root, c.device_dir + "/product_name");
    if (d.name && d.name->empty()) d.name.reset();
    d.uuid = text(root, c.device_dir + "/unique_id");
    if (d.uuid && d.uuid->empty()) d.uuid.reset();
    d.memory_total_bytes = number_file(root, c.device_dir + "/mem_info_vram_total");
    d.memory_used_bytes = number_file(root, c.device_dir + "/mem_info_vram_used");
    if (const auto t = text(root, c.device_dir + "/ras/umc_err_count")) {
      // RAS on the memory controller: ECC is on (there is no mode to switch from sysfs).
      const auto e = parse_err_count(*t);
      d.ecc_enabled = true;
      d.ecc_errors.volatile_corrected = e.ce;
      d.ecc_errors.volatile_uncorrected = e.ue;
    }
    if (const auto t = text(root, c.device_dir + "/ras/gpu_vram_bad_pages")) {
      // amdgpu retires a page after an uncorrectable error: the reserved pages are those.
      const auto b = parse_bad_pages(*t);
      d.retired_pages.double_bit = b.retired + b.pending;
      d.retired_pages.pending = b.pending > 0;
      if (b.failed > 0) d.retired_pages.failed = b.failed;
    }
    if (const auto t = text(root, c.device_dir + "/pp_dpm_sclk"))
      d.sm_clock_mhz = parse_dpm_current_mhz(*t);
    if (const auto t = text(root, c.device_dir + "/pp_dpm_mclk"))
      d.memory_clock_mhz = parse_dpm_current_mhz(*t);
    if (c.hwmon_dir) {
      const std::string& h = *c.hwmon_dir;
      if (auto f = frequency_mhz(root, h, "sclk")) d.sm_clock_mhz = f;
      if (auto f = frequency_mhz(root, h, "mclk")) d.memory_clock_mhz = f;
      d.temperature_celsius = gpu_temperature(root, h);
      d.power_watts = power_now(root, h);
      d.power_management_limit_watts = watts(root, h + "/power1_cap");
      d.power_limit_watts = d.power_management_limit_watts;
      d.power_default_limit_watts = watts(root, h + "/power1_cap_default");
      d.power_min_limit_watts = watts(root, h + "/power1_cap_min");
      d.power_max_limit_watts = watts(root, h + "/power1_cap_max");
    }
    r.devices.push_back(std::move(d));
  }
  return r;
}

void read(const host::Root& root, const std::vector<Card>& cards, unsigned first_index,
          std::vector<GpuReading>& out) {
  unsigned index = first_index;
  for (const auto& c : cards) {
    GpuReading g;
    g.index = index++;
    g.pci_bus_id = c.pci_address;
    g.vendor = "amd";
    g.name = text(root, c.device_dir + "/product_name");
    if (g.name && g.name->empty()) g.name.reset();
    g.uuid = text(root, c.device_dir + "/unique_id");
    if (g.uuid && g.uuid->empty()) g.uuid.reset();
    g.utilization_gpu_pct = percent(root, c.device_dir + "/gpu_busy_percent");
    g.utilization_memory_pct = percent(root, c.device_dir + "/mem_busy_percent");
    g.memory_total_bytes = number_file(root, c.device_dir + "/mem_info_vram_total");
    g.memory_used_bytes = number_file(root, c.device_dir + "/mem_info_vram_used");
    if (const auto t = text(root, c.device_dir + "/ras/umc_err_count")) {
      const auto e = parse_err_count(*t);
      g.ecc_corrected = e.ce;
      g.ecc_uncorrected = e.ue;
    }
    if (c.hwmon_dir) {
      const std::string& h = *c.hwmon_dir;
      g.temperature_celsius = gpu_temperature(root, h);
      g.power_watts = power_now(root, h);
      g.sm_clock_mhz = frequency_mhz(root, h, "sclk");
      g.memory_clock_mhz = frequency_mhz(root, h, "mclk");
      if (const auto uj = number_file(root, h + "/energy1_input")) g.energy_mj = *uj / 1000;
    }
    out.push_back(std::move(g));
  }
}

}  // namespace dltune::gpu::amdgpu

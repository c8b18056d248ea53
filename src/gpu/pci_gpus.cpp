#include "gpu/pci_gpus.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"
#include "host/parse/pci_device.hpp"

namespace dltune::gpu {

namespace {

constexpr std::string_view kPciDevices = "/sys/bus/pci/devices";
constexpr std::uint32_t kNvidia = 0x10de, kAmd = 0x1002;

std::optional<std::uint32_t> hex_file(const host::Root& root, const std::string& path) {
  auto r = root.read(path, 4096);
  if (!r || !*r) return std::nullopt;
  return host::parse::pci_hex(text::trim(**r));
}

}  // namespace

std::vector<PciGpuSlot> find_pci_gpus(const host::Root& root) {
  std::vector<PciGpuSlot> out;
  auto names = root.list(kPciDevices);
  if (!names || !*names) return out;
  for (const auto& name : **names) {
    const std::string dir = std::string(kPciDevices) + "/" + name;
    const auto cls = hex_file(root, dir + "/class");
    if (!cls || ((*cls >> 16) != 0x03 && (*cls >> 16) != 0x12)) continue;
    const auto vendor = hex_file(root, dir + "/vendor");
    if (!vendor || (*vendor != kNvidia && *vendor != kAmd)) continue;
    const auto address = host::parse::pci_address(name);
    if (!address) continue;
    out.push_back({*address, *vendor == kNvidia ? "nvidia" : "amd"});
  }
  std::sort(out.begin(), out.end(),
            [](const PciGpuSlot& a, const PciGpuSlot& b) { return a.address < b.address; });
  return out;
}

std::string nvml_bus_id(std::string_view sysfs_address) {
  std::string s(sysfs_address);
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto colon = s.find(':');
  if (colon != std::string::npos && colon < 8) s.insert(0, 8 - colon, '0');
  return s;
}

void match_slots(const std::vector<PciGpuSlot>& pci, const std::vector<GpuReading>& readings,
                 std::vector<GpuSlot>& out) {
  out.resize(pci.size());
  for (std::size_t i = 0; i < pci.size(); ++i) {
    const auto& p = pci[i];
    auto& s = out[i];
    s.vendor = p.vendor;
    s.up = false;
    s.index.reset();
    const GpuReading* found = nullptr;
    for (const auto& r : readings)
      if (r.pci_bus_id && host::parse::pci_address(*r.pci_bus_id) == p.address) {
        found = &r;
        break;
      }
    if (found != nullptr) {
      s.index = found->index;
      // amdgpu's sysfs answers for every card bound to it; NVML for a GPU it named.
      s.up = !found->lost && (p.vendor == "amd" || found->uuid || found->name);
    }
    if (p.vendor == "nvidia")
      s.pci_bus_id = found != nullptr ? *found->pci_bus_id : nvml_bus_id(p.address);
    else
      s.pci_bus_id = p.address;
  }
}

}  // namespace dltune::gpu

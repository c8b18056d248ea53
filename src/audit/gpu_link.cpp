// gpu.pcie_link: every GPU's PCIe link at its maximum width and generation, from sysfs
// (Documentation/ABI/testing/sysfs-bus-pci: current_link_speed/width, max_link_speed/width) and
// NVML's nvmlDeviceGetCurrPcieLink* / GetMaxPcieLink* where sysfs has no value.
#include <fmt/core.h>

#include "audit/rules.hpp"
#include "gpu/report_text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;

namespace {

struct Link {
  std::optional<int> generation, width, max_generation, max_width;
  std::vector<Evidence> evidence;
};

std::optional<int> opt_int(const std::optional<std::uint32_t>& v) {
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

// The link as sysfs says it, NVML filling what sysfs lacks.
Link link_of(const inventory::GpuFacts& g, const inventory::PciGpu& d, const gpu::Device* n) {
  Link l;
  const auto& s = d.link;
  const std::string dir = "/sys/bus/pci/devices/" + d.address;
  auto speed = [](double gts) { return fmt::format("{:.1f} GT/s PCIe", gts); };
  if (s.width) l.evidence.push_back({dir + "/current_link_width", std::to_string(*s.width)});
  if (s.max_width) l.evidence.push_back({dir + "/max_link_width", std::to_string(*s.max_width)});
  if (s.speed_gts) l.evidence.push_back({dir + "/current_link_speed", speed(*s.speed_gts)});
  if (s.max_speed_gts) l.evidence.push_back({dir + "/max_link_speed", speed(*s.max_speed_gts)});
  l.generation = s.generation;
  l.width = s.width;
  l.max_generation = s.max_generation;
  l.max_width = s.max_width;
  if (n) {
    const bool used = (!l.generation && n->pcie_generation) || (!l.width && n->pcie_width) ||
                      (!l.max_generation && n->pcie_max_generation) ||
                      (!l.max_width && n->pcie_max_width);
    if (!l.generation) l.generation = opt_int(n->pcie_generation);
    if (!l.width) l.width = opt_int(n->pcie_width);
    if (!l.max_generation) l.max_generation = opt_int(n->pcie_max_generation);
    if (!l.max_width) l.max_width = opt_int(n->pcie_max_width);
    if (used)
      l.evidence.push_back(
          {nvml_path(g),
           fmt::format(
               "{}: {}", label(*n),
               gpu::pcie_text(opt_int(n->pcie_generation), opt_int(n->pcie_width),
                              opt_int(n->pcie_max_generation), opt_int(n->pcie_max_width)))});
  }
  return l;
}

Finding judge_link(const AuditInput& in, const settings::ProfileEntry& e, const std::string& who,
                   const std::string& address, Link l) {
  Finding f = frame(e, "its maximum width and generation");
  f.evidence = std::move(l.evidence);
  f.actual = gpu::pcie_text(l.generation, l.width, l.max_generation, l.max_width);
  if (!l.width || !l.max_width || *l.max_width == 0) {
    f.severity = Severity::kInfo;
    f.summary = fmt::format("{}: its PCIe link is not reported", who);
    if (in.facts.os.virtualization && *in.facts.os.virtualization != "none")
      f.notes.push_back(
          "In a virtual machine a passed-through GPU may sit on the guest's root bus as an "
          "integrated endpoint, whose link the kernel reads as \"Unknown\" with width 0; check "
          "the link on the hypervisor host.");
    return f;
  }
  const bool narrow = *l.width < *l.max_width;
  const bool slow = l.generation && l.max_generation && *l.generation < *l.max_generation;
  if (narrow) {
    f.severity = not_met(e);
    f.summary = fmt::format("{}: PCIe link x{} of x{}: reseat the card, check the slot/riser", who,
                            *l.width, *l.max_width);
    f.fix = Fix{fmt::format("reseat the GPU and check its slot and riser; then lspci -vv -s {} | "
                            "grep -E 'LnkCap|LnkSta' shows the trained link",
                            address),
                false};
    f.notes.push_back(
        "A link trained at fewer lanes than the card has stays so until the next boot; it "
        "divides host-to-GPU bandwidth (data loading, NCCL through the CPU) by the same factor.");
    if (slow)
      f.notes.push_back(fmt::format("Its generation is below the maximum too (Gen{} of Gen{}).",
                                    *l.generation, *l.max_generation));
    if (in.in_container)
      f.notes.push_back("The slot is the host's: this container cannot change it.");
    return f;
  }
  if (slow) {
    f.severity = std::min(Severity::kInfo, not_met(e));
    f.summary = fmt::format("{}: PCIe Gen{} of Gen{} at full width x{}", who, *l.generation,
                            *l.max_generation, *l.width);
    f.notes.push_back(
        "Links slow down at idle to save power; check under load (read current_link_speed, or "
        "nvidia-smi -q -d PCIE, while a job runs). A link that stays slow under load points to "
        "the slot, a riser or the BIOS's PCIe setting.");
    return f;
  }
  f.summary = fmt::format("{}: PCIe {}, its maximum", who,
                          gpu::pcie_text(l.generation, l.width, std::nullopt, std::nullopt));
  return f;
}

}  // namespace

std::vector<Finding> gpu_pcie_link(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  if (expected_bool(e) == false) return not_asked(e);
  std::vector<Finding> out;
  std::vector<unsigned> seen;  // NVML indices already judged through sysfs
  for (const auto& d : g.devices) {
    if (!d.compute) continue;
    const gpu::Device* n = nullptr;
    for (const auto& nd : g.nvml.devices)
      if (d.nvml_index && nd.index == *d.nvml_index) n = &nd;
    if (n) seen.push_back(n->index);
    out.push_back(judge_link(in, e, label(g, d), d.address, link_of(g, d, n)));
  }
  // GPUs that NVML knows and sysfs does not (a tree without /sys/bus/pci).
  for (const auto& n : g.nvml.devices) {
    if (std::find(seen.begin(), seen.end(), n.index) != seen.end()) continue;
    Link l{opt_int(n.pcie_generation),
           opt_int(n.pcie_width),
           opt_int(n.pcie_max_generation),
           opt_int(n.pcie_max_width),
           {}};
    l.evidence.push_back(
        {nvml_path(g),
         fmt::format("{}: {}", label(n),
                     gpu::pcie_text(l.generation, l.width, l.max_generation, l.max_width))});
    out.push_back(
        judge_link(in, e, label(n), n.pci_bus_id.value_or(std::to_string(n.index)), std::move(l)));
  }
  if (out.empty()) return no_gpu(e, "its maximum width and generation");
  return out;
}

}  // namespace dltune::audit

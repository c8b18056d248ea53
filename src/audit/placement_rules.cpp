// pci.gpu_nic: how near each GPU's nearest RDMA NIC is, in the words of `nvidia-smi topo -m`
// (PIX, PXB, PHB, NODE, SYS), and whether ACS sends the peer-to-peer traffic between them up to
// the root complex (the bridges pci.acs reads); gpu.numa_placement: where to launch jobs on a
// host whose GPUs span NUMA nodes. The places come from inventory (inventory/pcie_path.hpp).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "audit/rules.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;
using inventory::PcieEnd;
using inventory::PcieRelation;

namespace {

constexpr const char* kPlacementArea = "network";
constexpr const char* kPlacementExpected =
    "an RDMA NIC behind each GPU's PCIe switch (at least on its NUMA node), no ACS redirection "
    "between them";

PcieEnd end_of(const inventory::PciGpu& g) {
  return {g.pcie_place, g.numa_node};
}
PcieEnd end_of(const inventory::PciNic& n) {
  return {n.pcie_place, n.numa_node};
}

std::string node_text(std::optional<int> n) {
  return n ? std::to_string(*n) : "unknown";
}

// "mlx5_0 (0000:1a:00.0)"
std::string nic_name(const inventory::PciNic& n) {
  return fmt::format("{} ({})", n.rdma_device.value_or("?"), n.pci_address);
}

// Where sysfs puts a function (its resolved link) and its node: the evidence of a place.
Evidence place_evidence(const std::string& address,
                        const std::optional<inventory::PciePlace>& place, std::optional<int> node) {
  return {"/sys/bus/pci/devices/" + address,
          fmt::format(
              "{}, NUMA node {}",
              place ? fmt::format("/sys/devices/{}/{}", inventory::pcie_path_text(*place), address)
                    : std::string("no PCIe path"),
              node_text(node))};
}

Finding framed(const settings::ProfileEntry& e) {
  Finding f = frame(e, kPlacementExpected);
  f.area = kPlacementArea;
  return f;
}

// The GPU and its nearest NIC share a switch: ok, unless ACS on a bridge between them sends
// their traffic up to the root complex.
void judge_switch(const AuditInput& in, const settings::ProfileEntry& e, const std::string& who,
                  const inventory::PciGpu& d, const inventory::PciNic& nic, PcieRelation rel,
                  Finding& f) {
  std::vector<std::string> redirecting, unreadable;
  for (const auto& b : inventory::bridges_between(*d.pcie_place, *nic.pcie_place)) {
    const auto acs = bridge_acs(in.root, b);
    if (!acs.readable) {
      unreadable.push_back(b);
    } else if (acs.redirects()) {
      redirecting.push_back(b);
      f.evidence.push_back({"/sys/bus/pci/devices/" + b + "/config",
                            fmt::format("ACS control 0x{:04x}", *acs.control)});
    }
  }
  if (!redirecting.empty()) {
    f.severity = not_met(e);
    f.summary = fmt::format(
        "{}: ACS redirects peer-to-peer traffic at {}, between it and {} on "
        "its PCIe switch",
        who, fmt::join(redirecting, ", "), nic_name(nic));
    f.fix = acs_fix(redirecting);
    f.notes.push_back(
        "With ACS Request Redirect on a switch port, GPUDirect RDMA between the GPU and the NIC "
        "goes up to the root complex and back instead of across the switch: slower, or hanging "
        "where the root complex does not route peer-to-peer traffic. pci.acs lists every bridge "
        "with ACS redirection on.");
    host_only(f, in, "the ACS settings of the host's PCIe bridges");
    return;
  }
  f.summary = rel == PcieRelation::kPix
                  ? fmt::format("{}: {} is behind its PCIe switch (PIX)", who, nic_name(nic))
                  : fmt::format("{}: {} shares its PCIe switches, not through the CPU (PXB)", who,
                                nic_name(nic));
  if (!unreadable.empty())
    f.notes.push_back(fmt::format(
        "The ACS control of {} could not be read (the extended configuration space needs "
        "root): run check as root to see whether ACS redirects this traffic.",
        fmt::join(unreadable, ", ")));
}

Finding gpu_finding(const AuditInput& in, const settings::ProfileEntry& e,
                    const inventory::PciGpu& d, const std::vector<const inventory::PciNic*>& nics,
                    const std::vector<PcieEnd>& ends) {
  Finding f = framed(e);
  const auto who = label(in.facts.gpu, d);
  const PcieEnd gpu_end = end_of(d);
  const auto nearest = *inventory::nearest_nic(gpu_end, ends);
  const auto& nic = *nics[nearest.index];
  const auto rel = nearest.relation;
  f.actual = inventory::pcie_relation_name(rel);
  f.evidence.push_back(place_evidence(d.address, d.pcie_place, d.numa_node));
  f.evidence.push_back(place_evidence(nic.pci_address, nic.pcie_place, nic.numa_node));
  std::vector<std::string> equals;
  for (std::size_t i = 0; i < nics.size(); ++i)
    if (i != nearest.index && inventory::pcie_relation(gpu_end, ends[i]) == rel)
      equals.push_back(nic_name(*nics[i]));
  switch (rel) {
    case PcieRelation::kPix:
    case PcieRelation::kPxb:
      judge_switch(in, e, who, d, nic, rel, f);
      break;
    case PcieRelation::kPhb:
    case PcieRelation::kNode:
      f.severity = Severity::kInfo;
      f.summary = rel == PcieRelation::kPhb
                      ? fmt::format(
                            "{}: its nearest RDMA NIC, {}, meets it only in the root complex {} "
                            "(PHB)",
                            who, nic_name(nic), d.pcie_place->root)
                      : fmt::format(
                            "{}: its nearest RDMA NIC, {}, is on its NUMA node {} but under "
                            "another root complex (NODE)",
                            who, nic_name(nic), node_text(d.numa_node));
      f.notes.push_back(
          "GPUDirect RDMA between them passes through the CPU: NCCL uses it only up to the "
          "distance NCCL_NET_GDR_LEVEL allows and otherwise copies through host memory. A NIC "
          "behind the GPU's own PCIe switch (PIX) gives the shortest path.");
      break;
    case PcieRelation::kSys:
      f.severity = not_met(e);
      f.summary = fmt::format(
          "{} on NUMA node {} has no RDMA NIC on its node: the nearest, {}, is on node {} (SYS)",
          who, node_text(d.numa_node), nic_name(nic), node_text(nic.numa_node));
      f.fix = Fix{fmt::format("fit an RDMA NIC in a PCIe slot of NUMA node {}, at best behind "
                              "the PCIe switch or root port of {}",
                              node_text(d.numa_node), who),
                  false};
      f.notes.push_back(fmt::format(
          "Until then its traffic crosses the link between the sockets to {} (or is staged "
          "through host memory), and the ranks of node {} share node {}'s NICs with its own "
          "ranks. NCCL_IB_HCA={} names that NIC; a job that fits on the GPUs of node {} avoids "
          "the crossing.",
          nic_name(nic), node_text(d.numa_node), node_text(nic.numa_node),
          nic.rdma_device.value_or(nic.pci_address), node_text(nic.numa_node)));
      break;
    case PcieRelation::kUnknown:
      f.severity = Severity::kInfo;
      f.summary = fmt::format(
          "{}: how near its RDMA NICs are is not known (a NUMA node or PCIe path is missing in "
          "sysfs)",
          who);
      break;
  }
  if (!equals.empty() && rel != PcieRelation::kUnknown)
    f.notes.push_back(fmt::format("Equally near: {}.", fmt::join(equals, ", ")));
  return f;
}

// A host whose GPUs are on two or more NUMA nodes: one finding that says how to launch a job on
// one node's GPUs with that node's CPUs and memory (dltune run --numa auto --gpus, whose indices
// are nvidia-smi's: NVML's, else PCI bus order, as launch's gpu_slots numbers them).
constexpr const char* kNumaExpected =
    "each job on the CPUs and memory of its GPUs' NUMA node (dltune run --numa auto --gpus)";

std::optional<Finding> numa_hint(const AuditInput& in, const settings::ProfileEntry& e) {
  std::map<int, std::vector<int>> by_node;
  std::map<int, std::vector<std::string>> addresses;
  int ordinal = 0;
  for (const auto& d : in.facts.gpu.devices) {  // by address
    if (d.vendor != "nvidia") continue;
    const int index = d.nvml_index ? static_cast<int>(*d.nvml_index) : ordinal;
    ++ordinal;
    if (!d.numa_node) continue;
    by_node[*d.numa_node].push_back(index);
    addresses[*d.numa_node].push_back(d.address);
  }
  if (by_node.size() < 2) return std::nullopt;
  Finding f = frame(e, kNumaExpected);
  f.severity = Severity::kInfo;
  std::vector<std::string> where, options;
  for (auto& [node, ids] : by_node) {
    std::sort(ids.begin(), ids.end());
    const auto list = text::format_cpu_list(ids);
    where.push_back(fmt::format("GPU{} {} on node {}", ids.size() > 1 ? "s" : "", list, node));
    options.push_back(fmt::format("--gpus {} (node {})", list, node));
    f.evidence.push_back({"/sys/bus/pci/devices/*/numa_node",
                          fmt::format("node {}: {}", node, fmt::join(addresses[node], " "))});
  }
  f.actual = fmt::format("GPUs on {} NUMA nodes", by_node.size());
  f.summary =
      fmt::format("the GPUs are on {} NUMA nodes: {}", by_node.size(), fmt::join(where, ", "));
  f.fix = Fix{fmt::format("dltune run --numa auto --gpus {} -- COMMAND",
                          text::format_cpu_list(by_node.begin()->second)),
              false};
  f.notes.push_back(fmt::format(
      "Launch each job on the GPUs of one node with `dltune run --numa auto`: {}. The job then "
      "runs on the CPUs and memory of its GPUs' node, so its batches, pinned buffers and "
      "DataLoader workers do not cross the link between the sockets; with --nproc N each rank is "
      "bound to the node of its own GPU.",
      fmt::join(options, ", ")));
  return f;
}

}  // namespace

std::vector<Finding> pci_gpu_nic(const AuditInput& in, const settings::ProfileEntry& e) {
  if (expected_bool(e) == false) {
    auto out = not_asked(e);
    for (auto& f : out) f.area = kPlacementArea;
    return out;
  }
  const auto& g = in.facts.gpu;
  std::vector<const inventory::PciGpu*> gpus;
  for (const auto& d : g.devices)
    if (d.compute) gpus.push_back(&d);
  if (gpus.empty()) {
    if (!has_nvidia_gpu(g)) {
      auto out = no_gpu(e, kPlacementExpected);
      for (auto& f : out) f.area = kPlacementArea;
      return out;
    }
    Finding f = framed(e);
    f.applicable = false;
    f.summary =
        "the GPUs are not in PCI sysfs (a container without /sys/bus/pci): their PCIe "
        "place cannot be read";
    f.evidence.push_back({"/sys/bus/pci/devices", "no display or 3D controller"});
    return {std::move(f)};
  }
  std::vector<const inventory::PciNic*> nics;
  std::vector<PcieEnd> ends;
  for (const auto& n : in.facts.network.nics) {
    if (!n.rdma_device) continue;  // GPUDirect RDMA needs an RDMA device
    nics.push_back(&n);
    ends.push_back(end_of(n));
  }
  std::vector<Finding> out;
  if (nics.empty()) {
    Finding f = framed(e);
    f.applicable = false;
    f.summary = "no RDMA NIC on this host (InfiniBand or RoCE with a PCI function)";
    f.evidence.push_back({"/sys/class/infiniband", in.facts.network.rdma.empty()
                                                       ? "no devices"
                                                       : "no device with a PCI function"});
    out.push_back(std::move(f));
  } else {
    for (const auto* d : gpus) out.push_back(gpu_finding(in, e, *d, nics, ends));
  }
  return out;
}

std::vector<Finding> gpu_numa_placement(const AuditInput& in, const settings::ProfileEntry& e) {
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(in.facts.gpu)) return no_gpu(e, kNumaExpected);
  if (auto hint = numa_hint(in, e)) return {std::move(*hint)};
  // One node (or none known): nothing to choose, whatever runs where.
  Finding f = frame(e, kNumaExpected);
  std::set<int> nodes;
  std::size_t unknown = 0;
  for (const auto& d : in.facts.gpu.devices) {
    if (d.vendor != "nvidia") continue;
    if (d.numa_node)
      nodes.insert(*d.numa_node);
    else
      ++unknown;
  }
  f.applicable = false;
  f.actual = nodes.empty() ? "NUMA node not known" : fmt::format("node {}", *nodes.begin());
  f.summary =
      nodes.empty()
          ? "the GPUs' NUMA node is not known (no numa_node in PCI sysfs: one node, a "
            "VM or a container): no placement to choose"
          : fmt::format("the GPUs are all on NUMA node {}{}: no placement to choose",
                        *nodes.begin(), unknown > 0 ? fmt::format(" ({} not known)", unknown) : "");
  f.evidence.push_back({"/sys/bus/pci/devices/*/numa_node",
                        nodes.empty() ? "none" : fmt::format("node {}", *nodes.begin())});
  return {std::move(f)};
}

}  // namespace dltune::audit

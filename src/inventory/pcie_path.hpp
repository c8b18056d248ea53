#pragma once
// Where a PCI function sits in the PCIe tree (its host bridge and the bridges above it), and how
// near two functions are, in the words of `nvidia-smi topo -m`: PIX, PXB, PHB, NODE, SYS.
//
// sysfs lays PCI devices out as the bus is wired: the directory of every function is a child of
// the directory of the bridge it sits behind, below its host bridge's "pciDDDD:BB" (the kernel's
// Documentation/PCI/sysfs-pci.rst shows the layout; /sys/bus/pci/devices/ holds a link to each,
// Documentation/ABI/testing/sysfs-bus-pci; drivers/pci/probe.c makes each device a child of the
// bridge of the bus it was found on). So the link /sys/bus/pci/devices/0000:3d:00.0 resolves to
//   /sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0/0000:3d:00.0
// and every component between the host bridge and the function itself is a bridge on its way
// up: the root port 0000:3a:00.0, a switch's upstream port 0000:3b:00.0 and its downstream port
// 0000:3c:08.0.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/context.hpp"

namespace dltune::inventory {

struct PciePlace {
  std::string root;               // the host bridge (root complex): "pci0000:3a"
  std::vector<std::string> path;  // the bridges from the root port down: "0000:3a:00.0", ...
};

// The place of a PCI function from the resolved path of its sysfs directory (above). nullopt
// when the path does not end in a PCI address below a "pci" host bridge (a virtual device, or a
// path that is not sysfs's).
[[nodiscard]] std::optional<PciePlace> pcie_place(std::string_view sysfs_path);

// A PCI address exactly as sysfs writes it ("0000:3b:00.0", or "10000:e1:00.0" behind a VMD
// domain): what a component of a device path must be to be a PCI function.
[[nodiscard]] bool is_sysfs_pci_address(std::string_view s);

// The place of the function whose sysfs link is `device_link` ("/sys/bus/pci/devices/ADDR"),
// read through ctx.root(); nullopt when the link is absent or leads elsewhere. An unreadable
// link is a Problem of `fact`.
[[nodiscard]] std::optional<PciePlace> read_pcie_place(Context& ctx, std::string_view fact,
                                                       const std::string& device_link);

// The NUMA node whose CPUs hold all of `cpus`, when exactly one of two or more nodes does
// (firmware that leaves a device's numa_node at -1 still reports its local_cpulist; hwloc uses
// the same for PCI locality). Reads /sys/devices/system/node (problems go to `fact`).
[[nodiscard]] std::optional<int> node_of_cpus(Context& ctx, std::string_view fact,
                                              const std::vector<int>& cpus);

// How two PCI functions reach each other, nearest first (the legend of `nvidia-smi topo -m`).
enum class PcieRelation {
  kPix,      // PIX: through at most one PCIe switch (a bridge they share below the host bridge)
  kPxb,      // PXB: through several PCIe switches, without the host bridge
  kPhb,      // PHB: through one host bridge (the CPU's root complex), no switch in common
  kNode,     // NODE: across host bridges within one NUMA node
  kSys,      // SYS: across the interconnect between NUMA nodes (UPI, xGMI)
  kUnknown,  // a place or a NUMA node is not known
};
[[nodiscard]] const char* pcie_relation_name(PcieRelation r);  // "PIX" ... "SYS", "unknown"

// One end of a route: a GPU or a NIC, as far as its place and node are known.
struct PcieEnd {
  std::optional<PciePlace> place;
  std::optional<int> numa_node;
};

[[nodiscard]] PcieRelation pcie_relation(const PcieEnd& a, const PcieEnd& b);

// The bridges that peer-to-peer traffic between two functions under one host bridge enters on
// its way from one to the other: those below the deepest bridge they share, on either side (the
// switch ports where ACS would redirect it up to the root complex). Empty under different host
// bridges.
[[nodiscard]] std::vector<std::string> bridges_between(const PciePlace& a, const PciePlace& b);

// The nearest of `nics` to `gpu`: its index and the relation; the first of equally near ones.
// nullopt when `nics` is empty.
struct NearestNic {
  std::size_t index = 0;
  PcieRelation relation = PcieRelation::kUnknown;
};
[[nodiscard]] std::optional<NearestNic> nearest_nic(const PcieEnd& gpu,
                                                    const std::vector<PcieEnd>& nics);

// "pci0000:3a/0000:3a:00.0/0000:3b:00.0" (the host bridge, then the bridges).
[[nodiscard]] std::string pcie_path_text(const PciePlace& p);

}  // namespace dltune::inventory

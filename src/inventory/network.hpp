#pragma once
// Network facts: interfaces with speed and MTU, InfiniBand and RoCE devices, the PCI functions
// of the NICs that carry multi-node training (with their NUMA node and PCIe place, to set GPUs
// beside them), and the TCP buffer sysctls that multi-node training over TCP depends on.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "host/ethtool.hpp"
#include "inventory/context.hpp"
#include "inventory/pcie_path.hpp"

namespace dltune::inventory {

// A physical interface's rings and offloads: ethtool netlink on the live host
// (host/ethtool.hpp), capture_files::kEthtool in a host tree.
struct NicOffload {
  bool active = false;
  bool changeable = false;  // the driver lets it change (`ethtool -k` prints [fixed] if not)
};
struct EthtoolFacts {
  std::optional<host::EthtoolRings> rings;
  std::optional<std::string> rings_error;  // EOPNOTSUPP: the driver does not report them
  // The offloads that matter for bulk TCP (interesting_offloads()) that the NIC has: on, or
  // that can be turned on. A name absent is off and fixed.
  std::map<std::string, NicOffload> offloads;
  std::optional<std::string> offloads_error;
};
// "rx-checksum", "tx-scatter-gather", "tx-tcp-segmentation", "tx-generic-segmentation",
// "rx-gro", ... (the names of ethtool's long form, net/ethtool/common.c netdev_features_strings).
[[nodiscard]] const std::vector<std::string>& interesting_offloads();

struct NetInterface {
  std::string name;
  std::optional<int> mtu;
  std::optional<int> speed_mbps;  // absent when the driver does not report it (-1)
  std::optional<std::string> operstate;
  std::optional<std::string> address;
  bool is_virtual = false;  // no device behind it (bridges, veth, ifb, ...)
  std::optional<std::string> pci_address;
  std::optional<int> type;              // ARPHRD_*: 1 Ethernet, 32 InfiniBand (IPoIB), 772 loopback
  std::optional<EthtoolFacts> ethtool;  // physical interfaces (a PCI function) only
};

struct RdmaPort {
  int port = 0;
  std::optional<std::string> state;       // "ACTIVE"
  std::optional<std::string> rate;        // "400 Gb/sec (4X NDR)"
  std::optional<std::string> link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
};

struct RdmaDevice {
  std::string name;  // mlx5_0
  std::vector<RdmaPort> ports;
  std::vector<std::string> netdevs;  // the Ethernet/IPoIB interfaces on it
};

// A NIC that multi-node training may use: the PCI function of an RDMA device, or of a physical
// interface of at least 25 Gb/s (or of a speed the driver does not report).
struct PciNic {
  std::string pci_address;                 // "0000:1a:00.0"
  std::optional<std::string> rdma_device;  // "mlx5_0", when it has one
  std::vector<std::string> netdevs;        // its interfaces: "ib0", "eth0"
  std::optional<int> numa_node;
  std::optional<std::string> numa_node_source;  // "numa_node" or "local_cpulist"
  std::optional<PciePlace> pcie_place;          // its host bridge and the bridges above it
};

// At least this fast (Mb/s) for an interface without RDMA to count as a training NIC.
inline constexpr int kTrainingNicMbps = 25000;

struct NetworkFacts {
  std::vector<NetInterface> interfaces;
  std::vector<RdmaDevice> rdma;
  std::vector<PciNic> nics;  // by PCI address
  std::map<std::string, std::string> sysctls;
};

[[nodiscard]] NetworkFacts collect_network(Context& ctx);
[[nodiscard]] Json to_json(const NetworkFacts& f);
// What `capture` writes to capture_files::kEthtool: {"eth0": to_json(ethtool facts), ...}.
[[nodiscard]] Json ethtool_json(const NetworkFacts& f);
[[nodiscard]] std::vector<text::Section> render_network(const NetworkFacts& f);

}  // namespace dltune::inventory

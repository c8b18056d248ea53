#pragma once
// Network facts: interfaces with speed and MTU, InfiniBand and RoCE devices, and the TCP buffer
// sysctls that multi-node training over TCP depends on.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/sections.hpp"
#include "inventory/context.hpp"
#include "inventory/json.hpp"

namespace dltune::inventory {

struct NetInterface {
  std::string name;
  std::optional<int> mtu;
  std::optional<int> speed_mbps;  // absent when the driver does not report it (-1)
  std::optional<std::string> operstate;
  std::optional<std::string> address;
  bool is_virtual = false;  // no device behind it (bridges, veth, ifb, ...)
  std::optional<std::string> pci_address;
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

struct NetworkFacts {
  std::vector<NetInterface> interfaces;
  std::vector<RdmaDevice> rdma;
  std::map<std::string, std::string> sysctls;
};

[[nodiscard]] NetworkFacts collect_network(Context& ctx);
[[nodiscard]] Json to_json(const NetworkFacts& f);
[[nodiscard]] std::vector<text::Section> render_network(const NetworkFacts& f);

}  // namespace dltune::inventory

#include "inventory/network.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <map>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "inventory/capture_files.hpp"
#include "inventory/json.hpp"

namespace dltune::inventory {

const std::vector<std::string>& interesting_offloads() {
  // What bulk TCP (NCCL's socket transport, a data loader's remote reads) leans on: checksums
  // and segmentation in the NIC, receive coalescing (GRO, or LRO and its hardware form).
  static const std::vector<std::string> kNames = {"rx-checksum",
                                                  "tx-checksum-ip-generic",
                                                  "tx-checksum-ipv4",
                                                  "tx-checksum-ipv6",
                                                  "tx-scatter-gather",
                                                  "tx-tcp-segmentation",
                                                  "tx-tcp6-segmentation",
                                                  "tx-generic-segmentation",
                                                  "rx-gro",
                                                  "rx-gro-hw",
                                                  "rx-lro"};
  return kNames;
}

namespace {

Json ethtool_to_json(const EthtoolFacts& e) {
  Json x = Json::object();
  if (e.rings)
    x["rings"] = Json{{"rx", e.rings->rx},
                      {"rx_max", e.rings->rx_max},
                      {"tx", e.rings->tx},
                      {"tx_max", e.rings->tx_max}};
  put(x, "rings_error", e.rings_error);
  Json off = Json::object();
  for (const auto& [name, o] : e.offloads)
    off[name] = Json{{"active", o.active}, {"changeable", o.changeable}};
  x["offloads"] = std::move(off);
  put(x, "offloads_error", e.offloads_error);
  return x;
}

std::optional<std::uint32_t> u32_at(const Json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_unsigned()) return std::nullopt;
  const auto v = j[key].get<std::uint64_t>();
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

EthtoolFacts ethtool_from_json(const Json& x) {
  EthtoolFacts e;
  if (x.contains("rings") && x["rings"].is_object()) {
    const auto& r = x["rings"];
    const auto rx = u32_at(r, "rx"), rx_max = u32_at(r, "rx_max"), tx = u32_at(r, "tx"),
               tx_max = u32_at(r, "tx_max");
    if (rx && rx_max && tx && tx_max) e.rings = host::EthtoolRings{*rx, *rx_max, *tx, *tx_max};
  }
  if (x.contains("rings_error") && x["rings_error"].is_string())
    e.rings_error = x["rings_error"].get<std::string>();
  if (x.contains("offloads") && x["offloads"].is_object())
    for (const auto& [name, o] : x["offloads"].items())
      if (o.is_object())
        e.offloads[name] = NicOffload{o.value("active", false), o.value("changeable", false)};
  if (x.contains("offloads_error") && x["offloads_error"].is_string())
    e.offloads_error = x["offloads_error"].get<std::string>();
  return e;
}

// The ethtool facts of the physical interfaces: asked of the kernel on the live host, read from
// the capture in a host tree (absent there: none, and no problem: an older capture).
void collect_ethtool(Context& ctx, NetworkFacts& f) {
  constexpr const char* kFact = "network.ethtool";
  const auto physical = [](const NetInterface& i) { return !i.is_virtual && i.pci_address; };
  if (!ctx.root().this_kernel()) {
    const auto text = ctx.read(kFact, capture_files::kEthtool, 4u << 20);
    if (!text) return;
    const auto j = Json::parse(*text, nullptr, false);
    if (!j.is_object()) {
      ctx.problem(kFact, capture_files::kEthtool, "not a JSON object");
      return;
    }
    for (auto& i : f.interfaces)
      if (physical(i) && j.contains(i.name) && j[i.name].is_object())
        i.ethtool = ethtool_from_json(j[i.name]);
    return;
  }
  if (std::none_of(f.interfaces.begin(), f.interfaces.end(), physical)) return;
  auto nl = host::Ethtool::open();
  if (!nl) {
    // A kernel without the interface (before 5.6, or CONFIG_ETHTOOL_NETLINK off: RHEL 8's 4.18)
    // or a sandbox without netlink: not a fact that failed, an answer nobody can give here. Each
    // interface says why, and nic.settings is unknown for it.
    const std::string why =
        nl.error().errno_ == ENOENT
            ? "this kernel has no ethtool netlink interface (Linux 5.6 and later)"
            : nl.error().message();
    for (auto& i : f.interfaces) {
      if (!physical(i)) continue;
      EthtoolFacts e;
      e.rings_error = why;
      e.offloads_error = why;
      i.ethtool = std::move(e);
    }
    return;
  }
  for (auto& i : f.interfaces) {
    if (!physical(i)) continue;
    EthtoolFacts e;
    if (auto r = nl->rings(i.name))
      e.rings = *r;
    else
      e.rings_error = r.error().message();
    if (auto feats = nl->features(i.name)) {
      const auto has = [](const std::vector<std::string>& v, const std::string& n) {
        return std::binary_search(v.begin(), v.end(), n);
      };
      for (const auto& name : interesting_offloads()) {
        NicOffload o{has(feats->active, name), has(feats->changeable, name)};
        if (o.active || o.changeable) e.offloads[name] = o;
      }
    } else {
      e.offloads_error = feats.error().message();
    }
    i.ethtool = std::move(e);
  }
}

void collect_interfaces(Context& ctx, NetworkFacts& f) {
  for (const auto& name : ctx.list("network.interfaces", "/sys/class/net")) {
    if (name == "lo" || name == "bonding_masters") continue;
    const std::string dir = "/sys/class/net/" + name;
    NetInterface i;
    i.name = name;
    if (auto v = ctx.read_value("network.interfaces", dir + "/mtu"))
      if (auto n = text::to_int(*v)) i.mtu = static_cast<int>(*n);
    // Reading speed of a link that is down fails with EINVAL: that is "unknown", not a problem.
    if (auto r = ctx.root().read(dir + "/speed", 64); r && *r) {
      if (auto n = text::to_int(text::trim(**r)); n && *n > 0) i.speed_mbps = static_cast<int>(*n);
    }
    i.operstate = ctx.read_value("network.interfaces", dir + "/operstate");
    if (auto v = ctx.read_value("network.interfaces", dir + "/type"))
      if (auto n = text::to_int(*v)) i.type = static_cast<int>(*n);
    i.address = ctx.read_value("network.interfaces", dir + "/address");
    if (auto link = ctx.root().readlink(dir); link && *link) {
      i.is_virtual = (*link)->find("/virtual/") != std::string::npos;
    }
    // The device link is relative ("../../../0000:4b:00.0", or "../.." from inside the PCI
    // function's own net/ directory): the resolved path's last component is the function. A
    // virtio NIC's device is the virtio device ("0000:00:03.0/virtio2"), on the virtio-pci
    // function above it (drivers/virtio/virtio_pci_common.c), whose IRQs and place are its own.
    if (auto dev = ctx.root().resolve(dir + "/device"); dev && *dev) {
      std::string_view path = **dev;
      std::string_view base = text::base_name(path);
      if (base.starts_with("virtio") && path.size() > base.size() + 1) {
        path.remove_suffix(base.size() + 1);
        base = text::base_name(path);
      }
      if (is_sysfs_pci_address(base)) i.pci_address = std::string(base);
    }
    f.interfaces.push_back(std::move(i));
  }
}

void collect_rdma(Context& ctx, NetworkFacts& f) {
  for (const auto& name : ctx.list("network.rdma", "/sys/class/infiniband")) {
    const std::string dir = "/sys/class/infiniband/" + name;
    RdmaDevice d;
    d.name = name;
    for (const auto& p : ctx.list("network.rdma", dir + "/ports")) {
      const auto num = text::to_int(p);
      if (!num) continue;
      RdmaPort port;
      port.port = static_cast<int>(*num);
      const std::string pd = dir + "/ports/" + p;
      // "4: ACTIVE" -> "ACTIVE" (Documentation/ABI/stable/sysfs-class-infiniband)
      if (auto s = ctx.read_value("network.rdma", pd + "/state")) {
        const auto colon = s->find(':');
        port.state =
            colon == std::string::npos ? *s : std::string(text::trim(s->substr(colon + 1)));
      }
      port.rate = ctx.read_value("network.rdma", pd + "/rate");
      port.link_layer = ctx.read_value("network.rdma", pd + "/link_layer");
      d.ports.push_back(std::move(port));
    }
    d.netdevs = ctx.list("network.rdma", dir + "/device/net");
    f.rdma.push_back(std::move(d));
  }
}

// A NIC's NUMA node: numa_node (Documentation/ABI/testing/sysfs-bus-pci: "-1" when the firmware
// gives none), else the one node that holds all of local_cpulist, as for GPUs.
void read_nic_node(Context& ctx, const std::string& dir, PciNic& n) {
  constexpr const char* kFact = "network.nics";
  if (const auto v = ctx.read_value(kFact, dir + "/numa_node")) {
    const auto id = text::to_int(*v);
    if (id && *id >= 0 && *id < 4096) {
      n.numa_node = static_cast<int>(*id);
      n.numa_node_source = "numa_node";
      return;
    }
  }
  const auto list = ctx.read_value(kFact, dir + "/local_cpulist");
  const auto cpus = list ? text::parse_cpu_list(*list) : std::nullopt;
  if (!cpus) return;
  if (const auto id = node_of_cpus(ctx, kFact, *cpus)) {
    n.numa_node = *id;
    n.numa_node_source = "local_cpulist";
  }
}

// The PCI functions of the RDMA devices (Documentation/ABI/stable/sysfs-class-infiniband; the
// `device` link of a class device leads to its parent, drivers/base/core.c
// device_add_class_symlinks) and of the fast physical interfaces, with their place.
void collect_nics(Context& ctx, NetworkFacts& f) {
  constexpr const char* kFact = "network.nics";
  std::map<std::string, PciNic> by_address;
  for (const auto& d : f.rdma) {
    auto real = ctx.root().resolve("/sys/class/infiniband/" + d.name + "/device");
    if (!real) {
      ctx.problem(kFact, real.error());
      continue;
    }
    if (!*real) continue;  // a software device (rxe, siw) has no PCI function of its own
    const std::string address(text::base_name(**real));
    if (!is_sysfs_pci_address(address)) continue;
    auto& n = by_address[address];
    n.pci_address = address;
    if (!n.rdma_device) n.rdma_device = d.name;
  }
  for (const auto& i : f.interfaces) {
    if (i.is_virtual || !i.pci_address) continue;
    const bool fast = !i.speed_mbps || *i.speed_mbps >= kTrainingNicMbps;
    if (!fast && !by_address.count(*i.pci_address)) continue;
    auto& n = by_address[*i.pci_address];
    n.pci_address = *i.pci_address;
    n.netdevs.push_back(i.name);
  }
  for (auto& [address, n] : by_address) {
    const std::string dir = "/sys/bus/pci/devices/" + address;
    read_nic_node(ctx, dir, n);
    n.pcie_place = read_pcie_place(ctx, kFact, dir);
    f.nics.push_back(std::move(n));
  }
}

}  // namespace

NetworkFacts collect_network(Context& ctx) {
  NetworkFacts f;
  collect_interfaces(ctx, f);
  collect_ethtool(ctx, f);
  collect_rdma(ctx, f);
  collect_nics(ctx, f);
  for (const char* key :
       {"net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default",
        "net.core.netdev_max_backlog", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
        "net.ipv4.tcp_fastopen", "net.ipv4.tcp_congestion_control"}) {
    std::string path = "/proc/sys/" + std::string(key);
    for (auto& c : path)
      if (c == '.') c = '/';
    if (auto v = ctx.read_value("network.sysctl", path)) {
      // tcp_rmem is "min default max" separated by tabs: keep it as spaces.
      const auto fl = text::fields(*v);
      std::string joined;
      for (const auto x : fl) {
        if (!joined.empty()) joined += ' ';
        joined += x;
      }
      f.sysctls[key] = joined;
    }
  }
  return f;
}

Json to_json(const NetworkFacts& f) {
  Json j = Json::object();
  Json ifs = Json::array();
  for (const auto& i : f.interfaces) {
    Json x;
    x["name"] = i.name;
    put(x, "mtu", i.mtu);
    put(x, "speed_mbps", i.speed_mbps);
    put(x, "operstate", i.operstate);
    put(x, "address", i.address);
    x["virtual"] = i.is_virtual;
    put(x, "pci_address", i.pci_address);
    put(x, "type", i.type);
    if (i.ethtool) x["ethtool"] = ethtool_to_json(*i.ethtool);
    ifs.push_back(std::move(x));
  }
  j["interfaces"] = std::move(ifs);
  Json rdma = Json::array();
  for (const auto& d : f.rdma) {
    Json ports = Json::array();
    for (const auto& p : d.ports) {
      Json x;
      x["port"] = p.port;
      put(x, "state", p.state);
      put(x, "rate", p.rate);
      put(x, "link_layer", p.link_layer);
      x["roce"] = p.link_layer == "Ethernet";
      ports.push_back(std::move(x));
    }
    rdma.push_back(Json{{"name", d.name}, {"ports", std::move(ports)}, {"netdevs", d.netdevs}});
  }
  j["rdma"] = std::move(rdma);
  Json nics = Json::array();
  for (const auto& n : f.nics) {
    Json x;
    x["pci_address"] = n.pci_address;
    put(x, "rdma_device", n.rdma_device);
    x["netdevs"] = n.netdevs;
    put(x, "numa_node", n.numa_node);
    put(x, "numa_node_source", n.numa_node_source);
    if (n.pcie_place) {
      x["pcie_root"] = n.pcie_place->root;
      x["pcie_path"] = n.pcie_place->path;
    }
    nics.push_back(std::move(x));
  }
  j["nics"] = std::move(nics);
  j["sysctls"] = f.sysctls;
  return j;
}

Json ethtool_json(const NetworkFacts& f) {
  Json j = Json::object();
  for (const auto& i : f.interfaces)
    if (i.ethtool) j[i.name] = ethtool_to_json(*i.ethtool);
  return j;
}

std::vector<text::Section> render_network(const NetworkFacts& f) {
  text::Section s{"Network", {}};
  for (const auto& i : f.interfaces) {
    std::string v = i.speed_mbps ? (*i.speed_mbps >= 1000 && *i.speed_mbps % 1000 == 0
                                        ? fmt::format("{} Gb/s", *i.speed_mbps / 1000)
                                        : fmt::format("{} Mb/s", *i.speed_mbps))
                                 : "speed unknown";
    if (i.mtu) v += fmt::format(", MTU {}", *i.mtu);
    if (i.operstate) v += ", " + *i.operstate;
    if (i.is_virtual) v += ", virtual";
    if (i.ethtool && i.ethtool->rings)
      v += fmt::format(", rings rx {}/{} tx {}/{}", i.ethtool->rings->rx, i.ethtool->rings->rx_max,
                       i.ethtool->rings->tx, i.ethtool->rings->tx_max);
    if (i.ethtool) {
      std::vector<std::string> off;
      for (const auto& [name, o] : i.ethtool->offloads)
        if (!o.active) off.push_back(name);
      if (!off.empty()) v += ", off: " + text::join(off, " ");
    }
    s.add(i.name, v);
  }
  for (const auto& d : f.rdma) {
    for (const auto& p : d.ports) {
      s.add(fmt::format("{} port {}", d.name, p.port),
            fmt::format("{}, {}, {}",
                        p.link_layer == "Ethernet" ? "RoCE" : p.link_layer.value_or("?"),
                        p.rate.value_or("rate unknown"), p.state.value_or("state unknown")));
    }
  }
  if (f.rdma.empty()) s.add("RDMA", "no InfiniBand/RoCE devices");
  for (const auto& n : f.nics) {
    std::vector<std::string> names;
    if (n.rdma_device) names.push_back(*n.rdma_device);
    names.insert(names.end(), n.netdevs.begin(), n.netdevs.end());
    std::string v = fmt::format("{}, NUMA node {}", text::join(names, " "),
                                n.numa_node ? std::to_string(*n.numa_node) : "unknown");
    if (n.pcie_place) v += ", PCIe " + pcie_path_text(*n.pcie_place);
    s.add("NIC " + n.pci_address, v);
  }
  for (const auto& [k, v] : f.sysctls) s.add(k, v);
  return {s};
}

}  // namespace dltune::inventory

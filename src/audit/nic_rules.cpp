// nic.settings: the Ethernet interfaces of the training NICs, as ethtool netlink reports them
// (inventory/network.hpp): receive and transmit rings below what the NIC takes, the offloads that
// bulk TCP leans on turned off, and a RoCE interface's MTU below jumbo frames. Check only: each
// is a NIC's own configuration, kept by the host's network configuration, and a ring change
// resets the link on most drivers.
#include <algorithm>

#include <fmt/format.h>

#include "audit/system_rules.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

namespace {

constexpr const char* kArea = "network";
constexpr int kArphrdEther = 1;  // include/uapi/linux/if_arp.h
// RoCE carries at most a 4096-byte path MTU (InfiniBand Architecture Specification, MTU
// enumeration); the interface needs room for it and the RoCEv2 headers: NVIDIA's RoCE
// configuration guides set the switch and host MTU to 9000 (jumbo frames) for that.
constexpr int kRoceMtu = 9000;

// The offloads wanted on, with `ethtool -K`'s short name for each (ethtool(8)): checksums and
// segmentation in the NIC, and receive coalescing (GRO). LRO and hardware GRO are left to the
// driver (they are not always safe with forwarding or XDP).
struct Wanted {
  const char* name;        // netlink's long name
  const char* short_name;  // ethtool -K's
};
constexpr Wanted kWanted[] = {
    {"rx-checksum", "rx"},
    {"tx-checksum-ip-generic", "tx"},
    {"tx-checksum-ipv4", "tx"},
    {"tx-checksum-ipv6", "tx"},
    {"tx-scatter-gather", "sg"},
    {"tx-tcp-segmentation", "tso"},
    {"tx-tcp6-segmentation", "tso"},
    {"tx-generic-segmentation", "gso"},
    {"rx-gro", "gro"},
};

// Whether the NIC's RDMA device has a port of `link_layer` ("Ethernet": RoCE).
bool rdma_link(const inventory::NetworkFacts& net, const inventory::PciNic& nic,
               const char* link_layer) {
  if (!nic.rdma_device) return false;
  for (const auto& d : net.rdma)
    if (d.name == *nic.rdma_device)
      return std::any_of(d.ports.begin(), d.ports.end(),
                         [&](const auto& p) { return p.link_layer == link_layer; });
  return false;
}

const inventory::NetInterface* interface_named(const inventory::NetworkFacts& net,
                                               const std::string& name) {
  for (const auto& i : net.interfaces)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace

std::vector<Finding> nic_settings(const AuditInput& in, const settings::ProfileEntry& entry) {
  const auto want = settings::gpu_judge::expected_bool(entry);
  if (want && !*want) return settings::gpu_judge::not_asked(entry);
  const auto& net = in.facts.network;
  std::vector<Finding> out;
  for (const auto& nic : net.nics) {
    const bool roce = rdma_link(net, nic, "Ethernet");
    const bool ipoib = rdma_link(net, nic, "InfiniBand");
    for (const auto& name : nic.netdevs) {
      const auto* i = interface_named(net, name);
      // Ethernet only (an older capture has no type: an InfiniBand port's netdev is IPoIB, which
      // NCCL does not use for its traffic: it speaks IB verbs).
      if (i == nullptr || (i->type ? *i->type != kArphrdEther : ipoib)) continue;
      Finding f = judge(entry, kArea, "", {});
      f.expected = fmt::format(
          "rings at the NIC's maximum, checksum, segmentation and GRO "
          "offloads on{}",
          roce ? fmt::format(", MTU {} (RoCE)", kRoceMtu) : "");
      const std::string label = fmt::format("{} ({})", name, nic.pci_address);
      if (!i->ethtool) {
        f.severity = Severity::kInfo;
        f.unknown = true;
        f.summary = fmt::format("{}: its rings and offloads were not read", label);
        f.notes.push_back(in.root.this_kernel()
                              ? "ethtool netlink did not answer (see `dltune env`)"
                              : "this host tree holds no ethtool record "
                                "(/run/dltune/capture/ethtool.json): capture it again");
        out.push_back(std::move(f));
        continue;
      }
      const auto& e = *i->ethtool;
      if (!e.rings && e.offloads_error) {
        f.severity = Severity::kInfo;
        f.unknown = true;
        f.summary = fmt::format("{}: its rings and offloads could not be read", label);
        f.notes.push_back("rings: " + e.rings_error.value_or("not reported"));
        f.notes.push_back("offloads: " + *e.offloads_error);
        out.push_back(std::move(f));
        continue;
      }
      std::vector<std::string> problems, commands;
      Severity sev = Severity::kOk;
      if (e.rings) {
        f.evidence.push_back(
            {"ethtool netlink: rings", fmt::format("rx {} of {}, tx {} of {}", e.rings->rx,
                                                   e.rings->rx_max, e.rings->tx, e.rings->tx_max)});
        if (e.rings->rx < e.rings->rx_max || e.rings->tx < e.rings->tx_max) {
          problems.push_back(fmt::format("rings rx {} of {}, tx {} of {}", e.rings->rx,
                                         e.rings->rx_max, e.rings->tx, e.rings->tx_max));
          commands.push_back(
              fmt::format("ethtool -G {} rx {} tx {}", name, e.rings->rx_max, e.rings->tx_max));
          sev = worse(sev, Severity::kInfo);
        }
      } else if (e.rings_error) {
        f.notes.push_back("rings not reported: " + *e.rings_error);
      }
      std::vector<std::string> off, short_names;
      for (const auto& w : kWanted) {
        const auto it = e.offloads.find(w.name);
        if (it == e.offloads.end() || it->second.active || !it->second.changeable) continue;
        off.push_back(w.name);
        if (std::find(short_names.begin(), short_names.end(), w.short_name) == short_names.end())
          short_names.push_back(w.short_name);
      }
      if (e.offloads_error) f.notes.push_back("offloads not reported: " + *e.offloads_error);
      std::vector<std::string> on;
      for (const auto& [n, o] : e.offloads)
        if (o.active) on.push_back(n);
      if (!e.offloads_error)
        f.evidence.push_back(
            {"ethtool netlink: offloads on", on.empty() ? "none" : text::join(on, " ")});
      if (!off.empty()) {
        problems.push_back("off: " + text::join(off, " "));
        std::string k = "ethtool -K " + name;
        for (const auto& s : short_names) k += " " + s + " on";
        commands.push_back(k);
        sev = worse(sev, settings::gpu_judge::not_met(entry));
      }
      if (roce && i->mtu && *i->mtu < kRoceMtu) {
        f.evidence.push_back({"/sys/class/net/" + name + "/mtu", std::to_string(*i->mtu)});
        problems.push_back(fmt::format("MTU {} on a RoCE interface", *i->mtu));
        commands.push_back(fmt::format("ip link set {} mtu {}", name, kRoceMtu));
        f.notes.push_back(fmt::format(
            "RoCE's path MTU is the largest of 256 to 4096 bytes that fits the interface's MTU "
            "with its headers: 1024 at 1500, 4096 from about 4200; set {} only where every "
            "switch port and peer on the fabric carries it",
            kRoceMtu));
        sev = worse(sev, Severity::kInfo);
      }
      f.severity = sev;
      if (problems.empty()) {
        f.actual = "as expected";
        f.summary = fmt::format("{}: rings at the maximum, offloads on{}", label,
                                roce ? fmt::format(", MTU {}", i->mtu.value_or(0)) : "");
      } else {
        f.actual = text::join(problems, "; ");
        f.summary = fmt::format("{}: {}", label, f.actual);
        f.fix = Fix{text::join(commands, "; "), false};
        f.notes.push_back(
            "not kept across a reboot: keep them in the host's network configuration (a "
            "systemd .link file's RxBufferSize=, TxBufferSize=, GenericReceiveOffload=, "
            "TCPSegmentationOffload=, MTUBytes=: systemd.link(5); or NetworkManager's "
            "ethtool settings)");
        container_advice(in, f, "");
      }
      out.push_back(std::move(f));
    }
  }
  if (out.empty())
    out.push_back(not_applicable(entry, kArea, "no Ethernet interface on a training NIC"));
  return out;
}

}  // namespace dltune::audit

// Rules for multi-node training: PCIe ACS on the bridges between GPUs, and RDMA ports. The ACS
// reading is shared with pci.gpu_nic (placement_rules.cpp), which looks at the bridges between
// each GPU and its nearest NIC.
#include <cstdint>

#include <fmt/format.h>

#include "audit/system_rules.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::audit {

namespace {

std::uint32_t le32(const std::string& b, std::size_t off) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[off])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[off + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[off + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[off + 3])) << 24;
}

}  // namespace

std::optional<std::uint16_t> acs_control(const std::string& config) {
  // PCIe extended capabilities start at 0x100: a 32-bit header of ID (bits 0-15), version
  // (16-19) and the next offset (20-31). The ACS capability is ID 0x000D; its control register
  // is the 16-bit word at +6 (PCI Express Base Specification, "ACS Extended Capability").
  if (config.size() < 0x104) return std::nullopt;
  std::size_t off = 0x100;
  for (int guard = 0; off >= 0x100 && off + 8 <= config.size() && guard < 96; ++guard) {
    const auto header = le32(config, off);
    if (header == 0 || header == 0xffffffffu) return std::nullopt;
    if ((header & 0xffffu) == 0x000d)
      return static_cast<std::uint16_t>(static_cast<unsigned char>(config[off + 6]) |
                                        static_cast<unsigned char>(config[off + 7]) << 8);
    off = (header >> 20) & 0xffcu;
  }
  return std::nullopt;
}

BridgeAcs bridge_acs(const host::Root& root, const std::string& bdf) {
  BridgeAcs a;
  // `config` is the function's configuration space (Documentation/PCI/sysfs-pci.rst); readers
  // without CAP_SYS_ADMIN get only its first 64 bytes (drivers/pci/pci-sysfs.c pci_read_config).
  auto config = root.read("/sys/bus/pci/devices/" + bdf + "/config", 4096);
  if (!config || !*config) return a;
  a.readable = (*config)->size() >= 0x104;
  a.control = acs_control(**config);
  return a;
}

Fix acs_fix(const std::vector<std::string>& bridges) {
  return Fix{fmt::format("for b in {}; do setpci -s $b ECAP_ACS+6.w=0000; done  (until reboot; "
                         "or disable ACS in the BIOS)",
                         fmt::join(bridges, " ")),
             false};
}

std::vector<Finding> pci_acs(const AuditInput& in, const settings::ProfileEntry& entry) {
  auto base = [&](Severity sev, bool applicable, std::string summary) {
    Finding f;
    f.id = entry.key;
    f.area = "kernel";
    f.severity = sev;
    f.applicable = applicable;
    f.summary = std::move(summary);
    f.expected = entry.expected.text();
    f.reason = entry.reason;
    f.source = entry.source;
    return f;
  };
  auto names = in.root.list("/sys/bus/pci/devices");
  if (!names || !*names) return {base(Severity::kOk, false, "pci.acs: no PCI devices in sysfs")};
  int bridges = 0, readable = 0;
  std::vector<std::string> enabled;
  std::vector<Evidence> ev;
  for (const auto& bdf : **names) {
    const std::string dir = "/sys/bus/pci/devices/" + bdf;
    auto cls = in.root.read(dir + "/class", 64);
    if (!cls || !*cls || !text::trim(**cls).starts_with("0x0604")) continue;  // PCI-PCI bridge
    ++bridges;
    const auto acs = bridge_acs(in.root, bdf);
    if (acs.readable) ++readable;
    if (acs.redirects()) {
      enabled.push_back(bdf);
      ev.push_back({dir + "/config", fmt::format("ACS control 0x{:04x}", *acs.control)});
    }
  }
  const bool noacs = in.facts.os.cmdline && in.facts.os.cmdline->pci_noacs;
  if (bridges == 0) return {base(Severity::kOk, false, "pci.acs: no PCI bridges on this host")};
  if (readable == 0) {
    auto f = base(noacs ? Severity::kInfo : Severity::kOk, false,
                  fmt::format("pci.acs: the extended config space of {} bridge(s) is not readable "
                              "(needs root on the host){}",
                              bridges, noacs ? "; pci=noacs is on the command line" : ""));
    return {f};
  }
  if (enabled.empty()) {
    auto f =
        base(Severity::kOk, true,
             fmt::format("pci.acs: ACS redirection is off on all {} readable bridges", readable));
    f.actual = "disabled";
    return {f};
  }
  auto f = base(severity_from(entry.severity).value_or(Severity::kWarn), true,
                fmt::format("pci.acs: ACS redirection is on at {} of {} bridges ({})",
                            enabled.size(), readable, fmt::join(enabled, ", ")));
  f.actual = "enabled";
  f.evidence = std::move(ev);
  f.fix = acs_fix(enabled);
  return {f};
}

std::vector<Finding> rdma_ports(const AuditInput& in, const settings::ProfileEntry& entry) {
  std::vector<Finding> out;
  for (const auto& d : in.facts.network.rdma) {
    for (const auto& p : d.ports) {
      const std::string path =
          fmt::format("/sys/class/infiniband/{}/ports/{}/state", d.name, p.port);
      Finding f = judge(entry, "network", p.state.value_or(""), {{path, p.state.value_or("?")}});
      f.summary = fmt::format("{} port {} ({}) is {}", d.name, p.port,
                              p.link_layer == "Ethernet" ? "RoCE" : p.link_layer.value_or("?"),
                              p.state.value_or("in an unknown state"));
      if (f.severity != Severity::kOk)
        f.fix = Fix{fmt::format("check the cable and the switch port; `ibstat {}` shows the "
                                "physical state",
                                d.name),
                    false};
      out.push_back(std::move(f));
    }
  }
  if (out.empty()) {
    Finding f;
    f.id = entry.key;
    f.area = "network";
    f.applicable = false;
    f.summary = "rdma.ports: no InfiniBand or RoCE devices on this host";
    f.expected = entry.expected.text();
    f.reason = entry.reason;
    f.source = entry.source;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::audit

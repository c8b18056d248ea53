#pragma once
// Values of a PCI device's sysfs attributes and PCI addresses (kernel Documentation/ABI/testing/
// sysfs-bus-pci; drivers/pci/pci-sysfs.c and drivers/pci/probe.c for the text formats).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dltune::host::parse {

// A PCI address in sysfs's form, "0000:17:00.0" (domain at least 4 hex digits, lower case), from
// "00000000:17:00.0" (NVML), "0000:17:00.0", "17:00.0" (lspci, domain 0) in either case.
// nullopt when it is not an address.
[[nodiscard]] std::optional<std::string> pci_address(std::string_view s);

struct LinkSpeed {
  double gts = 0;                 // transfer rate per lane, GT/s
  std::optional<int> generation;  // PCIe generation for the rate (2.5 -> 1 ... 64 -> 6)
};

// current_link_speed / max_link_speed: "16.0 GT/s PCIe" (kernels since 5.x), "8 GT/s" and
// "2.5 GT/s" (older kernels). "Unknown", "Unknown speed" and anything else give nullopt.
[[nodiscard]] std::optional<LinkSpeed> pcie_link_speed(std::string_view s);

// The PCIe generation whose signalling rate is `gts` (2.5, 5, 8, 16, 32, 64 GT/s).
[[nodiscard]] std::optional<int> pcie_generation(double gts);

// current_link_width / max_link_width: "16" (or "x16"); 0 (link down) and more than 32 lanes
// (what a device that fell off the bus reads as) give nullopt.
[[nodiscard]] std::optional<int> pcie_link_width(std::string_view s);

// Hex attributes such as `class` ("0x030200"), `vendor` ("0x10de"), `device`; nullopt for junk.
[[nodiscard]] std::optional<std::uint32_t> pci_hex(std::string_view s);

}  // namespace dltune::host::parse

#pragma once
// pci.ids, the PCI ID database (https://pci-ids.ucw.cz/; /usr/share/misc/pci.ids on Debian,
// /usr/share/hwdata/pci.ids on Fedora). Only the ids asked for are looked up, in one pass that
// stops at the device class list ("C 00  Unclassified device").
//
//   10de  NVIDIA Corporation
//   <TAB>2330  GH100 [H100 SXM5 80GB]
//   <TAB><TAB>10de 16c1  H100 SXM5 80GB
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::host::parse {

struct PciId {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::optional<std::uint16_t> subsystem_vendor;
  std::optional<std::uint16_t> subsystem_device;
};

struct PciNames {
  std::optional<std::string> vendor;     // "NVIDIA Corporation"
  std::optional<std::string> device;     // "GH100 [H100 SXM5 80GB]"
  std::optional<std::string> subsystem;  // "H100 SXM5 80GB"
};

// One PciNames per id in `wanted`, in the same order. Lines that do not fit the format (odd
// indentation, bad hex, comments, CRLF ends) are skipped.
[[nodiscard]] std::vector<PciNames> pci_ids_lookup(std::string_view text,
                                                   std::span<const PciId> wanted);

}  // namespace dltune::host::parse

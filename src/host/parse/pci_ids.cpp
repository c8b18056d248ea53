#include "host/parse/pci_ids.hpp"

#include <cctype>

#include "core/text.hpp"

namespace dltune::host::parse {

namespace {

// Four hex digits at the start of `s`, then at least one space or tab (or the end).
std::optional<std::uint16_t> id_at(std::string_view s) {
  if (s.size() < 4) return std::nullopt;
  for (std::size_t i = 0; i < 4; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
  if (s.size() > 4 && s[4] != ' ' && s[4] != '\t') return std::nullopt;
  return static_cast<std::uint16_t>(*text::to_uint(s.substr(0, 4), 16));
}

std::optional<std::string> name_after(std::string_view s, std::size_t pos) {
  if (pos > s.size()) return std::nullopt;
  const auto n = text::trim(s.substr(pos));
  if (n.empty()) return std::nullopt;
  return std::string(n);
}

}  // namespace

std::vector<PciNames> pci_ids_lookup(std::string_view text, std::span<const PciId> wanted) {
  std::vector<PciNames> out(wanted.size());
  if (wanted.empty()) return out;
  // The current vendor and device blocks, when ones we want; -1 otherwise. (Plain ints, not
  // optionals: g++ 12 at -O2 warns that an engaged optional<uint16_t> "may be uninitialized".)
  int vendor = -1;
  int device = -1;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] != '\t') {
      // A vendor line, or the start of the class list, which ends the vendors.
      if (line.starts_with("C ")) break;
      device = -1;
      vendor = -1;
      const auto v = id_at(line);
      if (!v) continue;
      for (std::size_t i = 0; i < wanted.size(); ++i)
        if (wanted[i].vendor == *v) {
          vendor = *v;
          if (!out[i].vendor) out[i].vendor = name_after(line, 4);
        }
      continue;
    }
    if (vendor < 0) continue;
    if (line.size() > 1 && line[1] != '\t') {
      device = -1;
      const auto d = id_at(line.substr(1));
      if (!d) continue;
      for (std::size_t i = 0; i < wanted.size(); ++i)
        if (wanted[i].vendor == vendor && wanted[i].device == *d) {
          device = *d;
          if (!out[i].device) out[i].device = name_after(line, 5);
        }
      continue;
    }
    if (device < 0) continue;
    // "\t\tSSSS DDDD  name"
    const auto rest = line.substr(2);
    const auto sv = id_at(rest);
    const auto sd = rest.size() > 5 ? id_at(rest.substr(5)) : std::nullopt;
    if (!sv || !sd) continue;
    for (std::size_t i = 0; i < wanted.size(); ++i)
      if (wanted[i].vendor == vendor && wanted[i].device == device &&
          wanted[i].subsystem_vendor == sv && wanted[i].subsystem_device == sd && !out[i].subsystem)
        out[i].subsystem = name_after(rest, 9);
  }
  return out;
}

}  // namespace dltune::host::parse

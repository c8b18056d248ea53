#include "host/parse/pci_device.hpp"

#include <cctype>
#include <cmath>

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::host::parse {

namespace {

std::optional<std::uint64_t> hex_field(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  for (const char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return text::to_uint(s, 16);
}

}  // namespace

std::optional<std::string> pci_address(std::string_view s) {
  s = text::trim(s);
  // [domain:]bus:device.function
  const auto dot = s.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto fn = hex_field(s.substr(dot + 1), 1);
  const auto parts = text::split(s.substr(0, dot), ':');
  if (parts.size() != 2 && parts.size() != 3) return std::nullopt;
  const std::size_t b = parts.size() - 2;
  const auto domain = parts.size() == 3 ? hex_field(parts[0], 8) : std::optional<std::uint64_t>(0);
  const auto bus = hex_field(parts[b], 2);
  const auto dev = hex_field(parts[b + 1], 2);
  if (!fn || !domain || !bus || !dev || *dev > 0x1f || *fn > 7) return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", *domain, *bus, *dev, *fn);
}

std::optional<int> pcie_generation(double gts) {
  // PCI Express Base Specification: 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 GT/s for Gen1..Gen6.
  constexpr double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int i = 0; i < 6; ++i)
    if (std::fabs(gts - kRates[i]) < 0.01) return i + 1;
  return std::nullopt;
}

std::optional<LinkSpeed> pcie_link_speed(std::string_view s) {
  const auto f = text::fields(text::trim(s));
  if (f.size() < 2 || f[1] != "GT/s") return std::nullopt;
  const auto v = text::to_double(f[0]);
  if (!v || !(*v > 0) || *v > 1000) return std::nullopt;
  return LinkSpeed{*v, pcie_generation(*v)};
}

std::optional<int> pcie_link_width(std::string_view s) {
  s = text::trim(s);
  if (!s.empty() && (s[0] == 'x' || s[0] == 'X')) s.remove_prefix(1);
  const auto v = text::to_uint(s);
  if (!v || *v == 0 || *v > 32) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<std::uint32_t> pci_hex(std::string_view s) {
  s = text::trim(s);
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  const auto v = hex_field(s, 8);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

}  // namespace dltune::host::parse

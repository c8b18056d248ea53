// Sysctl names and their /proc/sys paths (CONTRIBUTING.md, convention 10).
//
// The two spellings follow sysctl(8) and systemd's sysctl.d(5) ("sysctl_normalize" in systemd's
// src/shared/sysctl-util.c): when the first separator in a name is '.', the name is in dotted
// form and '.' separates components while '/' stands for a '.' inside one component
// (net.ipv4.conf.eth0/100.rp_filter names the VLAN interface "eth0.100"); when the first
// separator is '/', the name is in slash form and dots are part of the components.
#include "settings/sysctl_name.hpp"

#include <vector>

#include <fmt/format.h>

namespace dltune::settings {
namespace {

bool allowed(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == ':' || c == '/' || c == '@' || c == '+' || c == '-';
}

// The components of `name` as they appear under /proc/sys, checked.
Result<std::vector<std::string>> components(std::string_view name) {
  const std::string input(name);
  if (name.empty()) return fail("empty sysctl name", input);
  for (char c : name)
    if (!allowed(c))
      return fail(
          fmt::format("sysctl name has a character outside [A-Za-z0-9_.:/@+-] ({}):",
                      c > ' ' && c < 127 ? fmt::format("'{}'", c)
                                         : fmt::format("\\x{:02x}", static_cast<unsigned char>(c))),
          input);
  if (name.front() == '/' || name.front() == '.')
    return fail("sysctl name starts with a separator (names are relative to /proc/sys):", input);
  if (name.back() == '/' || name.back() == '.')
    return fail("sysctl name ends with a separator:", input);

  const auto first_sep = name.find_first_of("./");
  const bool dotted = name[first_sep == std::string_view::npos ? 0 : first_sep] == '.';
  const char sep = dotted ? '.' : '/';
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto end = name.find(sep, start);
    std::string part(name.substr(start, end == std::string_view::npos ? name.npos : end - start));
    if (dotted)
      for (char& c : part)
        if (c == '/') c = '.';
    if (part.empty()) return fail("sysctl name has an empty component:", input);
    if (part == "." || part == "..") return fail("sysctl name has a '.' or '..' component:", input);
    out.push_back(std::move(part));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  // A setting is a file inside one of /proc/sys's directories ("vm.swappiness"), never a
  // top directory itself.
  if (out.size() < 2) return fail("sysctl name names a directory, not a setting:", input);
  return out;
}

}  // namespace

Result<std::string> sysctl_path(std::string_view name) {
  auto parts = components(name);
  if (!parts) return tl::unexpected(parts.error());
  return fmt::format("/proc/sys/{}", fmt::join(*parts, "/"));
}

Result<std::string> sysctl_normalise(std::string_view name) {
  auto parts = components(name);
  if (!parts) return tl::unexpected(parts.error());
  for (auto& p : *parts)
    for (char& c : p)
      if (c == '.') c = '/';
  return fmt::format("{}", fmt::join(*parts, "."));
}

}  // namespace dltune::settings

#include "pystack/maps.hpp"

#include <charconv>

#include <fmt/core.h>

namespace dltune::pystack {

namespace {

bool hex(std::string_view s, std::uint64_t& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

bool decimal(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  out = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

// The next field separated by spaces; `s` moves past it.
std::string_view field(std::string_view& s) {
  const auto begin = s.find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    s = {};
    return {};
  }
  s.remove_prefix(begin);
  const auto end = s.find(' ');
  const auto f = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  return f;
}

bool parse_line(std::string_view line, Mapping& m) {
  const auto range = field(line);
  const auto perms = field(line);
  const auto offset = field(line);
  const auto dev = field(line);
  const auto inode = field(line);
  const auto dash = range.find('-');
  if (dash == std::string_view::npos || !hex(range.substr(0, dash), m.start) ||
      !hex(range.substr(dash + 1), m.end) || m.end < m.start)
    return false;
  const auto colon = dev.find(':');
  std::uint64_t major = 0, minor = 0;
  if (perms.size() != 4 || !hex(offset, m.offset) || colon == std::string_view::npos ||
      !hex(dev.substr(0, colon), major) || !hex(dev.substr(colon + 1), minor) ||
      major > 0xffffffffu || minor > 0xffffffffu || !decimal(inode, m.inode))
    return false;
  m.dev_major = static_cast<std::uint32_t>(major);
  m.dev_minor = static_cast<std::uint32_t>(minor);
  m.readable = perms[0] == 'r';
  m.writable = perms[1] == 'w';
  m.executable = perms[2] == 'x';
  const auto path = line.find_first_not_of(' ');
  m.path = path == std::string_view::npos ? std::string() : std::string(line.substr(path));
  return true;
}

}  // namespace

Result<std::vector<Mapping>> parse_maps(std::string_view text) {
  std::vector<Mapping> out;
  std::size_t number = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++number;
    if (line.empty()) continue;
    Mapping m;
    if (!parse_line(line, m))
      return fail(fmt::format("cannot parse line {} of", number), "/proc/PID/maps");
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace dltune::pystack

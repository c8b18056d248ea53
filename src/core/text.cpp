#include "core/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace dltune::text {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

namespace {
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
}  // namespace

std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) ++i;
    const auto b = i;
    while (i < s.size() && !is_blank(s[i])) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

std::string normalise_spaces(std::string_view s) {
  std::string out;
  for (const auto f : fields(trim(s))) {
    if (!out.empty()) out += ' ';
    out += f;
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < s.size()) {
    auto pos = s.find('\n', start);
    if (pos == std::string_view::npos) pos = s.size();
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.starts_with(prefix);
}

std::optional<std::int64_t> to_int(std::string_view s, int base) {
  s = trim(s);
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  const auto u = to_uint(s, base);
  if (!u || *u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return neg ? -static_cast<std::int64_t>(*u) : static_cast<std::int64_t>(*u);
}

std::optional<std::uint64_t> to_uint(std::string_view s, int base) {
  s = trim(s);
  if (base == 0) {
    if (s.starts_with("0x") || s.starts_with("0X")) {
      s.remove_prefix(2);
      base = 16;
    } else {
      base = 10;
    }
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  return std::string(s);
}

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  if (v >= 100 || v == static_cast<double>(static_cast<std::uint64_t>(v)))
    return fmt::format("{:.0f} {}", v, kUnits[u]);
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view s) {
  std::vector<int> out;
  s = trim(s);
  if (s.empty()) return out;
  for (auto part : split(s, ',')) {
    part = trim(part);
    const auto dash = part.find('-');
    if (dash == std::string_view::npos) {
      const auto v = to_uint(part);
      if (!v || *v > 1u << 20) return std::nullopt;
      out.push_back(static_cast<int>(*v));
    } else {
      const auto a = to_uint(part.substr(0, dash));
      const auto b = to_uint(part.substr(dash + 1));
      if (!a || !b || *a > *b || *b > 1u << 20) return std::nullopt;
      for (auto i = *a; i <= *b; ++i) out.push_back(static_cast<int>(i));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string format_cpu_list(const std::vector<int>& ids) {
  std::string out;
  std::size_t i = 0;
  while (i < ids.size()) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", ids[i]) : fmt::format("{}-{}", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

std::optional<std::vector<int>> parse_cpu_mask(std::string_view s) {
  s = trim(s);
  std::string hex;
  for (auto part : split(s, ',')) hex += std::string(trim(part));
  if (hex.empty()) return std::nullopt;
  std::vector<int> out;
  const int n = static_cast<int>(hex.size());
  for (int i = 0; i < n; ++i) {
    const char c = hex[static_cast<std::size_t>(n - 1 - i)];
    int nib = 0;
    if (c >= '0' && c <= '9')
      nib = c - '0';
    else if (c >= 'a' && c <= 'f')
      nib = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      nib = c - 'A' + 10;
    else
      return std::nullopt;
    for (int b = 0; b < 4; ++b)
      if (nib & (1 << b)) out.push_back(i * 4 + b);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::int64_t> parse_duration_ns(std::string_view s) {
  s = trim(s);
  std::size_t digits = 0;
  while (digits < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[digits])) != 0 || s[digits] == '.'))
    ++digits;
  if (digits == 0) return std::nullopt;
  const auto number = to_double(s.substr(0, digits));
  if (!number || *number < 0) return std::nullopt;
  const std::string_view unit = s.substr(digits);
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  else if (unit == "m" || unit == "min")
    scale = 60e9;
  else if (unit == "h")
    scale = 3600e9;
  else
    return std::nullopt;
  const double ns = *number * scale;
  if (ns > 9.2e18) return std::nullopt;
  return static_cast<std::int64_t>(ns + 0.5);
}

std::string human_duration(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s < 90) return std::to_string(s) + " s";
  const long long minutes = (s + 30) / 60;
  if (minutes < 90) return std::to_string(minutes) + " min";
  return std::to_string(minutes / 60) + " h " + std::to_string(minutes % 60) + " min";
}

}  // namespace dltune::text

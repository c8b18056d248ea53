#include "core/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/core.h>

namespace dltune::text {

std::string shell_quote(std::string_view s) {
  const bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_-./:=+,@%").find(c) != std::string_view::npos;
  });
  if (safe) return std::string(s);
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

namespace {

// How many bytes at `i` of `s` make one control character (0 for none).
std::size_t control_at(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x20 || c == 0x7f) return 1;
  if (c == 0xc2 && i + 1 < s.size()) {
    const auto next = static_cast<unsigned char>(s[i + 1]);
    if (next >= 0x80 && next <= 0x9f) return 2;
  }
  return 0;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // The optimal string alignment distance: Levenshtein's plus a swap of two neighbours as one
  // edit ("plna" is one from "plan"), a row at a time with the two before it.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] =
          std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::string nearest_word(std::string_view word, const std::vector<std::string>& known) {
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 2);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& k : known) {
    if (k == word) continue;
    const auto d = edit_distance(word, k);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (const auto n = control_at(s, i); n != 0) {
      out += '?';
      i += n;
    } else {
      out += s[i++];
    }
  }
  return out;
}

bool is_printable_of(std::string_view shown, std::string_view raw) {
  std::size_t j = 0;
  for (std::size_t i = 0; i < raw.size(); ++j) {
    if (j >= shown.size()) return false;
    if (const auto n = control_at(raw, i); n != 0) {
      if (shown[j] != '?') return false;
      i += n;
    } else {
      if (shown[j] != raw[i]) return false;
      ++i;
    }
  }
  return j == shown.size();
}

std::string wrap(std::string_view s, std::size_t indent, std::size_t width) {
  std::string out;
  std::size_t col = indent;
  bool first_line = true;
  for (const auto line : lines(s)) {
    if (!first_line) {
      out += '\n' + std::string(indent, ' ');
      col = indent;
    }
    first_line = false;
    bool first = true;
    for (const auto word : fields(line)) {
      if (!first && col + 1 + word.size() > width) {
        out += '\n' + std::string(indent, ' ');
        col = indent;
        first = true;
      }
      if (!first) {
        out += ' ';
        ++col;
      }
      out += word;
      col += word.size();
      first = false;
    }
  }
  return out;
}

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool path_within(std::string_view path, std::string_view dir) {
  return path == dir ||
         (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

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

std::optional<std::vector<int>> parse_cpu_list(std::string_view s, int max_id) {
  std::vector<int> out;
  s = trim(s);
  if (s.empty()) return out;
  if (max_id < 0 || max_id > kMaxListId) max_id = kMaxListId;
  // The ranges first, merged, and only then their ids: a list that names the same ids again and
  // again ("0-1048575" a thousand times, from another user's environment) costs the text's length
  // and the ids it names once, in time and in memory.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (auto part : split(s, ',')) {
    part = trim(part);
    const auto dash = part.find('-');
    std::optional<std::uint64_t> a, b;
    if (dash == std::string_view::npos) {
      a = b = to_uint(part);
    } else {
      a = to_uint(part.substr(0, dash));
      b = to_uint(part.substr(dash + 1));
    }
    if (!a || !b || *a > *b || *b > static_cast<std::uint64_t>(max_id)) return std::nullopt;
    ranges.emplace_back(*a, *b);
  }
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t next = 0;  // the first id not yet out
  for (const auto& [a, b] : ranges) {
    for (auto i = std::max(a, next); i <= b; ++i) out.push_back(static_cast<int>(i));
    next = std::max(next, b + 1);  // sorted and distinct: the next range starts after this one
  }
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
  if (s.empty()) return std::nullopt;
  // A bare number is seconds.
  if (auto seconds = to_double(s)) {
    if (!(*seconds >= 0) || *seconds * 1e9 > 9.2e18) return std::nullopt;
    return static_cast<std::int64_t>(*seconds * 1e9 + 0.5);
  }
  // Otherwise one or more NUMBER UNIT parts, largest unit first and each unit once: "1h30m".
  struct Unit {
    std::string_view name;
    double ns;
  };
  static constexpr Unit kUnits[] = {{"w", 604800e9}, {"d", 86400e9}, {"h", 3600e9},
                                    {"min", 60e9},   {"m", 60e9},    {"s", 1e9},
                                    {"ms", 1e6},     {"us", 1e3},    {"ns", 1}};
  double total = 0;
  double last_unit = 1e30;
  while (!s.empty()) {
    std::size_t digits = 0;
    while (digits < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[digits])) != 0 || s[digits] == '.'))
      ++digits;
    if (digits == 0) return std::nullopt;
    const auto number = to_double(s.substr(0, digits));
    if (!number) return std::nullopt;
    std::size_t letters = digits;
    while (letters < s.size() && std::isalpha(static_cast<unsigned char>(s[letters])) != 0)
      ++letters;
    const std::string_view unit = s.substr(digits, letters - digits);
    const Unit* found = nullptr;
    for (const auto& u : kUnits)
      if (u.name == unit) found = &u;
    if (found == nullptr || found->ns >= last_unit) return std::nullopt;
    last_unit = found->ns;
    total += *number * found->ns;
    s = s.substr(letters);
  }
  if (total > 9.2e18) return std::nullopt;
  return static_cast<std::int64_t>(total + 0.5);
}

std::string format_duration_ns(std::int64_t ns) {
  if (ns < 0) return "-" + format_duration_ns(-ns);
  if (ns == 0) return "0s";
  // Every unit that is not zero, largest first: exact, and read back by parse_duration_ns.
  std::string out;
  for (const auto& [size, unit] : {std::pair<std::int64_t, const char*>{604'800'000'000'000, "w"},
                                   {86'400'000'000'000, "d"},
                                   {3'600'000'000'000, "h"},
                                   {60'000'000'000, "m"},
                                   {1'000'000'000, "s"},
                                   {1'000'000, "ms"},
                                   {1'000, "us"},
                                   {1, "ns"}})
    if (ns >= size) {
      out += std::to_string(ns / size) + unit;
      ns %= size;
    }
  return out;
}

Result<std::int64_t> duration_within(std::string_view s, std::int64_t min_ns, std::int64_t max_ns) {
  const auto ns = parse_duration_ns(s);
  if (!ns) return fail("expected a duration such as 500ms, 90s, 15m or 1h30m");
  if (*ns < min_ns) return fail("too short (at least " + format_duration_ns(min_ns) + ")");
  if (*ns > max_ns) return fail("too long (at most " + format_duration_ns(max_ns) + ")");
  return *ns;
}

Result<std::int64_t> integer_within(std::string_view s, std::int64_t min, std::int64_t max) {
  const auto expected = [&] {
    return fail("expected a whole number from " + std::to_string(min) + " to " +
                std::to_string(max));
  };
  s = trim(s);
  const auto v = to_int(s);
  if (!v) {
    // A number too large for 64 bits is still a number: say so rather than "not a number".
    const bool digits = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (digits) return fail("too large (at most " + std::to_string(max) + ")");
    return expected();
  }
  if (*v < min) return fail("too small (at least " + std::to_string(min) + ")");
  if (*v > max) return fail("too large (at most " + std::to_string(max) + ")");
  return *v;
}

Result<double> number_within(std::string_view s, double min, double max) {
  const auto v = to_double(trim(s));
  if (!v || !std::isfinite(*v))
    return fail(fmt::format("expected a number from {} to {}", min, max));
  if (*v < min) return fail(fmt::format("too small (at least {})", min));
  if (*v > max) return fail(fmt::format("too large (at most {})", max));
  return *v;
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

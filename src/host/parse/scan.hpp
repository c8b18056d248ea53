#pragma once
// Scanning the text files of /proc, /sys and cgroupfs without allocating: lines with their
// numbers, blank-separated words, whole-word numbers, and errors that name the file, the line and
// the item. The sampler reads these files many times a second; every parser of them (here and
// monitor's) is built on these, so that each file's grammar is written once.
#include <charconv>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"

namespace dltune::host::parse {

namespace scan {

// The lines of a text, one at a time, with their numbers (from 1).
class Lines {
 public:
  explicit Lines(std::string_view text) : rest_(text) {}
  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    const auto nl = rest_.find('\n');
    line = rest_.substr(0, nl);
    rest_ = nl == std::string_view::npos ? std::string_view() : rest_.substr(nl + 1);
    ++number_;
    return true;
  }
  [[nodiscard]] int number() const { return number_; }

 private:
  std::string_view rest_;
  int number_ = 0;
};

// The next blank-separated word of `s` (empty at the end); `s` moves past it.
inline std::string_view token(std::string_view& s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  std::size_t j = i;
  while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
  const auto t = s.substr(i, j - i);
  s.remove_prefix(j);
  return t;
}

// A character of a C or Python identifier (ASCII letters, digits and '_').
inline bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// A whole word as an unsigned 64-bit number (no sign, no overflow, nothing after it).
inline bool to_u64(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
inline bool to_f64(std::string_view s, double& out) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The error for `item` on line `line` of `file`: "<what> /proc/stat line 3: 'x'".
[[nodiscard]] tl::unexpected<Error> bad(std::string_view what, std::string_view file, int line,
                                        std::string_view item);

}  // namespace scan

// A flat keyed file ("key value" per line: cpu.stat, memory.stat, memory.events, cpuacct.stat,
// memory.oom_control): `on(key, value)` for each line. A value that is not a number is an error
// naming `file` and the line; blank lines are skipped.
template <class F>
[[nodiscard]] Result<void> parse_keyed(std::string_view text, std::string_view file, F&& on) {
  scan::Lines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const auto key = scan::token(line);
    if (key.empty()) continue;
    const auto word = scan::token(line);
    std::uint64_t value = 0;
    if (!scan::to_u64(word, value)) return scan::bad("not a number in", file, lines.number(), word);
    on(key, value);
  }
  return {};
}

// /proc/meminfo (proc(5)): `on(key, value)` for each "Key:   123 kB" line, the value in bytes
// ("kB" is KiB), or as written for a count without a unit (HugePages_Total). Every line is
// checked: no ':', a value that is not a number, another unit, or a size past 2^64 bytes is an
// error naming /proc/meminfo and the line (number and text). Blank lines are skipped.
template <class F>
[[nodiscard]] Result<void> parse_meminfo_lines(std::string_view text, F&& on) {
  constexpr std::string_view kFile = "/proc/meminfo";
  scan::Lines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    auto rest = line;
    if (scan::token(rest).empty()) continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return scan::bad("no ':' in", kFile, lines.number(), line);
    const auto key = line.substr(0, colon);
    rest = line.substr(colon + 1);
    const auto word = scan::token(rest);
    std::uint64_t value = 0;
    if (!scan::to_u64(word, value))
      return scan::bad("not a number in", kFile, lines.number(), line);
    const auto unit = scan::token(rest);
    if (unit == "kB") {
      if (value > UINT64_MAX / 1024)
        return scan::bad("too large a size in", kFile, lines.number(), line);
      value *= 1024;
    } else if (!unit.empty()) {
      return scan::bad("unknown unit in", kFile, lines.number(), line);
    }
    if (!scan::token(rest).empty())
      return scan::bad("more than a value in", kFile, lines.number(), line);
    on(key, value);
  }
  return {};
}

}  // namespace dltune::host::parse

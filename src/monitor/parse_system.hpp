#pragma once
// Parsers of the host-wide files the sampler reads: /proc/stat, /proc/meminfo,
// /proc/vmstat, PSI files, /proc/diskstats, /proc/net/dev, and the flat keyed cgroup files.
//
// Each fills an existing struct and REUSES its vectors and strings (an element is overwritten in
// place, a name assigned only when it changed), so that parsing a warm sample allocates nothing.
// They scan string_views with std::from_chars; an error names the file, the line and the item.
#include <charconv>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "monitor/sample.hpp"

namespace dltune::monitor {

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

// /proc/stat (Documentation/filesystems/proc.rst): the "cpu" and "cpuN" lines, ctxt,
// processes, procs_running, procs_blocked. Offline CPUs have no line (cpu0, cpu2).
[[nodiscard]] Result<void> parse_proc_stat(std::string_view text, System& out);
// /proc/meminfo, kB to bytes.
[[nodiscard]] Result<void> parse_meminfo(std::string_view text, Memory& out);
// /proc/vmstat: the counters of VmStat. pgscan/pgsteal sum the reclaim sources (kswapd, direct,
// khugepaged, proactive), not the _anon/_file split, which counts the same pages again.
[[nodiscard]] Result<void> parse_vmstat(std::string_view text, VmStat& out);
// A PSI file (Documentation/accounting/psi.rst): "some ..." and, except in an old cpu file,
// "full ...". `file` names it in errors.
[[nodiscard]] Result<void> parse_pressure(std::string_view text, std::string_view file,
                                          Pressure& out);
// /proc/diskstats (Documentation/admin-guide/iostats.rst): 14 fields, 18 from Linux 4.18
// (discards), 20 from 5.5 (flushes). Only the names for which `whole_disk` is true are kept.
[[nodiscard]] Result<void> parse_diskstats(std::string_view text,
                                           const std::function<bool(std::string_view)>& whole_disk,
                                           std::vector<Disk>& out);
// /proc/net/dev: two header lines, then "name: 8 receive and 8 transmit counters"; "lo" left out.
[[nodiscard]] Result<void> parse_net_dev(std::string_view text, std::vector<NetDevice>& out);

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

// The first word of a one-number file ("52428800\n"); "max" (v2: no limit) gives `max_value`.
[[nodiscard]] Result<std::uint64_t> parse_number(std::string_view text, std::string_view file,
                                                 std::uint64_t max_value = UINT64_MAX);

}  // namespace dltune::monitor

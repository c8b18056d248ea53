// Parsers of the host-wide files (parse_system.hpp). No allocation on success: vectors are
// overwritten in place and trimmed at the end, names assigned only when they changed.
#include "monitor/parse_system.hpp"

#include <fmt/core.h>

#include <array>

namespace dltune::monitor {

namespace {

using scan::bad;
using scan::Lines;
using scan::to_u64;
using scan::token;

constexpr std::string_view kStat = "/proc/stat";

// The element at `i` of `v`, made when the vector is shorter (only while not warm).
template <class T>
T& slot(std::vector<T>& v, std::size_t i) {
  if (i == v.size()) v.emplace_back();
  return v[i];
}

void set_name(std::string& name, std::string_view value) {
  if (name != value) name.assign(value);
}

Result<void> cpu_line(std::string_view rest, int line, CpuTimes& c) {
  // user nice system idle iowait irq softirq steal [guest guest_nice]; at least the first 4
  // (iowait from 2.5.41, irq/softirq 2.6.0, steal 2.6.11: Documentation/filesystems/proc.rst).
  std::array<std::uint64_t*, 8> to = {&c.user,   &c.nice, &c.system,  &c.idle,
                                      &c.iowait, &c.irq,  &c.softirq, &c.steal};
  std::size_t n = 0;
  for (auto w = token(rest); !w.empty() && n < to.size(); w = token(rest), ++n)
    if (!to_u64(w, *to[n])) return bad("not a number in", kStat, line, w);
  if (n < 4) return bad("too few CPU times in", kStat, line, "cpu");
  for (; n < to.size(); ++n) *to[n] = 0;
  return {};
}

}  // namespace

Result<void> parse_proc_stat(std::string_view text, System& out) {
  Lines lines(text);
  std::string_view line;
  std::size_t ncpu = 0;
  bool total = false;
  while (lines.next(line)) {
    auto rest = line;
    const auto key = token(rest);
    if (key.empty()) continue;
    if (key.substr(0, 3) == "cpu") {
      CpuTimes* c = nullptr;
      int number = -1;
      if (key.size() == 3) {
        c = &out.total;
        total = true;
      } else {
        std::uint64_t id = 0;
        if (!to_u64(key.substr(3), id) || id > 1u << 20)
          return bad("not a CPU number in", kStat, lines.number(), key);
        c = &slot(out.cpus, ncpu++);
        number = static_cast<int>(id);
      }
      c->cpu = number;
      if (auto ok = cpu_line(rest, lines.number(), *c); !ok) return ok;
      continue;
    }
    std::uint64_t* to = nullptr;
    if (key == "ctxt")
      to = &out.context_switches;
    else if (key == "processes")
      to = &out.processes_forked;
    else if (key == "procs_running")
      to = &out.procs_running;
    else if (key == "procs_blocked")
      to = &out.procs_blocked;
    if (to == nullptr) continue;  // intr, softirq, btime: not sampled
    const auto w = token(rest);
    if (!to_u64(w, *to)) return bad("not a number in", kStat, lines.number(), w);
  }
  if (!total) return bad("no total 'cpu' line in", kStat, lines.number(), "cpu");
  out.cpus.resize(ncpu);  // shrinks only: a CPU taken offline
  return {};
}

Result<void> parse_meminfo(std::string_view text, Memory& out) {
  out = Memory{};
  return host::parse::parse_meminfo_lines(text, [&](std::string_view key, std::uint64_t value) {
    std::uint64_t* to = nullptr;
    switch (key[0]) {
      case 'M':
        if (key == "MemTotal")
          to = &out.total;
        else if (key == "MemFree")
          to = &out.free;
        else if (key == "MemAvailable")
          to = &out.available;
        break;
      case 'B':
        if (key == "Buffers") to = &out.buffers;
        break;
      case 'C':
        if (key == "Cached") to = &out.cached;
        break;
      case 'S':
        if (key == "Shmem")
          to = &out.shmem;
        else if (key == "SwapTotal")
          to = &out.swap_total;
        else if (key == "SwapFree")
          to = &out.swap_free;
        else if (key == "SwapCached")
          to = &out.swap_cached.emplace();
        break;
      case 'D':
        if (key == "Dirty") to = &out.dirty;
        break;
      case 'W':
        if (key == "Writeback") to = &out.writeback;
        break;
      case 'A':
        if (key == "AnonHugePages") to = &out.anon_huge;
        break;
      default:
        break;
    }
    if (to != nullptr) *to = value;
  });
}

Result<void> parse_vmstat(std::string_view text, VmStat& out) {
  out = VmStat{};
  // The reclaim sources of pgscan_* and pgsteal_* (mm/vmstat.c); pgscan_direct_throttle is a
  // count of throttling events and pgscan_anon/_file split the same pages by type: not summed.
  struct Key {
    std::string_view name;
    std::uint64_t VmStat::*field;
  };
  static constexpr std::array<Key, 20> kKeys = {{
      {"pswpin", &VmStat::pswpin},
      {"pswpout", &VmStat::pswpout},
      {"pgfault", &VmStat::pgfault},
      {"pgmajfault", &VmStat::pgmajfault},
      {"pgscan_kswapd", &VmStat::pgscan},
      {"pgscan_direct", &VmStat::pgscan},
      {"pgscan_khugepaged", &VmStat::pgscan},
      {"pgscan_proactive", &VmStat::pgscan},
      {"pgsteal_kswapd", &VmStat::pgsteal},
      {"pgsteal_direct", &VmStat::pgsteal},
      {"pgsteal_khugepaged", &VmStat::pgsteal},
      {"pgsteal_proactive", &VmStat::pgsteal},
      {"workingset_refault_file", &VmStat::workingset_refault_file},
      {"workingset_refault_anon", &VmStat::workingset_refault_anon},
      // Before Linux 5.9 only file pages had workingset refaults, under this one name.
      {"workingset_refault", &VmStat::workingset_refault_file},
      {"thp_fault_alloc", &VmStat::thp_fault_alloc},
      {"thp_fault_fallback", &VmStat::thp_fault_fallback},
      {"thp_collapse_alloc", &VmStat::thp_collapse_alloc},
      {"compact_stall", &VmStat::compact_stall},
      {"oom_kill", &VmStat::oom_kill},
  }};
  return parse_keyed(text, "/proc/vmstat", [&](std::string_view key, std::uint64_t value) {
    const char c = key[0];
    if (c != 'p' && c != 'w' && c != 't' && c != 'c' && c != 'o') return;
    for (const auto& k : kKeys)
      if (k.name == key) {
        out.*k.field += value;
        return;
      }
  });
}

Result<void> parse_pressure(std::string_view text, std::string_view file, Pressure& out) {
  out.full.reset();
  bool some = false;
  Lines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    auto rest = line;
    const auto kind = token(rest);
    if (kind.empty()) continue;
    PressureLine* p = nullptr;
    if (kind == "some") {
      p = &out.some;
      some = true;
    } else if (kind == "full") {
      p = &out.full.emplace();
    } else {
      return bad("neither 'some' nor 'full' in", file, lines.number(), kind);
    }
    int seen = 0;
    for (auto w = token(rest); !w.empty(); w = token(rest)) {
      const auto eq = w.find('=');
      const auto key = w.substr(0, eq);
      const auto value = eq == std::string_view::npos ? std::string_view() : w.substr(eq + 1);
      bool ok = true;
      if (key == "avg10")
        ok = scan::to_f64(value, p->avg10);
      else if (key == "avg60")
        ok = scan::to_f64(value, p->avg60);
      else if (key == "avg300")
        ok = scan::to_f64(value, p->avg300);
      else if (key == "total")
        ok = to_u64(value, p->total_us), seen |= 1;
      if (!ok) return bad("not a number in", file, lines.number(), w);
    }
    if (seen == 0) return bad("no total= in", file, lines.number(), kind);
  }
  if (!some) return bad("no 'some' line in", file, lines.number(), text.substr(0, 40));
  return {};
}

Result<void> parse_diskstats(std::string_view text,
                             const std::function<bool(std::string_view)>& whole_disk,
                             std::vector<Disk>& out) {
  constexpr std::string_view kFile = "/proc/diskstats";
  Lines lines(text);
  std::string_view line;
  std::size_t n = 0;
  while (lines.next(line)) {
    auto rest = line;
    const auto major = token(rest);
    if (major.empty()) continue;
    token(rest);  // minor
    const auto name = token(rest);
    if (name.empty()) return bad("no device name in", kFile, lines.number(), line);
    if (!whole_disk(name)) continue;
    // reads merged sectors ms, writes merged sectors ms, in_flight io_ms weighted (iostats.rst)
    std::array<std::uint64_t, 11> v{};
    for (auto& x : v) {
      const auto w = token(rest);
      if (w.empty()) return bad("fewer than 14 fields in", kFile, lines.number(), name);
      if (!to_u64(w, x)) return bad("not a number in", kFile, lines.number(), w);
    }
    Disk& d = slot(out, n++);
    set_name(d.name, name);
    d.reads = v[0];
    d.read_sectors = v[2];
    d.read_ms = v[3];
    d.writes = v[4];
    d.write_sectors = v[6];
    d.write_ms = v[7];
    d.in_flight = v[8];
    d.io_ms = v[9];
    d.weighted_io_ms = v[10];
  }
  out.resize(n);
  return {};
}

Result<void> parse_net_dev(std::string_view text, std::vector<NetDevice>& out) {
  constexpr std::string_view kFile = "/proc/net/dev";
  Lines lines(text);
  std::string_view line;
  std::size_t n = 0;
  while (lines.next(line)) {
    if (lines.number() <= 2) continue;  // "Inter-|   Receive ..." and " face |bytes ..."
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      if (auto probe = line; token(probe).empty()) continue;
      return bad("no ':' in", kFile, lines.number(), line);
    }
    auto head = line.substr(0, colon);
    const auto name = token(head);
    if (name.empty()) return bad("no interface name in", kFile, lines.number(), line);
    if (name == "lo") continue;
    // bytes packets errs drop fifo frame compressed multicast, then bytes packets errs drop
    // fifo colls carrier compressed (net/core/net-procfs.c).
    std::array<std::uint64_t, 16> v{};
    auto rest = line.substr(colon + 1);
    for (auto& x : v) {
      const auto w = token(rest);
      if (w.empty()) return bad("fewer than 16 counters in", kFile, lines.number(), name);
      if (!to_u64(w, x)) return bad("not a number in", kFile, lines.number(), w);
    }
    NetDevice& d = slot(out, n++);
    set_name(d.name, name);
    d.rx_bytes = v[0];
    d.rx_packets = v[1];
    d.rx_errors = v[2];
    d.rx_dropped = v[3];
    d.tx_bytes = v[8];
    d.tx_packets = v[9];
    d.tx_errors = v[10];
    d.tx_dropped = v[11];
  }
  out.resize(n);
  return {};
}

Result<std::uint64_t> parse_number(std::string_view text, std::string_view file,
                                   std::uint64_t max_value) {
  auto rest = text;
  const auto w = token(rest);
  const auto end = w.find('\n');
  const auto word = w.substr(0, end);
  if (word == "max") return max_value;
  std::uint64_t v = 0;
  if (!to_u64(word, v)) return bad("not a number in", file, 1, word);
  return v;
}

}  // namespace dltune::monitor

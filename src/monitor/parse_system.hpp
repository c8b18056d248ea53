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
#include "host/parse/scan.hpp"
#include "monitor/sample.hpp"

namespace dltune::monitor {

namespace scan = host::parse::scan;
using host::parse::parse_keyed;

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

// The first word of a one-number file ("52428800\n"); "max" (v2: no limit) gives `max_value`.
[[nodiscard]] Result<std::uint64_t> parse_number(std::string_view text, std::string_view file,
                                                 std::uint64_t max_value = UINT64_MAX);

}  // namespace dltune::monitor

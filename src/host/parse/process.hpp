#pragma once
// Pure parsers of the per-process files the sampler reads every sample.
//
// They take the text as read (a view of the collector's reused buffer) and allocate nothing: the
// name in /proc/PID/stat is returned as a view into that text. Field numbers and meanings are
// those of proc(5) and Documentation/filesystems/proc.rst.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::host::parse {

// /proc/PID/stat: "pid (comm) state ppid ...". The name may hold spaces and ')' itself (a
// process may call itself anything with prctl(PR_SET_NAME)), so it ends at the LAST ')'.
struct ProcStat {
  pid_t pid = 0;
  std::string_view comm;  // a view into the text given
  char state = '?';
  pid_t ppid = 0;
  std::uint64_t flags = 0;               // field 9, the kernel's PF_* flags (include/linux/sched.h)
  std::uint64_t minflt = 0, majflt = 0;  // fields 10 and 12
  std::uint64_t utime = 0, stime = 0;    // fields 14 and 15, clock ticks
  std::uint64_t threads = 0;             // field 20
  std::uint64_t start_ticks = 0;         // field 22, clock ticks since boot
  std::uint64_t rss_pages = 0;           // field 24
  // Field 28, the address of the bottom of the stack (proc(5)): set at each exec, at a new
  // random place where the address space is randomised, so it tells an exec that kept the name
  // (python3 running python3) from none. 0 for a kernel thread and where the reader may not
  // ptrace the process.
  std::uint64_t startstack = 0;
  int processor = -1;  // field 39
};
// Errors name the file ("/proc/PID/stat") and the field that is missing or not a number.
[[nodiscard]] Result<ProcStat> parse_proc_stat(std::string_view text);
// PF_KTHREAD in ProcStat::flags: a kernel thread (include/linux/sched.h), whose command line is
// empty and whose name may change with the work it does (a kworker's "-events" suffix).
constexpr std::uint64_t kPfKthread = 0x00200000;

// /proc/PID/schedstat: "run_ns wait_ns timeslices" (Documentation/scheduler/sched-stats.rst).
struct ProcSchedstat {
  std::uint64_t run_ns = 0, wait_ns = 0, timeslices = 0;
};
[[nodiscard]] Result<ProcSchedstat> parse_proc_schedstat(std::string_view text);

// /proc/PID/status: the two context-switch counters (absent on kernels before 2.6.23).
struct ProcSwitches {
  std::optional<std::uint64_t> voluntary, involuntary;
};
[[nodiscard]] ProcSwitches parse_proc_status_switches(std::string_view text);

// /proc/PID/io (Documentation/filesystems/proc.rst, "/proc/<pid>/io").
struct ProcIo {
  std::optional<std::uint64_t> rchar, wchar, read_bytes, write_bytes;
};
[[nodiscard]] ProcIo parse_proc_io(std::string_view text);

// /proc/PID/cmdline: the arguments, NUL-separated, joined by spaces into `out` (its capacity
// reused), at most kCmdlineMax bytes. Empty for a kernel thread (its cmdline file is empty).
inline constexpr std::size_t kCmdlineMax = 256;
void cmdline_text(std::string_view raw, std::string& out);

// /proc/PID/environ: the environment the process was exec'd with, NAME=VALUE entries each ending
// in a NUL (proc(5)). The value of `name`, or nothing when it is not there; the first entry of
// that name when there are several (getenv's choice).
// Every NAME=VALUE of /proc/PID/environ (the first of a name that appears twice).
[[nodiscard]] std::map<std::string, std::string> environ_entries(std::string_view raw);
[[nodiscard]] std::optional<std::string_view> environ_value(std::string_view raw,
                                                            std::string_view name);

}  // namespace dltune::host::parse

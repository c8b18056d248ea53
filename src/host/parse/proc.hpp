#pragma once
// Pure parsers of /proc and /etc text formats (CONTRIBUTING.md, convention 2): text in, struct out,
// no I/O. Each format's source is named where it is parsed.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::host::parse {

// /etc/os-release (os-release(5)): KEY=value with shell quoting.
[[nodiscard]] std::map<std::string, std::string> os_release(std::string_view text);

// /proc/meminfo (proc(5)): "Key:   123 kB" -> bytes; counts without unit (HugePages_*) as-is.
// An unparsable line is an error naming the line.
[[nodiscard]] Result<std::map<std::string, std::uint64_t>> meminfo(std::string_view text);
// /proc/vmstat: "name value" per line (the sampler reads a few of them: monitor's
// parse_vmstat, on the same scanner).
[[nodiscard]] Result<std::map<std::string, std::uint64_t>> vmstat(std::string_view text);

// /proc/cmdline: parameters split on spaces, honouring double quotes; "key=value" or "flag".
struct KernelParam {
  std::string key;
  std::optional<std::string> value;
};
[[nodiscard]] std::vector<KernelParam> cmdline(std::string_view text);

// /proc/stat "btime N" (seconds since the epoch).
[[nodiscard]] std::optional<std::int64_t> boot_time(std::string_view proc_stat);

// /proc/self/limits (proc(5)): "Max open files  1024  1048576  files".
struct Limit {
  std::optional<std::uint64_t> soft;  // empty = unlimited
  std::optional<std::uint64_t> hard;
  std::string unit;
};
[[nodiscard]] Result<std::map<std::string, Limit>> limits(std::string_view text);

// /proc/self/mountinfo (proc(5)): one mount per line.
struct Mount {
  int id = 0;
  int parent = 0;
  std::string major_minor;
  std::string root;                        // the root of the mount within its file system
  std::string mount_point;                 // octal escapes (\040) decoded
  std::vector<std::string> options;        // per-mount options (rw, noatime, ...)
  std::vector<std::string> super_options;  // per-superblock options (size=..., discard, ...)
  std::string fstype;
  std::string source;
};
[[nodiscard]] Result<std::vector<Mount>> mountinfo(std::string_view text);

// /proc/swaps: "Filename Type Size Used Priority", sizes in KiB.
struct Swap {
  std::string name;
  std::string type;
  std::uint64_t size_bytes = 0;
  std::uint64_t used_bytes = 0;
  int priority = 0;
};
[[nodiscard]] Result<std::vector<Swap>> swaps(std::string_view text);

// The sysfs "choice" format: "always [madvise] never" -> selected "madvise", all choices.
struct Choice {
  std::optional<std::string> selected;
  std::vector<std::string> options;
};
[[nodiscard]] Choice bracket_choice(std::string_view text);

// /proc/self/cgroup (cgroups(7)): "hierarchy-ID:controller-list:cgroup-path".
struct CgroupMembership {
  int hierarchy = 0;
  std::vector<std::string> controllers;  // empty for the v2 line "0::/path"
  std::string path;
};
[[nodiscard]] Result<std::vector<CgroupMembership>> proc_cgroup(std::string_view text);

// /proc/cpuinfo (x86 and arm64 keys): the first processor's identity and the union of flags.
struct CpuInfo {
  std::optional<std::string> model_name;
  std::optional<std::string> vendor;
  int processors = 0;
  std::vector<std::string> flags;
  bool hypervisor = false;  // the "hypervisor" flag: running under a VMM
};
[[nodiscard]] CpuInfo cpuinfo(std::string_view text);

}  // namespace dltune::host::parse

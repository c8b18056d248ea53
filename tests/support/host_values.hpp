#pragma once
// What a test that changes this host's settings records first and puts back at the end, whatever
// happens in between (integration tests, as root).
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run.hpp"

namespace dltune::testing {

inline const char* const kSysctlDropin = "/etc/sysctl.d/90-dltune.conf";
inline const char* const kLimitsDropin = "/etc/security/limits.d/90-dltune.conf";
inline const char* const kTmpfilesDropin = "/etc/tmpfiles.d/90-dltune.conf";
inline const char* const kUdevDropin = "/etc/udev/rules.d/60-dltune.rules";
inline const char* const kFstab = "/etc/fstab";

inline std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void put(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

// What to write back to restore a value read from `path`: a sysfs choice list such as THP's
// "always defer [defer+madvise] madvise never" is written as the chosen word alone (the kernel
// refuses the list); anything else as it was read.
inline std::string restorable(const std::string& read) {
  const auto open = read.find('[');
  const auto close = read.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return read;
  return read.substr(open + 1, close - open - 1) + "\n";
}

// The access-time mode of the mount at `mount_point` ("noatime", "relatime", "strictatime"),
// read from /proc/self/mountinfo (proc(5): the per-mount options are the 6th field).
inline std::optional<std::string> atime_of(const std::string& mount_point) {
  std::ifstream in("/proc/self/mountinfo");
  std::optional<std::string> mode;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, mp, opts;
    f >> id >> parent >> dev >> root >> mp >> opts;
    if (mp != mount_point) continue;
    const std::string o = "," + opts + ",";
    mode = o.find(",noatime,") != std::string::npos    ? "noatime"
           : o.find(",relatime,") != std::string::npos ? "relatime"
                                                       : "strictatime";
  }
  return mode;
}

// What a planned change's target holds now: a mount's atime mode, else the file's bytes.
inline std::optional<std::string> value_of(const nlohmann::json& change) {
  const std::string target = change["target"];
  return change["kind"] == "mount" ? atime_of(target) : slurp(target);
}

// The values of every target a plan touches (`tune plan --json`'s changes) or of given paths,
// and dltune's persistent files: recorded at construction, put back at destruction whatever
// happened in between.
class HostValues {
 public:
  explicit HostValues(const nlohmann::json& plan) {
    for (const auto& i : plan["items"])
      for (const auto& c : i["changes"])
        if (c["kind"] != "file") add(c);
    record_files();
  }
  explicit HostValues(const std::vector<std::string>& paths) {
    for (const auto& p : paths) values_[p] = slurp(p);
    record_files();
  }
  HostValues(const HostValues&) = delete;
  HostValues& operator=(const HostValues&) = delete;
  void add(const nlohmann::json& change) {
    const std::string target = change["target"];
    if (change["kind"] == "mount")
      mounts_[target] = atime_of(target);
    else
      values_[target] = slurp(target);
  }
  ~HostValues() {
    // Ratios before bytes (writing a ratio zeroes the bytes value); bytes=0 is never written.
    for (const auto& [p, v] : values_)
      if (v && p.find("_bytes") == std::string::npos) put(p, restorable(*v));
    for (const auto& [p, v] : values_)
      if (v && p.find("_bytes") != std::string::npos && *v != "0\n") put(p, restorable(*v));
    for (const auto& [mp, mode] : mounts_)
      if (mode && atime_of(mp) != mode) (void)run({"mount", "-o", "remount,bind," + *mode, mp});
    for (const auto& [f, v] : files_) {
      if (v)
        put(f, *v);
      else
        ::unlink(f.c_str());
    }
  }
  // Targets whose value differs from the recording.
  std::vector<std::string> changed() const {
    std::vector<std::string> out;
    for (const auto& [p, v] : values_)
      if (slurp(p) != v)
        out.push_back(p + ": was " + v.value_or("(absent)") + ", now " +
                      slurp(p).value_or("(absent)"));
    for (const auto& [mp, mode] : mounts_)
      if (atime_of(mp) != mode)
        out.push_back("mount " + mp + ": was " + mode.value_or("?") + ", now " +
                      atime_of(mp).value_or("?"));
    for (const auto& [f, v] : files_)
      if (slurp(f) != v) out.push_back(std::string(f) + " differs");
    return out;
  }

 private:
  void record_files() {
    for (const char* f : {kSysctlDropin, kLimitsDropin, kTmpfilesDropin, kUdevDropin, kFstab})
      files_[f] = slurp(f);
  }
  std::map<std::string, std::optional<std::string>> values_, mounts_;
  std::map<std::string, std::optional<std::string>> files_;
};

// The kernel's own defaults for the plain values the training profile sets
// (Documentation/admin-guide/sysctl/vm.rst, networking/ip-sysctl.rst, net.rst and
// admin-guide/mm/transhuge.rst). A test that needs something to tune puts these first, so that it
// proves the same on a host that someone has tuned already (a CI machine is one), and restores
// what was there at the end, whatever happens in between.
class KernelDefaults {
 public:
  KernelDefaults() : saved_(paths()) {
    for (const auto& [path, value] : values())
      if (slurp(path)) put(path, value);
  }

 private:
  static const std::map<std::string, std::string>& values() {
    static const std::map<std::string, std::string> v = {
        {"/proc/sys/vm/swappiness", "60\n"},
        {"/proc/sys/vm/overcommit_memory", "0\n"},
        {"/proc/sys/vm/dirty_ratio", "20\n"},
        {"/proc/sys/vm/dirty_background_ratio", "10\n"},
        {"/proc/sys/net/ipv4/tcp_fastopen", "1\n"},
        {"/proc/sys/net/core/rmem_max", "212992\n"},
        {"/proc/sys/net/core/wmem_max", "212992\n"},
        {"/proc/sys/net/ipv4/tcp_rmem", "4096 131072 6291456\n"},
        {"/proc/sys/net/ipv4/tcp_wmem", "4096 16384 4194304\n"},
        {"/sys/kernel/mm/transparent_hugepage/defrag", "madvise\n"},
    };
    return v;
  }
  static std::vector<std::string> paths() {
    std::vector<std::string> out;
    for (const auto& [path, value] : values()) out.push_back(path);
    return out;
  }
  HostValues saved_;
};

}  // namespace dltune::testing

// process.hpp's pure helpers (file names, maps, the permission note); attaching and sampling
// are in attach.cpp.
#include "pystack/process.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::pystack {

namespace {

bool is_library(std::string_view file) {
  return file.starts_with("libpython");
}

// The real uid of `pid` from /proc/PID/status ("Uid:\treal\teffective\t...").
std::optional<std::uint64_t> uid_of(const host::Root& root, pid_t pid) {
  const auto status = root.read(fmt::format("/proc/{}/status", pid));
  if (!status || !*status) return std::nullopt;
  for (const auto line : text::split(**status, '\n')) {
    if (!line.starts_with("Uid:")) continue;
    auto rest = text::trim(line.substr(4));
    return text::to_uint(rest.substr(0, rest.find_first_of(" \t")));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::pair<int, int>> version_from_name(std::string_view file) {
  if (file.starts_with("lib")) file.remove_prefix(3);
  if (!file.starts_with("python")) return std::nullopt;
  file.remove_prefix(6);
  int major = 0, minor = 0;
  std::size_t i = 0;
  auto number = [&](int& out) {
    const auto begin = i;
    while (i < file.size() && i - begin < 3 && file[i] >= '0' && file[i] <= '9')
      out = out * 10 + (file[i++] - '0');
    return i > begin;
  };
  if (!number(major) || i >= file.size() || file[i++] != '.' || !number(minor)) return std::nullopt;
  const auto rest = file.substr(i);
  // What may follow: nothing, an ABI flag ("d", "m"), ".so...", or "-config" and the like is
  // not an interpreter.
  if (!rest.empty() && rest != "d" && rest != "m" && !rest.starts_with(".so") &&
      !rest.starts_with("d.so") && !rest.starts_with("m.so"))
    return std::nullopt;
  return std::pair{major, minor};
}

std::vector<std::string> interpreter_candidates(const std::vector<Mapping>& maps) {
  std::vector<std::string> libraries, programs;
  for (const auto& m : maps) {
    if (m.path.empty() || m.path[0] != '/') continue;
    const auto file = text::base_name(m.path);
    // "python3.11", "libpython3.11.so.1.0", and a venv's or conda's plain "python" or "python3".
    if (!file.starts_with("python") && !file.starts_with("libpython")) continue;
    if (file.find("-config") != std::string_view::npos) continue;
    auto& list = is_library(file) ? libraries : programs;
    if (std::find(list.begin(), list.end(), m.path) == list.end()) list.push_back(m.path);
  }
  libraries.insert(libraries.end(), programs.begin(), programs.end());
  return libraries;
}

const Mapping* mapping_of(const std::vector<Mapping>& maps, const std::string& path) {
  const Mapping* first = nullptr;
  for (const auto& m : maps) {
    if (m.path != path) continue;
    if (m.offset == 0) return &m;
    if (first == nullptr) first = &m;
  }
  return first;
}

std::optional<std::uint64_t> load_start(const std::vector<Mapping>& maps, const std::string& path) {
  for (const auto& m : maps)
    if (m.path == path && m.offset == 0) return m.start;
  return std::nullopt;
}

namespace {

// Whether this process holds CAP_SYS_PTRACE (bit 19 of CapEff in /proc/self/status, proc(5),
// linux/capability.h).
bool has_cap_sys_ptrace(const host::Root& root) {
  const auto status = root.read("/proc/self/status");
  if (!status || !*status) return false;
  for (const auto line : text::split(**status, '\n'))
    if (line.starts_with("CapEff:"))
      if (const auto caps = text::to_uint(text::trim(line.substr(7)), 16))
        return ((*caps >> 19) & 1) != 0;
  return false;
}

}  // namespace

std::string permission_note(const host::Root& root, pid_t pid) {
  const auto scope_text = root.read("/proc/sys/kernel/yama/ptrace_scope");
  std::optional<std::uint64_t> scope;
  if (scope_text && *scope_text) scope = text::to_uint(text::trim(**scope_text));
  const auto scope_says =
      scope ? fmt::format("kernel.yama.ptrace_scope is {}", *scope) : std::string("no Yama");
  const auto owner = uid_of(root, pid);
  const auto me = static_cast<std::uint64_t>(::geteuid());
  if (me == 0 && has_cap_sys_ptrace(root))
    // ptrace_may_access (kernel/ptrace.c): a process that is not dumpable asks for
    // CAP_SYS_PTRACE in its own user namespace, and an LSM may refuse on its own.
    return fmt::format(
        "reading PID {}'s memory is refused although this root has CAP_SYS_PTRACE: the process "
        "is not dumpable (prctl PR_SET_DUMPABLE 0, a setuid or setcap program) and belongs to "
        "another user namespace, or an LSM (SELinux, AppArmor) forbids it ({})",
        pid, scope_says);
  if (me == 0)
    return fmt::format(
        "reading PID {}'s memory needs CAP_SYS_PTRACE, which this root lacks (a container "
        "without it, or {}{})",
        pid, scope_says, scope && *scope == 3 ? ", which forbids it to everyone" : "");
  if (owner && *owner != me)
    return fmt::format("reading PID {}'s memory needs root (it runs as uid {}, you are uid {})",
                       pid, *owner, me);
  return fmt::format(
      "reading PID {}'s memory needs root or the same user with kernel.yama.ptrace_scope 0 "
      "(it is {})",
      pid, scope ? std::to_string(*scope) : std::string("unknown"));
}

}  // namespace dltune::pystack

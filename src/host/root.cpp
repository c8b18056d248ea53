#include "host/root.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/cgroup.hpp"

namespace dltune::host {

namespace {

constexpr decltype(statfs::f_type) kProcSuperMagic = 0x9fa0;  // linux/magic.h

constexpr int kMaxLinkHops = 40;  // the kernel's own limit (MAXSYMLINKS)

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string parent_of(const std::string& p) {
  const auto pos = p.rfind('/');
  return pos == std::string::npos || pos == 0 ? std::string() : p.substr(0, pos);
}

// The result of a system call, or -1 with errno set to an injected fault (host/fault.hpp).
template <class Call>
auto or_fault(int injected, Call call) -> decltype(call()) {
  if (injected == 0) return call();
  errno = injected;
  return -1;
}

}  // namespace

struct Root::Recorder {
  std::mutex mu;
  std::map<std::pair<std::string, int>, Access> seen;  // keyed by (path, type)
};

// Every Root starts with the process's faults: none, unless a test build's command line set them.
Root::Root() : faults_(process_faults()) {}
Root::Root(std::string base) : base_(std::move(base)), faults_(process_faults()) {}

Result<Root> Root::at(const std::string& dir) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(dir, ec);
  if (ec) return fail("cannot use host root", dir, ec.value());
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0) return fail("host root does not exist:", abs.string(), errno);
  if (!S_ISDIR(st.st_mode)) return fail("host root is not a directory:", abs.string());
  bool host_like = false;
  for (const char* sub : {"proc", "sys", "etc"}) {
    struct stat s2 {};
    if (::stat((abs / sub).c_str(), &s2) == 0 && S_ISDIR(s2.st_mode)) host_like = true;
  }
  if (!host_like)
    return fail("not a host tree (expected proc/, sys/ or etc/ inside):", abs.string());
  std::string base = abs.lexically_normal().string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base == "/") return Root();
  Root r(base);
  // Only the kernel makes a procfs: a tree whose proc/ is one (not a link to one) is this
  // kernel's, whatever a capture or fixture holds (proc(5); PROC_SUPER_MAGIC, linux/magic.h).
  const int base_fd = ::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (base_fd >= 0) {
    const int proc = ::openat(base_fd, "proc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct statfs fs {};
    r.mounted_live_ = proc >= 0 && ::fstatfs(proc, &fs) == 0 && fs.f_type == kProcSuperMagic;
    if (proc >= 0) ::close(proc);
    ::close(base_fd);
  }
  return r;
}

const std::vector<std::string_view>& Root::known_locations() {
  // The places a host's facts and settings live. Anything else (/tmp, /mnt, a user's random
  // path) is refused, so that no input can steer a read or a write elsewhere.
  static const std::vector<std::string_view> kKnown = {
      "/proc",           "/sys",     "/dev",     "/etc", "/run",   "/usr", "/opt",  "/home",
      "/root",           "/var/log", "/var/lib", "/lib", "/lib64", "/bin", "/sbin", "/.dockerenv",
      "/.singularity.d",  // in every Apptainer/Singularity image (its "Environment and Metadata")
  };
  return kKnown;
}

Result<void> Root::check_path(std::string_view path) {
  if (path.empty() || path[0] != '/') return fail("host path must be absolute:", std::string(path));
  if (path.find('\0') != std::string_view::npos)
    return fail("host path contains a NUL byte:", std::string(path));
  if (path != "/") {
    if (path.back() == '/')
      return fail("host path is not normalised (trailing '/'):", std::string(path));
    for (const auto c : text::split(path.substr(1), '/')) {
      if (c.empty() || c == "." || c == "..")
        return fail("host path is not normalised (empty, '.' or '..' component):",
                    std::string(path));
    }
  }
  for (const auto k : known_locations())
    if (text::path_within(path, k)) return {};
  return fail("host path is outside the known locations:", std::string(path));
}

std::string Root::outside(std::string_view path) const {
  return live() ? std::string(path) : base_ + std::string(path);
}

void Root::start_recording() {
  if (!recorder_) recorder_ = std::make_shared<Recorder>();
}

std::vector<Access> Root::recorded() const {
  std::vector<Access> out;
  if (!recorder_) return out;
  std::lock_guard lock(recorder_->mu);
  for (const auto& [k, a] : recorder_->seen) out.push_back(a);
  return out;
}

void Root::note(Access a) const {
  if (!recorder_) return;
  std::lock_guard lock(recorder_->mu);
  auto key = std::make_pair(a.path, static_cast<int>(a.type));
  auto [it, inserted] = recorder_->seen.emplace(key, a);
  if (!inserted) it->second.max_bytes = std::max(it->second.max_bytes, a.max_bytes);
}

Result<std::optional<std::string>> Root::walk(std::string_view path, bool follow_last) const {
  if (auto ok = check_path(path); !ok) return tl::unexpected(ok.error());
  std::deque<std::string> todo;
  for (const auto c : text::split(path.substr(1), '/'))
    if (!c.empty()) todo.emplace_back(c);
  std::string cur;  // "" is "/"
  int hops = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      cur = parent_of(cur);
      continue;
    }
    std::string next = cur + "/" + c;
    if (todo.empty() && !follow_last) {
      cur = std::move(next);
      break;
    }
    struct stat st {};
    if (::lstat(outside(next).c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
      return fail("cannot read", next, errno);
    }
    if (!S_ISLNK(st.st_mode)) {
      cur = std::move(next);
      continue;
    }
    if (++hops > kMaxLinkHops) return fail("too many levels of links in", std::string(path), ELOOP);
    char buf[4096];
    const auto n = ::readlink(outside(next).c_str(), buf, sizeof buf - 1);
    if (n < 0) return fail("cannot read link", next, errno);
    std::string target(buf, static_cast<std::size_t>(n));
    note(Access{Access::Type::kSymlink, next, target, 0});
    if (!target.empty() && target[0] == '/') cur.clear();
    const auto parts = text::split(target, '/');
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
      if (!it->empty()) todo.emplace_front(*it);
  }
  if (cur.empty()) cur = "/";
  if (auto ok = check_path(cur); !ok)
    return fail("host path leads outside the known locations:", std::string(path) + " -> " + cur);
  return std::optional<std::string>(cur);
}

Result<std::optional<std::string>> Root::resolve(std::string_view path) const {
  auto real = walk(path, true);
  if (recorder_ && real && *real) {
    // What the links lead to must be in a capture too, or the links dangle there.
    struct stat st {};
    if (::lstat(outside(**real).c_str(), &st) == 0)
      note(Access{
          S_ISDIR(st.st_mode) ? Access::Type::kDirectory : Access::Type::kFile, **real, {}, 0});
  }
  return real;
}

Result<std::optional<std::string>> Root::read(std::string_view path, std::size_t max_bytes) const {
  auto real = walk(path, true);
  if (!real) return tl::unexpected(real.error());
  if (!*real) return std::optional<std::string>();
  Fd fd(or_fault(fault(FaultOp::kRead, path), [&] {
    return ::open(outside(**real).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  }));
  if (fd.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return fail("cannot read", std::string(path), errno);
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
    return fail("cannot read", std::string(path), S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
  std::string out;
  // sysfs and procfs report sizes of 4096 or 0; read until EOF either way.
  const std::size_t want = std::min<std::size_t>(
      max_bytes,
      S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) : 65536);
  out.reserve(want);
  char buf[65536];
  while (out.size() < max_bytes) {
    const auto chunk = std::min(sizeof buf, max_bytes - out.size());
    const auto n = ::read(fd.fd, buf, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot read", std::string(path), errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  if (fault(FaultOp::kShortRead, path) != 0) out.resize(out.size() / 2);
  note(Access{Access::Type::kFile, **real, {}, max_bytes});
  return std::optional<std::string>(std::move(out));
}

Result<std::optional<std::vector<std::string>>> Root::lines(std::string_view path) const {
  auto content = read(path);
  if (!content) return tl::unexpected(content.error());
  if (!*content) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  for (const auto l : text::lines(**content)) out.emplace_back(l);
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<std::optional<std::vector<std::string>>> Root::list(std::string_view path) const {
  auto real = walk(path, true);
  if (!real) return tl::unexpected(real.error());
  if (!*real) return std::optional<std::vector<std::string>>();
  DIR* d = ::opendir(outside(**real).c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return std::optional<std::vector<std::string>>();
    return fail("cannot list", std::string(path), errno);
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  if (recorder_) {
    note(Access{Access::Type::kDirectory, **real, {}, 0});
    const std::string prefix = **real == "/" ? "" : **real;
    for (const auto& n : names) {
      struct stat st {};
      const std::string child = prefix + "/" + n;
      if (::lstat(outside(child).c_str(), &st) != 0) continue;
      if (S_ISLNK(st.st_mode)) {
        char buf[4096];
        const auto len = ::readlink(outside(child).c_str(), buf, sizeof buf - 1);
        if (len >= 0)
          note(Access{Access::Type::kSymlink, child,
                      std::string(buf, static_cast<std::size_t>(len)), 0});
      } else if (S_ISDIR(st.st_mode)) {
        note(Access{Access::Type::kDirectory, child, {}, 0});
      } else {
        note(Access{Access::Type::kFile, child, {}, 0});  // a name only: 0 bytes needed
      }
    }
  }
  return std::optional<std::vector<std::string>>(std::move(names));
}

Result<std::optional<FileInfo>> Root::stat(std::string_view path) const {
  auto real = walk(path, true);
  if (!real) return tl::unexpected(real.error());
  if (!*real) return std::optional<FileInfo>();
  struct stat st {};
  if (::lstat(outside(**real).c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<FileInfo>();
    return fail("cannot stat", std::string(path), errno);
  }
  FileInfo info;
  info.kind = S_ISREG(st.st_mode)   ? Kind::kFile
              : S_ISDIR(st.st_mode) ? Kind::kDirectory
              : S_ISLNK(st.st_mode) ? Kind::kSymlink
                                    : Kind::kOther;
  info.size = static_cast<std::uint64_t>(st.st_size);
  info.mode = st.st_mode & 07777;
  info.inode = static_cast<std::uint64_t>(st.st_ino);
  if (info.kind == Kind::kDirectory)
    note(Access{Access::Type::kDirectory, **real, {}, 0});
  else if (info.kind == Kind::kFile)
    note(Access{Access::Type::kFile, **real, {}, 0});
  return std::optional<FileInfo>(info);
}

bool Root::exists(std::string_view path) const {
  auto s = stat(path);
  return s && s->has_value();
}

Result<std::optional<std::string>> Root::readlink(std::string_view path) const {
  auto real = walk(path, false);
  if (!real) return tl::unexpected(real.error());
  if (!*real) return std::optional<std::string>();
  char buf[4096];
  const auto n = ::readlink(outside(**real).c_str(), buf, sizeof buf - 1);
  if (n < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return fail("cannot read link", std::string(path), errno);
  }
  std::string target(buf, static_cast<std::size_t>(n));
  note(Access{Access::Type::kSymlink, **real, target, 0});
  return std::optional<std::string>(std::move(target));
}

namespace {

bool matches_pattern(std::string_view path, std::string_view pattern) {
  // '*' matches one path component (no '/').
  const auto p = text::split(path, '/');
  const auto q = text::split(pattern, '/');
  if (p.size() != q.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (q[i] == "*") {
      if (p[i].empty()) return false;
      continue;
    }
    const auto star = q[i].find('*');
    if (star == std::string_view::npos) {
      if (p[i] != q[i]) return false;
    } else if (!(p[i].starts_with(q[i].substr(0, star)) && p[i].size() > star &&
                 p[i].substr(star).find('/') == std::string_view::npos)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool Root::is_writable_setting(std::string_view path) {
  if (!check_path(path)) return false;
  if (path.starts_with("/proc/sys/")) return true;
  if (is_writable_cgroup_file(path)) return true;  // dltune's own job groups, section below
  static const std::string_view kSysfs[] = {
      "/sys/kernel/mm/transparent_hugepage/enabled",
      "/sys/kernel/mm/transparent_hugepage/defrag",
      "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
      "/sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference",
      "/sys/block/*/queue/read_ahead_kb",
      "/sys/block/*/queue/nr_requests",
      "/sys/block/*/queue/scheduler",
      "/proc/irq/*/smp_affinity_list",
  };
  for (const auto pattern : kSysfs)
    if (matches_pattern(path, pattern)) return true;
  // A cgroup-v1 memory cgroup's own swappiness, at any depth (the root group's is not one: it
  // writes vm.swappiness itself, Documentation/admin-guide/cgroup-v1/memory.rst 5.3).
  constexpr std::string_view kMemcg = "/sys/fs/cgroup/memory/";
  constexpr std::string_view kSwappiness = "/memory.swappiness";
  return path.starts_with(kMemcg) && path.ends_with(kSwappiness) &&
         path.size() > kMemcg.size() + kSwappiness.size();
}

bool Root::is_writable_file(std::string_view path) {
  if (!check_path(path)) return false;
  static const std::string_view kFiles[] = {
      "/etc/sysctl.d/90-dltune.conf",
      "/etc/security/limits.d/90-dltune.conf",
      "/etc/tmpfiles.d/90-dltune.conf",
      "/etc/udev/rules.d/60-dltune.rules",
      "/etc/fstab",
  };
  for (const auto f : kFiles)
    if (path == f) return true;
  // The state directory (journal, backups).
  return path.starts_with("/var/lib/dltune/");
}

Result<std::string> Root::write_virtual(std::string_view path, std::string_view value) const {
  if (!is_writable_setting(path))
    return fail("refusing to write (not a setting dltune changes):", std::string(path));
  auto real = walk(path, true);
  if (!real) return tl::unexpected(real.error());
  if (!*real) return fail("cannot write", std::string(path), ENOENT);
  Fd fd(or_fault(fault(FaultOp::kWriteVirtualOpen, path), [&] {
    return ::open(outside(**real).c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  }));
  if (fd.fd < 0) return fail(fmt::format("cannot write '{}' to", value), std::string(path), errno);
  // One write: procfs and sysfs take the value of a single write call.
  const std::string line = std::string(value) + "\n";
  const auto n = or_fault(fault(FaultOp::kWriteVirtual, path),
                          [&] { return ::write(fd.fd, line.data(), line.size()); });
  if (n < 0) return fail(fmt::format("cannot write '{}' to", value), std::string(path), errno);
  if (static_cast<std::size_t>(n) != line.size())
    return fail(fmt::format("short write of '{}' to", value), std::string(path), EIO);
  // A host tree's file is a plain file: cut what the old value left after the new one. Only
  // after a write that worked, so that a failed one leaves the old value, as the kernel does.
  if (!live() && ::ftruncate(fd.fd, n) != 0) {
    // Not a plain file (a procfs under the tree): nothing to cut; the read-back decides.
  }
  auto back = read(path, 65536);
  if (!back) return tl::unexpected(back.error());
  if (!*back) return fail("cannot read back", std::string(path), ENOENT);
  return std::string(text::trim(**back));
}

Result<void> Root::write_atomic(std::string_view path, std::string_view content,
                                std::uint32_t mode) const {
  if (!is_writable_file(path))
    return fail("refusing to write (not a file dltune manages):", std::string(path));
  const std::string target = outside(path);
  const std::string dir = target.substr(0, target.rfind('/'));
  const std::string tmp =
      fmt::format("{}/.{}.dltune-tmp.{}", dir, target.substr(target.rfind('/') + 1), ::getpid());
  Fd fd(or_fault(fault(FaultOp::kAtomicOpen, path), [&] {
    return ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  }));
  if (fd.fd < 0) return fail("cannot create a temporary file to replace", std::string(path), errno);
  auto cleanup_fail = [&](const char* what, int err) -> Result<void> {
    ::unlink(tmp.c_str());
    return fail(what, std::string(path), err);
  };
  // An injected short write stores half of the content, and the write after it fails.
  int short_write = fault(FaultOp::kAtomicShortWrite, path);
  std::size_t done = 0;
  while (done < content.size()) {
    std::size_t len = content.size() - done;
    int injected = fault(FaultOp::kAtomicWrite, path);
    if (short_write > 0) {
      len /= 2;
      short_write = -short_write;
    } else if (short_write < 0 && injected == 0) {
      injected = -short_write;
    }
    const auto n = or_fault(injected, [&] { return ::write(fd.fd, content.data() + done, len); });
    if (n < 0) {
      if (errno == EINTR) continue;
      return cleanup_fail("cannot write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd.fd, mode) != 0) return cleanup_fail("cannot set the mode of", errno);
  if (or_fault(fault(FaultOp::kAtomicFsync, path), [&] { return ::fsync(fd.fd); }) != 0)
    return cleanup_fail("cannot sync", errno);
  if (or_fault(fault(FaultOp::kAtomicRename, path),
               [&] { return ::rename(tmp.c_str(), target.c_str()); }) != 0)
    return cleanup_fail("cannot replace", errno);
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.fd >= 0) ::fsync(dfd.fd);  // the rename itself is durable once the directory is
  return {};
}

Result<void> Root::remove_file(std::string_view path) const {
  if (!is_writable_file(path))
    return fail("refusing to remove (not a file dltune manages):", std::string(path));
  const int rc =
      or_fault(fault(FaultOp::kRemove, path), [&] { return ::unlink(outside(path).c_str()); });
  if (rc != 0 && errno != ENOENT) return fail("cannot remove", std::string(path), errno);
  return {};
}

// --- The cgroups of dltune's own jobs ---

namespace {

constexpr std::string_view kCgroupFs = "/sys/fs/cgroup/";

// A v1 hierarchy's mount point below /sys/fs/cgroup, named after its controllers ("memory",
// "cpu,cpuacct"), or a hybrid host's cgroup2 mount ("unified"). Only the controllers that
// dltune's job groups use.
bool is_hierarchy_name(std::string_view name) {
  if (name == "unified") return true;
  if (name.empty()) return false;
  for (const auto c : text::split(name, ',')) {
    if (c != "cpu" && c != "cpuacct" && c != "cpuset" && c != "memory" && c != "blkio")
      return false;
  }
  return true;
}

// A Slurm step's group that dltune's parent may go inside (`run` in a Slurm job): on v1 the
// step's own or a task's ("task_3"), which may hold processes and groups both; in a cgroup2
// mount the step's "user", whose children hold the tasks (a v2 group with processes cannot have
// children with controllers: cgroup-v2.rst "No Internal Process Constraint").
bool is_slurm_nest(std::string_view cgroup_path, bool unified) {
  const auto step = slurm_step_of(cgroup_path);
  if (!step) return false;
  if (unified) return step->below == "user";
  if (step->below.empty()) return true;
  const std::string_view b = step->below;
  return b.starts_with("task_") && b.size() > 5 &&
         std::all_of(b.begin() + 5, b.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The components of a path below /sys/fs/cgroup/, and where a group's own path starts in them
// (after a v1 hierarchy's or a hybrid host's cgroup2 mount point).
std::size_t group_start(const std::vector<std::string_view>& c) {
  return c[0] != "dltune" && is_hierarchy_name(c[0]) ? 1 : 0;
}

}  // namespace

bool Root::is_dltune_cgroup(std::string_view path) {
  if (!check_path(path) || !path.starts_with(kCgroupFs)) return false;
  const auto c = text::split(path.substr(kCgroupFs.size()), '/');
  // v2: [NEST/]dltune[/NAME]; v1 and hybrid: HIERARCHY/[NEST/]dltune[/NAME], where NEST is a
  // Slurm step's group (is_slurm_nest) or nothing.
  const std::size_t start = group_start(c);
  std::size_t at = start;
  while (at < c.size() && c[at] != "dltune") ++at;
  if (at == c.size()) return false;
  if (at > start) {
    std::string nest;
    for (std::size_t i = start; i < at; ++i) nest += "/" + std::string(c[i]);
    if (!is_slurm_nest(nest, start == 0 || c[0] == "unified")) return false;
  }
  if (c.size() == at + 1) return true;
  if (c.size() == at + 2) return is_plain_cgroup_name(c[at + 1]);
  // A rank's group inside its job's (`run --nproc N`): "rank-N", nothing else and no deeper.
  const auto rank = c.size() == at + 3 ? c[at + 2] : std::string_view();
  return is_plain_cgroup_name(c[at + 1]) && rank.starts_with("rank-") && rank.size() > 5 &&
         rank.size() <= 10 && rank.find_first_not_of("0123456789", 5) == std::string_view::npos;
}

bool Root::is_writable_cgroup_file(std::string_view path) {
  if (!check_path(path)) return false;
  // The v2 root's controllers for its children (Documentation/admin-guide/cgroup-v2.rst,
  // "Enabling and Disabling"): dltune enables cpu, memory, cpuset and io there for its parent;
  // inside a Slurm job, in the v2 step's "user" group that holds its parent.
  constexpr std::string_view kSubtree = "/cgroup.subtree_control";
  if (path == "/sys/fs/cgroup/cgroup.subtree_control") return true;
  if (path.starts_with(kCgroupFs) && path.ends_with(kSubtree)) {
    const auto dir =
        path.substr(kCgroupFs.size(), path.size() - kCgroupFs.size() - kSubtree.size());
    const auto c = text::split(dir, '/');
    if (group_start(c) == 0 || c[0] == "unified") {
      const std::string group = c[0] == "unified"
                                    ? std::string(dir.substr(std::string_view("unified").size()))
                                    : "/" + std::string(dir);
      const auto step = slurm_step_of(group);
      if (step && step->below == "user") return true;
    }
  }
  const auto slash = path.rfind('/');
  return is_plain_cgroup_name(path.substr(slash + 1)) && is_dltune_cgroup(path.substr(0, slash));
}

Result<std::string> Root::resolve_parent(std::string_view path) const {
  // Links in a tree lead inside it (walk), never to this machine's own /sys.
  const auto slash = path.rfind('/');
  auto parent = walk(path.substr(0, slash), true);
  if (!parent) return tl::unexpected(parent.error());
  if (!*parent) return fail("cannot find", std::string(path.substr(0, slash)), ENOENT);
  return **parent + std::string(path.substr(slash));
}

Result<void> Root::make_directory(std::string_view path) const {
  if (!is_dltune_cgroup(path))
    return fail("refusing to create (not a cgroup of dltune's jobs):", std::string(path));
  auto real = resolve_parent(path);
  if (!real) return tl::unexpected(real.error());
  const std::string dir = outside(*real);
  if (or_fault(fault(FaultOp::kMakeDirectory, path), [&] { return ::mkdir(dir.c_str(), 0755); }) !=
      0)
    return fail("cannot create", std::string(path), errno);
  if (live()) return {};
  // No kernel here to give the group its control files: empty ones named as the parent's.
  const std::string parent = dir.substr(0, dir.rfind('/'));
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return {};
  while (const dirent* e = ::readdir(d)) {
    const std::string from = parent + "/" + e->d_name;
    struct stat st {};
    if (::lstat(from.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    Fd f(
        ::open((dir + "/" + e->d_name).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  }
  ::closedir(d);
  return {};
}

Result<void> Root::remove_directory(std::string_view path) const {
  if (!is_dltune_cgroup(path))
    return fail("refusing to remove (not a cgroup of dltune's jobs):", std::string(path));
  auto real = resolve_parent(path);
  if (!real) return tl::unexpected(real.error());
  const std::string dir = outside(*real);
  if (!live()) {
    // The kernel removes a group's control files with it; a tree's are plain files.
    if (DIR* d = ::opendir(dir.c_str())) {
      while (const dirent* e = ::readdir(d)) {
        const std::string f = dir + "/" + e->d_name;
        struct stat st {};
        if (::lstat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(f.c_str());
      }
      ::closedir(d);
    }
  }
  if (::rmdir(dir.c_str()) != 0) return fail("cannot remove", std::string(path), errno);
  return {};
}

Result<void> Root::write_control(std::string_view path, std::string_view value) const {
  if (!is_writable_cgroup_file(path))
    return fail("refusing to write (not a file of dltune's job cgroups):", std::string(path));
  auto real = resolve_parent(path);
  if (!real) return tl::unexpected(real.error());
  Fd fd(::open(outside(*real).c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (live() ? 0 : O_TRUNC)));
  if (fd.fd < 0) return fail("cannot write", std::string(path), errno);
  const std::string line = std::string(value) + "\n";
  const auto n = ::write(fd.fd, line.data(), line.size());
  if (n < 0) return fail(fmt::format("cannot write '{}' to", value), std::string(path), errno);
  return {};
}

// --- Fault injection (host/fault.hpp) ---

void Root::inject_fault(Fault f) {
  if (!faults_) faults_ = std::make_shared<FaultTable>();
  faults_->add(std::move(f));
}

void Root::clear_faults() {
  if (faults_) faults_->clear();
}

int Root::faults_fired() const {
  return faults_ ? faults_->fired() : 0;
}

int Root::fault(FaultOp op, std::string_view path) const {
  return faults_ ? faults_->check(op, path) : 0;
}

}  // namespace dltune::host

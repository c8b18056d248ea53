#pragma once
// host::Root: the one door to host files (docs/architecture.md, CONTRIBUTING.md, convention 1).
//
// Every host path dltune reads goes through a Root. `Root()` is the live host; `Root::at(dir)`
// is a host tree elsewhere (a capture, a fixture, a mounted disk). Paths are absolute host paths
// ("/proc/meminfo"), always in normal form, and must fall under a known location; symbolic links
// are followed inside the root, as a chroot would, so an absolute link in a capture never escapes
// it. A missing file is an empty optional, not an error (CONTRIBUTING.md, convention 3).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "host/fault.hpp"

namespace dltune::host {

enum class Kind { kFile, kDirectory, kSymlink, kOther };

struct FileInfo {
  Kind kind = Kind::kOther;  // after following links
  std::uint64_t size = 0;
  std::uint32_t mode = 0;   // permission bits
  std::uint64_t inode = 0;  // st_ino: a directory removed and made again has another
};

// What a recording Root saw: enough to rebuild the tree that the reads depended on.
struct Access {
  enum class Type { kFile, kDirectory, kSymlink } type = Type::kFile;
  std::string path;           // host path, after resolving the links before it
  std::string target;         // kSymlink: the link's text
  std::size_t max_bytes = 0;  // kFile: how much of it was read
};

class Root;

// A file kept open for repeated reads from its start (for the sampler). /proc and /sys files
// make their text afresh at each read from offset 0, so one pread(2) on a descriptor kept open
// costs a fraction of open+read+close. Move-only; closes on destruction.
class OpenFile {
 public:
  OpenFile() = default;
  OpenFile(OpenFile&& o) noexcept;
  OpenFile& operator=(OpenFile&& o) noexcept;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile();

  // The whole file into `buf` (its storage reused; grown when the file is larger), as a view of
  // `buf`: the view is the text; `buf`'s size is the room kept for the next read (never shrunk,
  // so that a read does not clear the room again first). An empty optional when what the file
  // described is gone (ESRCH: the process exited; ENOENT/ENODEV: the device or group was removed).
  // Other errors name the path and errno.
  [[nodiscard]] Result<std::optional<std::string_view>> read(std::string& buf) const;
  // For a directory opened with Root::open_directory: its numeric entries (PIDs, TIDs), sorted,
  // listed afresh from the start each call; false when it has gone (the process exited).
  [[nodiscard]] Result<bool> list_pids(std::vector<int>& out) const;
  [[nodiscard]] bool is_open() const { return fd_ >= 0; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  friend class Root;
  int fd_ = -1;
  std::string path_;  // the host path
  std::shared_ptr<FaultTable> faults_;
};

class Root {
 public:
  static constexpr std::size_t kDefaultMaxBytes = 16u << 20;

  // The live host ("/").
  Root();
  // A host tree at `dir`. Fails when `dir` does not exist, is not a directory, or holds none of
  // proc/, sys/ and etc/ (it is then not a host tree).
  static Result<Root> at(const std::string& dir);

  [[nodiscard]] bool live() const { return base_.empty(); }
  // The live host, or a tree that is this kernel's own file systems seen through a mount: the
  // DaemonSet's /host (Kubernetes hostPath volumes of /, /proc, /sys), node_exporter's
  // --path.rootfs. Such a tree's proc/ is a procfs (a mount, not a link), which only the kernel
  // makes and no capture or fixture can hold. Then what is not in files is asked live, as on the
  // host itself: NVML, file system sizes.
  [[nodiscard]] bool this_kernel() const { return base_.empty() || mounted_live_; }
  // "/" for the live host, else the tree's directory.
  [[nodiscard]] std::string base() const { return live() ? "/" : base_; }
  // Where `path` of this host is on this machine's file system (for libraries such as hwloc
  // that read files themselves). No check, no resolution.
  [[nodiscard]] std::string outside(std::string_view path) const;

  // The whole file, or its first `max_bytes` bytes.
  [[nodiscard]] Result<std::optional<std::string>> read(
      std::string_view path, std::size_t max_bytes = kDefaultMaxBytes) const;
  [[nodiscard]] Result<std::optional<std::vector<std::string>>> lines(std::string_view path) const;
  // `path` opened for repeated reads (OpenFile::read); an empty optional when it is absent. On the
  // live host the kernel follows links itself (no walk per open: the sampler opens one file per
  // process); in a tree the links are followed inside it as for read().
  [[nodiscard]] Result<std::optional<OpenFile>> open(std::string_view path) const;
  // A directory kept open for OpenFile::list_pids (the sampler lists /proc and each member's
  // task directory every sample). Empty when absent; an error when not a directory.
  [[nodiscard]] Result<std::optional<OpenFile>> open_directory(std::string_view path) const;
  // The names in a directory, sorted, without "." and "..".
  [[nodiscard]] Result<std::optional<std::vector<std::string>>> list(std::string_view path) const;
  // The numeric names in a directory (/proc, /proc/PID/task), sorted, into `out` (its capacity
  // reused: the sampler lists /proc every sample). False when the directory is absent (the
  // process exited). On the live host one getdents64(2) loop with a buffer on the stack.
  [[nodiscard]] Result<bool> list_pids(std::string_view path, std::vector<int>& out) const;
  // Whether something is there (after following links). False for refused paths.
  [[nodiscard]] bool exists(std::string_view path) const;
  [[nodiscard]] Result<std::optional<FileInfo>> stat(std::string_view path) const;
  // The text of a symbolic link; empty optional when it is absent. Error when not a link.
  [[nodiscard]] Result<std::optional<std::string>> readlink(std::string_view path) const;
  // `path` with every link in it followed (inside the root).
  [[nodiscard]] Result<std::optional<std::string>> resolve(std::string_view path) const;

  // Writing (docs/architecture.md). Only the settings dltune changes can be written: see
  // is_writable_setting / is_writable_file; anything else is refused before any I/O.
  //
  // A kernel setting (/proc/sys, the known sysfs files): written in one write(2), then read
  // back; returns what the kernel reports afterwards (trimmed). The kernel's errno (EINVAL for a
  // value it refuses, EACCES, EROFS) is in the error.
  [[nodiscard]] Result<std::string> write_virtual(std::string_view path,
                                                  std::string_view value) const;
  // A configuration file: written to a temporary file in the same directory, fsync'd, renamed
  // over `path`, and the directory fsync'd, so that a crash leaves the old or the new file whole.
  [[nodiscard]] Result<void> write_atomic(std::string_view path, std::string_view content,
                                          std::uint32_t mode = 0644) const;
  // Removes a file dltune wrote (rollback of a file that did not exist before).
  [[nodiscard]] Result<void> remove_file(std::string_view path) const;
  [[nodiscard]] static bool is_writable_setting(std::string_view path);
  [[nodiscard]] static bool is_writable_file(std::string_view path);

  // --- The cgroups of dltune's own jobs (src/launch/cgroup.hpp) ---
  // dltune creates groups only under a group named "dltune" right below a hierarchy's mount
  // point in /sys/fs/cgroup: /sys/fs/cgroup/dltune/NAME (v2), /sys/fs/cgroup/memory/dltune/NAME,
  // /sys/fs/cgroup/cpu,cpuacct/dltune/NAME (v1), /sys/fs/cgroup/unified/dltune/NAME (a hybrid
  // host's cgroup2 mount). is_dltune_cgroup: `path` is such a "dltune" group, a group right
  // below it, or a rank's group "rank-N" in one of those (`run --nproc N`). Those groups' files are
  // writable settings (is_writable_setting), as is the v2 root's cgroup.subtree_control.
  [[nodiscard]] static bool is_dltune_cgroup(std::string_view path);
  [[nodiscard]] static bool is_writable_cgroup_file(std::string_view path);
  // mkdir / rmdir of such a group; EEXIST, ENOENT, EBUSY are in the error. A tree has no
  // cgroupfs behind it: there make_directory gives the new group an empty file for each file of
  // its parent (as the kernel gives it its control files), and remove_directory removes the
  // group's files first (as the kernel does).
  [[nodiscard]] Result<void> make_directory(std::string_view path) const;
  [[nodiscard]] Result<void> remove_directory(std::string_view path) const;
  // One write(2) without reading back, for write-only files (cgroup.kill).
  [[nodiscard]] Result<void> write_control(std::string_view path, std::string_view value) const;

  // Recording: when on, every file read, directory listed, link followed and path found is kept,
  // so that `capture` can pack exactly what a command depended on.
  void start_recording();
  [[nodiscard]] std::vector<Access> recorded() const;

  // Validation used by every call: absolute, normalised, under a known location.
  [[nodiscard]] static Result<void> check_path(std::string_view path);
  [[nodiscard]] static const std::vector<std::string_view>& known_locations();

  // --- Fault injection, for tests only (host/fault.hpp) ---
  // Makes later calls of `f.op` on `f.path` fail with `f.err`, in this Root and in the copies
  // made of it from now on (they share one table). Every Root starts with the faults of
  // DLTUNE_TEST_FAULT, if set (they are then shared by every Root of the process).
  void inject_fault(Fault f);
  void clear_faults();
  // How many calls failed because of an injected fault.
  [[nodiscard]] int faults_fired() const;

 private:
  struct Recorder;
  explicit Root(std::string base);
  // Follows links component by component; the result is normalised and checked again.
  // Empty optional when a component is missing.
  [[nodiscard]] Result<std::optional<std::string>> walk(std::string_view path,
                                                        bool follow_last) const;
  void note(Access a) const;
  // `path` with the links in its parent followed (inside the root); the last name as it is.
  [[nodiscard]] Result<std::string> resolve_parent(std::string_view path) const;
  // The errno an injected fault makes this call fail with, or 0.
  [[nodiscard]] int fault(FaultOp op, std::string_view path) const;

  std::string base_;  // "" for the live host, else an absolute directory without trailing '/'
  bool mounted_live_ = false;  // a tree whose proc/ is a procfs (this_kernel), set by at()
  std::shared_ptr<Recorder> recorder_;
  std::shared_ptr<FaultTable> faults_;  // null: no faults (the normal case)
};

}  // namespace dltune::host

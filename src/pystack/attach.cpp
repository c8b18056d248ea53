// PythonProcess: attaching to a live process (its interpreter's file, as the process sees it,
// its symbols, version and layout) and sampling it. Apart from process.cpp's pure helpers, so
// that those link without host::Root's open files (the fuzz targets link process.cpp alone).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/parse/process.hpp"
#include "pystack/debug_offsets.hpp"
#include "pystack/elf.hpp"
#include "pystack/process.hpp"

namespace dltune::pystack {

namespace {

// A Python library or program is at most a few tens of MiB; the cap keeps a wrong file cheap.
constexpr std::size_t kMaxInterpreterFile = 256u << 20;

bool gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

Error exited(pid_t pid) {
  return Error{fmt::format("process {} exited", pid), {}, ESRCH};
}

// Whether `pid` runs in a PID namespace of its own (a container's): its NSpid line in
// /proc/PID/status ("NSpid:\t1234\t1", proc(5)) names more than one PID.
bool in_own_pid_namespace(const host::Root& root, pid_t pid) {
  const auto status = root.read(fmt::format("/proc/{}/status", pid));
  if (!status || !*status) return false;
  for (const auto line : text::split(**status, '\n'))
    if (line.starts_with("NSpid:"))
      return text::trim(line.substr(6)).find_first_of(" \t") != std::string_view::npos;
  return false;
}

// Whether the open file `st` is the one `mapping` maps: its inode, and its device unless the file
// is on an overlay (a container's image), whose files report the overlay's device while the
// mapping names the layer's (overlayfs.rst: st_ino is the real inode's on one file system).
bool is_mapped_file(int fd, const struct stat& st, const Mapping& mapping) {
  if (st.st_ino != mapping.inode) return false;
  if (major(st.st_dev) == mapping.dev_major && minor(st.st_dev) == mapping.dev_minor) return true;
  struct statfs fs {};
  constexpr long kOverlayfsMagic = 0x794c7630;  // OVERLAYFS_SUPER_MAGIC, linux/magic.h
  return ::fstatfs(fd, &fs) == 0 && static_cast<long>(fs.f_type) == kOverlayfsMagic;
}

struct Closer {
  int fd;
  ~Closer() {
    if (fd >= 0) ::close(fd);
  }
};

// The file at `path` (outside any root), read whole. The path (another process's to choose, and
// its directories another user's to swap) is first only looked up (O_PATH, a last link not
// followed: nothing is opened, so no device acts on an open, a FIFO or /dev/watchdog among them),
// then refused unless it is a regular file of at most kMaxInterpreterFile bytes that is (unless
// `trusted`: the kernel's own link) the file `mapping` maps; only then is that very inode opened
// for reading, through /proc/self/fd. Empty when absent.
Result<std::optional<std::string>> read_mapped_file(const std::string& path, const Mapping& mapping,
                                                    bool trusted) {
  const Closer looked{::open(path.c_str(), O_PATH | O_CLOEXEC | (trusted ? 0 : O_NOFOLLOW))};
  if (looked.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return fail("cannot read", mapping.path, errno);
  }
  struct stat st {};
  if (::fstat(looked.fd, &st) != 0) return fail("cannot read", mapping.path, errno);
  if (S_ISLNK(st.st_mode)) return fail("cannot read", mapping.path, ELOOP);
  if (!S_ISREG(st.st_mode))
    return fail(fmt::format("{} is not a regular file, not what the process mapped", mapping.path));
  if (!trusted && !is_mapped_file(looked.fd, st, mapping))
    return fail(fmt::format("{} is not the file the process mapped (another inode: replaced?)",
                            mapping.path));
  if (static_cast<std::uint64_t>(st.st_size) > kMaxInterpreterFile)
    return fail(fmt::format("{} is {} MiB, over the {} MiB an interpreter may be", mapping.path,
                            st.st_size >> 20, kMaxInterpreterFile >> 20));
  const Closer opened{::open(fmt::format("/proc/self/fd/{}", looked.fd).c_str(),
                             O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (opened.fd < 0) return fail("cannot read", mapping.path, errno);
  const int fd = opened.fd;
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const auto n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read", mapping.path, errno);
    if (n == 0) break;  // shorter than it was: what there is
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return std::optional<std::string>(std::move(out));
}

}  // namespace

Result<std::optional<std::string>> interpreter_file(const host::Root& root, pid_t pid,
                                                    const Mapping& mapping, std::string* refused) {
  if (!root.this_kernel()) {
    // A host tree: its links are followed inside it, first through the process's own root.
    if (auto own = root.open(fmt::format("/proc/{}/root{}", pid, mapping.path)); own && *own) {
      std::string buffer;
      if (auto bytes = (*own)->read(buffer); bytes && *bytes && !(*bytes)->empty()) {
        if ((*bytes)->size() > kMaxInterpreterFile) return std::optional<std::string>();
        buffer.resize((*bytes)->size());
        return std::optional<std::string>(std::move(buffer));
      }
    }
    return root.read(mapping.path, kMaxInterpreterFile);
  }
  // This kernel: the very file mapped. /proc/PID/map_files/START-END (proc(5)) is the kernel's
  // own link to it, which needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE since 5.9); else the
  // path as the process sees it, then as this host does, each only when it is the file mapped.
  std::string why;
  const std::string map_file =
      root.outside(fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, mapping.start, mapping.end));
  for (const auto& [path, trusted] :
       {std::pair{map_file, true},
        std::pair{root.outside(fmt::format("/proc/{}/root{}", pid, mapping.path)), false},
        std::pair{root.outside(mapping.path), false}}) {
    auto bytes = read_mapped_file(path, mapping, trusted);
    if (!bytes) {
      why = bytes.error().message();
      continue;
    }
    if (*bytes) return bytes;
  }
  if (refused && !why.empty()) *refused = why;
  return std::optional<std::string>();
}

PythonProcess::PythonProcess(const host::Root& root, pid_t pid, Interpreter interpreter,
                             PythonLayout layout)
    : root_(root),
      pid_(pid),
      interpreter_(std::move(interpreter)),
      memory_(std::make_unique<ProcessMemory>(pid)),
      frame_objects_(layout.frame_objects()),
      reader_(*memory_, layout, interpreter_.runtime, interpreter_.code_type) {
  if (layout.runtime_main_thread)
    main_thread_at_ = interpreter_.runtime + *layout.runtime_main_thread;
}

void PythonProcess::read_tids() {
  tids_.clear();
  unknown_tids_.clear();
  std::vector<int> tasks;
  const auto task_dir = fmt::format("/proc/{}/task", pid_);
  if (auto ok = root_.list_pids(task_dir, tasks); !ok || !*ok) return;
  for (const int tid : tasks) {
    const auto status = root_.read(fmt::format("{}/{}/status", task_dir, tid));
    if (!status || !*status) continue;
    std::uint64_t inner = static_cast<std::uint64_t>(tid);
    for (const auto line : text::split(**status, '\n')) {
      // "NSpid:\t1234\t7": the TID in each PID namespace, this host's view first, the
      // process's own last (proc(5)).
      if (!line.starts_with("NSpid:")) continue;
      auto rest = text::trim(line.substr(6));
      const auto last = rest.find_last_of(" \t");
      if (const auto v =
              text::to_uint(last == std::string_view::npos ? rest : rest.substr(last + 1)))
        inner = *v;
    }
    tids_[inner] = static_cast<std::uint64_t>(tid);
  }
}

void PythonProcess::host_tids(std::vector<ThreadStack>& threads) {
  if (main_thread_ == 0 && main_thread_at_) {
    std::uint64_t v = 0;
    if (memory_->read(*main_thread_at_, &v, sizeof v)) main_thread_ = v;
  }
  bool looked = false;
  for (auto& t : threads) {
    if (main_thread_ != 0 && t.thread_id == main_thread_) {
      t.native_id = static_cast<std::uint64_t>(pid_);
      continue;
    }
    if (t.native_id == 0) continue;
    auto it = tids_.find(t.native_id);
    if (it == tids_.end() && !looked && !unknown_tids_.contains(t.native_id)) {
      read_tids();  // a thread started since the last look
      looked = true;
      it = tids_.find(t.native_id);
    }
    if (it == tids_.end() && tids_.empty()) continue;  // the tasks could not be listed
    if (it == tids_.end()) {
      unknown_tids_.insert(t.native_id);
      t.native_id = 0;
    } else {
      t.native_id = it->second;
    }
  }
}

Result<PythonProcess> PythonProcess::attach(const host::Root& root, pid_t pid) {
  const auto maps_path = fmt::format("/proc/{}/maps", pid);
  const auto text = root.read(maps_path);
  if (!text) {
    if (text.error().errno_ == ESRCH) return tl::unexpected(exited(pid));
    // /proc/PID/maps asks for the same ptrace read access as its memory.
    if (text.error().errno_ == EACCES || text.error().errno_ == EPERM)
      return fail(permission_note(root, pid));  // says why; no strerror after it
    return tl::unexpected(text.error());
  }
  if (!*text) return fail(fmt::format("no process {}", pid));
  auto maps = parse_maps(**text);
  if (!maps) return tl::unexpected(maps.error());
  if (maps->empty()) {
    // No memory of its own: a kernel thread (PF_KTHREAD in its stat's flags, proc(5)), or a
    // process that exited but is not yet reaped (a zombie).
    if (const auto stat = root.read(fmt::format("/proc/{}/stat", pid)); stat && *stat)
      if (const auto parsed = host::parse::parse_proc_stat(**stat);
          parsed && (parsed->flags & host::parse::kPfKthread) != 0)
        return fail(fmt::format("{} {} (it is the kernel thread {})", pid, kNotPython,
                                text::printable(parsed->comm)));
    return tl::unexpected(exited(pid));
  }

  Interpreter found;
  ElfFile elf;
  std::optional<std::uint64_t> version_address;
  std::string refused;  // why a candidate could not be read, for the error at the end
  for (const auto& path : interpreter_candidates(*maps)) {
    const Mapping* mapping = mapping_of(*maps, path);
    if (mapping == nullptr) continue;
    const auto bytes = interpreter_file(root, pid, *mapping, &refused);
    if (!bytes || !*bytes) continue;  // gone, or outside the known locations: try the next
    auto runtime = find_symbol(**bytes, "_PyRuntime");
    if (!runtime || !*runtime) continue;
    auto file = read_elf(**bytes);
    if (!file) return fail(file.error().what + ":", path);
    elf = *file;
    std::uint64_t bias = 0;
    if (elf.shared) {
      const auto start = load_start(*maps, path);
      if (!start) return fail("no mapping at offset 0 of", path);
      bias = *start - elf.first_load;
    }
    found.path = path;
    found.runtime = **runtime + bias;
    if (auto code = find_symbol(**bytes, "PyCode_Type"); code && *code)
      found.code_type = **code + bias;
    if (auto v = find_symbol(**bytes, "Py_Version"); v && *v) version_address = **v + bias;
    if (const auto name = version_from_name(text::base_name(path))) {
      found.major = name->first;
      found.minor = name->second;
    }
    break;
  }
  if (found.path.empty())
    return fail(refused.empty()
                    ? fmt::format("{} {} (no _PyRuntime in its mappings)", pid, kNotPython)
                    : fmt::format("{}: cannot read its interpreter: {}", pid, refused));

  // The first read: it says whether we may read at all.
  ProcessMemory memory(pid);
  std::uint64_t probe = 0;
  const auto first = version_address ? *version_address : found.runtime;
  if (auto ok = memory.read(first, &probe, sizeof probe); !ok) {
    if (ok.error().errno_ == EPERM || ok.error().errno_ == EACCES)
      return fail(permission_note(root, pid));  // says why; no strerror after it
    if (ok.error().errno_ == ESRCH || gone(pid)) return tl::unexpected(exited(pid));
    return tl::unexpected(ok.error());
  }
  if (version_address) {
    // Py_Version is PY_VERSION_HEX: 0xMMmmuuRS (Include/patchlevel.h), a 32-bit value.
    const auto hex = static_cast<std::uint32_t>(probe);
    const int major = static_cast<int>(hex >> 24), minor = static_cast<int>((hex >> 16) & 0xff);
    if (found.major != 0 && (major != found.major || minor != found.minor))
      return fail(fmt::format("{} says Python {}.{} in its name but {}.{} in Py_Version", pid,
                              found.major, found.minor, major, minor),
                  found.path);
    found.major = major;
    found.minor = minor;
    found.micro = static_cast<int>((hex >> 8) & 0xff);
  }
  if (found.major == 0)
    return fail(fmt::format("cannot tell the Python version of {} (no Py_Version, and no version "
                            "in the file name)",
                            pid),
                found.path);
  auto layout = layout_for(found.major, found.minor);
  if (!layout) return tl::unexpected(layout.error());
  if (found.minor >= 13) {
    // 3.13+ say their own offsets: a build the table does not fit is refused, not misread.
    auto checked = check_debug_offsets(memory, found.runtime, *layout);
    if (!checked) {
      if (checked.error().errno_ == ESRCH || gone(pid)) return tl::unexpected(exited(pid));
      return tl::unexpected(checked.error());
    }
  }
  PythonProcess out(root, pid, std::move(found), std::move(*layout));
  out.own_pid_namespace_ = in_own_pid_namespace(root, pid);
  return out;
}

Result<std::vector<ThreadStack>> PythonProcess::sample() {
  auto stacks = reader_.read();
  if (!stacks && (stacks.error().errno_ == ESRCH || gone(pid_)))
    return tl::unexpected(exited(pid_));
  if (stacks && (frame_objects_ || own_pid_namespace_)) host_tids(*stacks);
  return stacks;
}

}  // namespace dltune::pystack

// Root::open and OpenFile: files kept open for the sampler.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "host/root.hpp"

namespace dltune::host {

OpenFile::OpenFile(OpenFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), faults_(std::move(o.faults_)) {}

OpenFile& OpenFile::operator=(OpenFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
    faults_ = std::move(o.faults_);
  }
  return *this;
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::optional<std::string_view>> OpenFile::read(std::string& buf) const {
  if (fd_ < 0) return fail("cannot read (not open)", path_);
  if (const int e = faults_ ? faults_->check(FaultOp::kRead, path_) : 0; e != 0) {
    if (e == ESRCH || e == ENOENT || e == ENODEV) return std::optional<std::string_view>();
    return fail("cannot read", path_, e);
  }
  // The size is the room. Growing a string's size zero-fills what it adds: done once, never at a
  // warm read (a sampler reads ~80 small files a sample, into buffers of 4 KiB).
  if (buf.size() < 4096) buf.resize(std::max<std::size_t>(buf.capacity(), 4096));
  std::size_t used = 0;
  for (;;) {
    const auto n = ::pread(fd_, buf.data() + used, buf.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      buf.clear();
      if (e == ESRCH || e == ENOENT || e == ENODEV) return std::optional<std::string_view>();
      return fail("cannot read", path_, e);
    }
    used += static_cast<std::size_t>(n);
    // procfs/sysfs give the whole text in one read when the buffer holds it: a read that left
    // room is the end. One that filled the buffer may have more: grow and go on.
    if (n == 0 || used < buf.size()) break;
    buf.resize(buf.size() * 2);
  }
  if (faults_ && faults_->check(FaultOp::kShortRead, path_) != 0) used /= 2;
  return std::optional<std::string_view>(std::string_view(buf.data(), used));
}

Result<std::optional<OpenFile>> Root::open(std::string_view path) const {
  std::string host_path;  // with the links followed (in a tree)
  if (live()) {
    if (auto ok = check_path(path); !ok) return tl::unexpected(ok.error());
    host_path = std::string(path);
  } else {
    auto w = walk(path, true);
    if (!w) return tl::unexpected(w.error());
    if (!*w) return std::optional<OpenFile>();
    host_path = std::move(**w);
  }
  const std::string real = outside(host_path);
  int fd = -1;
  if (const int e = fault(FaultOp::kRead, path); e != 0) {
    errno = e;
  } else {
    fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == ESRCH) return std::optional<OpenFile>();
    return fail("cannot read", std::string(path), errno);
  }
  OpenFile f;
  f.fd_ = fd;
  f.path_ = std::string(path);
  f.faults_ = faults_;
  note(Access{Access::Type::kFile, host_path, {}, kDefaultMaxBytes});
  return std::optional<OpenFile>(std::move(f));
}

namespace {

// A name that is all digits, as a pid; -1 otherwise.
int numeric_name(std::string_view n) {
  int v = 0;
  const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
  if (n.empty() || ec != std::errc() || p != n.data() + n.size() || v < 0) return -1;
  return v;
}

}  // namespace

namespace {

// The numeric names in the directory open at `fd` (from its current offset), sorted, into `out`.
// False when the directory has gone (its process exited).
Result<bool> numeric_entries(int fd, std::string_view path, std::vector<int>& out) {
  out.clear();
  // struct linux_dirent64 (getdents64(2)): ino, off, reclen, type, then the NUL-terminated name.
  alignas(8) char buf[16384];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n < 0) {
      const int e = errno;
      if (e == ENOENT || e == ESRCH) return false;
      return fail("cannot list", std::string(path), e);
    }
    if (n == 0) break;
    for (long off = 0; off < n;) {
      const char* rec = buf + off;
      unsigned short reclen = 0;
      std::memcpy(&reclen, rec + 16, sizeof reclen);
      const char* d_name = rec + 19;
      if (const int v = numeric_name(std::string_view(d_name)); v >= 0) out.push_back(v);
      off += reclen;
    }
  }
  std::sort(out.begin(), out.end());
  return true;
}

}  // namespace

Result<bool> Root::list_pids(std::string_view path, std::vector<int>& out) const {
  out.clear();
  if (!live()) {  // a tree: through list(), which follows links inside it
    auto names = list(path);
    if (!names) return tl::unexpected(names.error());
    if (!*names) return false;
    for (const auto& n : **names)
      if (const int v = numeric_name(n); v >= 0) out.push_back(v);
    std::sort(out.begin(), out.end());
    return true;
  }
  // Only /proc is listed so (check_path would allocate: this runs every sample).
  const bool in_proc = path == "/proc" || (path.substr(0, 6) == "/proc/" && path.back() != '/' &&
                                           path.find("//") == std::string_view::npos &&
                                           path.find("/.") == std::string_view::npos &&
                                           path.find('\0') == std::string_view::npos);
  if (!in_proc) return fail("list_pids is for /proc only:", std::string(path));
  // The path as a NUL-terminated string without allocating (paths here are short).
  char name[256];
  if (path.size() >= sizeof name) return fail("path too long", std::string(path));
  std::copy(path.begin(), path.end(), name);
  name[path.size()] = '\0';
  const int fd = ::open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH || errno == ENOTDIR) return false;
    return fail("cannot list", std::string(path), errno);
  }
  auto listed = numeric_entries(fd, path, out);
  ::close(fd);
  return listed;
}

Result<std::optional<OpenFile>> Root::open_directory(std::string_view path) const {
  auto f = open(path);  // the same checks; O_RDONLY opens a directory as well
  if (!f || !*f) return f;
  struct stat st {};
  if (::fstat((*f)->fd_, &st) != 0 || !S_ISDIR(st.st_mode))
    return fail("cannot list (not a directory)", std::string(path), ENOTDIR);
  return f;
}

Result<bool> OpenFile::list_pids(std::vector<int>& out) const {
  out.clear();
  if (fd_ < 0) return fail("cannot list (not open)", path_);
  if (::lseek(fd_, 0, SEEK_SET) < 0) {
    if (errno == ENOENT || errno == ESRCH) return false;
    return fail("cannot list", path_, errno);
  }
  return numeric_entries(fd_, path_, out);
}

}  // namespace dltune::host

#include "core/private_files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/core.h>
#include <fmt/format.h>

namespace dltune::private_files {

namespace {

constexpr auto kLockRetry = std::chrono::milliseconds(20);

Result<void> make_one_dir(const std::string& dir, mode_t mode, bool* created) {
  *created = false;
  if (::mkdir(dir.c_str(), mode) == 0) {
    *created = true;
    return {};
  }
  const int err = errno;
  struct stat st {};
  if (err == EEXIST && ::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return {};
    return fail("cannot create the state directory", dir, ENOTDIR);
  }
  return fail("cannot create the state directory", dir, err);
}

// An existing state directory is trusted only when it is this user's: what it holds (backups of
// system files, the journal that rollback follows) would otherwise be another user's to change.
// A link to it counts as the directory only when the link is this user's too. Group or other
// permissions are taken off, saying so.
Result<void> check_existing_dir(const std::string& dir) {
  const uid_t me = ::geteuid();
  struct stat link {};
  if (::lstat(dir.c_str(), &link) != 0) return fail("cannot read the status of", dir, errno);
  if (S_ISLNK(link.st_mode) && link.st_uid != me)
    return fail(fmt::format(
        "the state directory {} is a symbolic link of uid {}, not of this user (uid {}): dltune "
        "will not keep its journal where another user points; name the directory itself",
        dir, link.st_uid, me));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return fail("cannot read the status of", dir, errno);
  if (st.st_uid != me)
    return fail(fmt::format(
        "the state directory {} belongs to uid {}, not to this user (uid {}): dltune keeps its "
        "journal and the backups of system files there and trusts them; use a directory of your "
        "own (or chown it)",
        dir, st.st_uid, me));
  if ((st.st_mode & 077) != 0) {
    if (::chmod(dir.c_str(), 0700) != 0)
      return fail("cannot set the mode of the state directory", dir, errno);
    fmt::print(stderr,
               "dltune: the state directory {} was mode {:04o}, open to other users: set to "
               "0700\n",
               dir, st.st_mode & 07777);
  }
  return {};
}

}  // namespace

Result<void> make_private_dir(const std::string& dir) {
  if (dir.empty()) return fail("empty state directory name");
  // Parents first, each prefix ending before a '/'; "/" itself and empty prefixes are skipped.
  for (std::size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1)) {
    const std::string parent = dir.substr(0, slash);
    if (parent.back() == '/') continue;  // "a//b"
    bool created = false;
    if (auto r = make_one_dir(parent, 0755, &created); !r) return r;
  }
  std::string leaf = dir;
  while (leaf.size() > 1 && leaf.back() == '/') leaf.pop_back();
  bool created = false;
  if (auto r = make_one_dir(leaf, 0700, &created); !r) return r;
  if (!created) return check_existing_dir(leaf);
  {
    // mkdir's mode is reduced by the umask; the directory's mode must not depend on it.
    if (::chmod(leaf.c_str(), 0700) != 0)
      return fail("cannot set the mode of the state directory", leaf, errno);
    const auto cut = leaf.rfind('/');
    const std::string parent =
        cut == std::string::npos ? std::string(".") : (cut == 0 ? "/" : leaf.substr(0, cut));
    if (auto r = sync_dir(parent); !r) return r;
  }
  return {};
}

Result<bool> create_private_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    // The umask may have taken bits off 0600 (never added any): set it exactly.
    const int rc = ::fchmod(fd, 0600);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return fail("cannot set the mode of", path, err);
    return true;
  }
  if (errno != EEXIST) return fail("cannot create", path, errno);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return fail("cannot read the status of", path, errno);
  if (!S_ISREG(st.st_mode)) return fail("not a regular file:", path);
  return false;
}

Result<void> restrict_to_owner(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return fail("cannot read the status of", path, errno);
  }
  if (!S_ISREG(st.st_mode) || (st.st_mode & 077) == 0) return {};
  if (::chmod(path.c_str(), st.st_mode & 0700) != 0)
    return fail("cannot set the mode of", path, errno);
  return {};
}

Result<void> sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail("cannot open the directory", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return fail("cannot sync the directory", dir, err);
  return {};
}

StateLock::~StateLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

StateLock& StateLock::operator=(StateLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Result<StateLock> StateLock::acquire(const std::string& dir, int wait_ms) {
  const std::string path = dir + "/lock";
  StateLock lock(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (lock.fd_ < 0) return fail("cannot open the lock file", path, errno);
  struct stat st {};
  if (::fstat(lock.fd_, &st) != 0) return fail("cannot read the status of", path, errno);
  // A umask may have taken bits off 0600 when it was created.
  if ((st.st_mode & 0777) != 0600 && ::fchmod(lock.fd_, 0600) != 0)
    return fail("cannot set the mode of", path, errno);
  if (wait_ms < 0) {
    while (::flock(lock.fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return fail("cannot lock", path, errno);
    }
    return lock;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    if (::flock(lock.fd_, LOCK_EX | LOCK_NB) == 0) return lock;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return fail("cannot lock", path, errno);
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(kLockRetry, deadline - now));
  }
  return fail(
      fmt::format("another dltune is changing this host (state directory {} is locked); "
                  "try again when it has finished",
                  dir));
}

}  // namespace dltune::private_files

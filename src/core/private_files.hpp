#pragma once
// The files of the state directory around the database: the directory itself (0700), files
// created 0600, and the lock that keeps two dltune processes from changing a host at once.
// These paths are dltune's own (--state-dir), not host files, so they are opened directly
// rather than through host::Root.
#include <string>

#include "core/error.hpp"

namespace dltune::private_files {

// Creates `dir` (mode 0700) and any missing parents (0755 less the umask, as mkdir -p does).
// An existing directory must be this user's (and a link to it too): another's is refused; one
// open to group or others is set to 0700, saying so on standard error. An existing
// non-directory is an error.
[[nodiscard]] Result<void> make_private_dir(const std::string& dir);

// Creates `path` empty with mode 0600 when it does not exist (never follows a symbolic link);
// an existing file is left as it is. Returns whether it created the file.
[[nodiscard]] Result<bool> create_private_file(const std::string& path);

// Takes group and other permissions off `path` when it exists (SQLite's -wal and -shm files
// copy the database's mode; this is a second line for a database created by another tool).
[[nodiscard]] Result<void> restrict_to_owner(const std::string& path);

// fsync on a directory, so that entries created in it survive a power loss.
[[nodiscard]] Result<void> sync_dir(const std::string& dir);

// An exclusive flock(2) on `dir`/lock, held until destruction. flock, not fcntl: fcntl locks
// belong to the process, and SQLite's own fcntl locks on the database would interfere.
class StateLock {
 public:
  StateLock() = default;
  ~StateLock();
  StateLock(StateLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  StateLock& operator=(StateLock&& other) noexcept;
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

  // Waits up to `wait_ms` (0: one try; negative: as long as it takes) for the lock.
  [[nodiscard]] static Result<StateLock> acquire(const std::string& dir, int wait_ms);

 private:
  explicit StateLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace dltune::private_files

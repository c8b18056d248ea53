// attach_self (declared in cgroup.hpp): the child's half of joining the job's cgroup, between
// fork and exec. Only async-signal-safe calls (open, write, close): the parent may have had
// threads, and after fork only those calls are safe (signal-safety(7)).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "launch/cgroup.hpp"

namespace dltune::launch {

int attach_self(const std::vector<std::string>& procs_files) {
  // The PID in decimal without snprintf (not on the async-signal-safe list).
  char digits[24];
  std::size_t n = 0;
  for (auto pid = static_cast<unsigned long>(::getpid()); pid > 0 || n == 0; pid /= 10)
    digits[n++] = static_cast<char>('0' + pid % 10);
  char text[24];
  for (std::size_t i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  for (const auto& file : procs_files) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    const auto written = ::write(fd, text, n);
    const int err = written < 0 ? errno : (static_cast<std::size_t>(written) == n ? 0 : EIO);
    // The kernel reports a refused attach (cpuset without cpus: ENOSPC) from write or close.
    if (::close(fd) != 0 && err == 0 && errno != EINTR) return errno;
    if (err != 0) return err;
  }
  return 0;
}

}  // namespace dltune::launch

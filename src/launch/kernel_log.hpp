#pragma once
// The OOM kills of one job, from the kernel's own log (/dev/kmsg, root only): opened at the end
// of the log before the job starts, read when it has ended. The full kernel-log reader is
// `dltune doctor`'s; this one only looks for the job's OOM victims.
#include <optional>
#include <string>
#include <vector>

#include "host/parse/kmsg.hpp"

namespace dltune::launch {

class OomWatch {
 public:
  // Opens /dev/kmsg at its end; when it cannot (not root, no /dev/kmsg), `available()` is false
  // and `victims` returns nothing.
  OomWatch();
  ~OomWatch();
  OomWatch(const OomWatch&) = delete;
  OomWatch& operator=(const OomWatch&) = delete;
  [[nodiscard]] bool available() const { return fd_ >= 0; }
  // The OOM kills logged since the watch opened whose victim was in a cgroup named
  // `cgroup_name` (a path component: "/dltune/NAME" on v1, "/dltune/NAME" under the v2 root).
  [[nodiscard]] std::vector<host::parse::OomKill> victims(const std::string& cgroup_name);

 private:
  int fd_ = -1;
};

}  // namespace dltune::launch

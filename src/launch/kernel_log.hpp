#pragma once
// The OOM kills of one job, from the kernel's own log (/dev/kmsg, root only, host::KmsgReader):
// opened at the end of the log before the job starts, read when it has ended.
#include <string>
#include <vector>

#include "host/kmsg.hpp"
#include "host/parse/kmsg.hpp"
#include "host/root.hpp"

namespace dltune::launch {

class OomWatch {
 public:
  // Opens `root`'s /dev/kmsg at its end; when it cannot (not root, no /dev/kmsg, a tree),
  // `available()` is false and `victims` returns nothing.
  explicit OomWatch(const host::Root& root);
  [[nodiscard]] bool available() const { return reader_.is_open(); }
  // The OOM kills logged since the watch opened whose victim was in a cgroup named
  // `cgroup_name` (a path component: "/dltune/NAME" on v1, "/dltune/NAME" under the v2 root).
  [[nodiscard]] std::vector<host::parse::OomKill> victims(const std::string& cgroup_name);

 private:
  host::KmsgReader reader_;
};

}  // namespace dltune::launch

#pragma once
// Where a sysctl's boot-time value comes from: the sysctl.d files in systemd-sysctl's order
// (sysctl.d(5)): every *.conf of /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d,
// /usr/lib/sysctl.d and /lib/sysctl.d, sorted by file name, a name in an earlier directory
// masking the same name in a later one; then /etc/sysctl.conf, which procps' `sysctl --system`
// reads last. A later assignment wins.
#include <string>
#include <vector>

#include "inventory/context.hpp"

namespace dltune::settings {

// The file dltune's own persistent settings go to (docs/architecture.md).
inline constexpr const char* kDltuneSysctlFile = "/etc/sysctl.d/90-dltune.conf";

struct SysctlSource {
  std::string file;
  int line = 0;
  std::string value;
};

class SysctlFiles {
 public:
  // Reads every file once.
  explicit SysctlFiles(const host::Root& root);
  // Every assignment of `key` (dotted canonical name) at boot, in the order applied.
  [[nodiscard]] std::vector<SysctlSource> sources(const std::string& key) const;
  // Files applied after dltune's own file that set `key`: they override what tune persists.
  [[nodiscard]] std::vector<SysctlSource> overriding_dltune(const std::string& key) const;
  [[nodiscard]] const std::vector<std::string>& files() const { return order_; }

 private:
  struct Entry {
    std::string key;
    SysctlSource source;
    std::size_t file_index;
  };
  std::vector<std::string> order_;  // files in the order applied
  std::vector<Entry> entries_;
};

}  // namespace dltune::settings

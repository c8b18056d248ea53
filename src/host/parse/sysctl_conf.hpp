#pragma once
// sysctl.d(5) files: "key = value" lines, '#' and ';' comments, a leading '-' (ignore errors).
#include <string>
#include <string_view>
#include <vector>

namespace dltune::host::parse {

struct SysctlAssignment {
  std::string key;    // as written (dots or slashes)
  std::string value;  // trimmed
  int line = 0;
};

// Lines that are not assignments are skipped: systemd-sysctl logs and ignores them too.
[[nodiscard]] std::vector<SysctlAssignment> sysctl_conf(std::string_view text);

}  // namespace dltune::host::parse

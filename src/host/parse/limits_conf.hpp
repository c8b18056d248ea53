#pragma once
// limits.conf(5), read by pam_limits at login from /etc/security/limits.conf and
// /etc/security/limits.d/*.conf:
//
//   <domain> <type> <item> <value>
//   *               soft    nofile          65536
//   @faculty        hard    nproc           50
//   ftp             -       memlock         unlimited   # '-' sets soft and hard
//
// '#' starts a comment that runs to the end of the line (also after a value). pam_limits reads the
// first four words of a line (more are ignored) and lowercases the type and item; a line with fewer
// words sets no limit (it logs "invalid line"), so it is skipped here.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::host::parse {

struct LimitsEntry {
  int line = 0;        // 1-based
  std::string domain;  // "*", "@group", "%group", a user name, "1000:" (uid range)
  std::string type;    // "soft", "hard" or "-", lowercased
  std::string item;    // "nofile", "memlock", "nproc", ..., lowercased
  std::string value;   // "65536", "unlimited", "-1", "-20"
  // Byte range of the value in the text, for a caller that replaces it and nothing else.
  std::size_t value_begin = 0;
  std::size_t value_end = 0;
};

[[nodiscard]] std::vector<LimitsEntry> limits_conf(std::string_view text);

}  // namespace dltune::host::parse

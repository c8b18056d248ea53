#pragma once
// The persistent files tune writes (issue 4): dltune's own drop-ins, never the distribution's
// files, and the options of an fstab entry. Pure functions: text in, text out.
//
// OWNER: dropins helper (interface fixed by the lead; extend, do not rename).
#include <map>
#include <vector>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::tune {

// /etc/sysctl.d/90-dltune.conf: `existing` (the file as it is, or empty) with `settings`
// (dotted name -> value) merged in: a key already there gets the new value in place, new keys
// are appended in name order, lines dltune did not write are kept. A header comment says the file
// is dltune's and how to undo it (`dltune tune rollback`).
[[nodiscard]] std::string merge_sysctl_dropin(std::string_view existing,
                                              const std::map<std::string, std::string>& settings);
// The same file with `keys` taken out (for rollback of one transaction's keys when others stay);
// empty result when nothing but the header is left.
[[nodiscard]] std::string remove_from_sysctl_dropin(std::string_view existing,
                                                    const std::vector<std::string>& keys);

// /etc/security/limits.d/90-dltune.conf (limits.conf(5)): for `domain` ("*" or a user name),
// item ("nofile", "memlock") -> value ("65536", "unlimited"), soft and hard lines both.
[[nodiscard]] std::string merge_limits_dropin(std::string_view existing, const std::string& domain,
                                              const std::map<std::string, std::string>& items);

// /etc/fstab (fstab(5)): the entry whose mount point is `mount_point` with `option` added to its
// options (replacing relatime/strictatime/atime for the atime family). Error naming the mount
// point when there is no such entry, or when it appears twice. Comments, blank lines, spacing of
// other lines are kept byte for byte.
[[nodiscard]] Result<std::string> fstab_add_option(std::string_view fstab,
                                                   const std::string& mount_point,
                                                   const std::string& option);

}  // namespace dltune::tune

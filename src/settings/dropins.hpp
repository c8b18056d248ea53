#pragma once
// The persistent files tune writes: dltune's own drop-ins, never the distribution's
// files, and the options of an fstab entry. Pure functions: text in, text out.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::settings {

// The first line of each drop-in: whose file it is and how to undo it. A file without it gets it
// on top at the next merge.
inline constexpr std::string_view kSysctlDropinHeader =
    "# Written by dltune tune apply --persist. Undo with: dltune tune rollback. "
    "Do not edit: dltune rewrites this file.";
inline constexpr std::string_view kLimitsDropinHeader =
    "# Written by dltune tune apply --persist into limits.d: logins and services must restart "
    "to pick it up. Undo with: dltune tune rollback. Do not edit: dltune rewrites this file.";

// /etc/sysctl.d/90-dltune.conf: `existing` (the file as it is, or empty) with `settings`
// (dotted name -> value) merged in: a key already there gets the new value in place, new keys
// are appended in name order, lines dltune did not write are kept. A header comment says the file
// is dltune's and how to undo it (`dltune tune rollback`).
//
// Keys are compared by their normalised names (sysctl_normalise: "vm/swappiness" is
// "vm.swappiness"); a name that does not normalise (a glob such as "net.ipv4.conf.*.rp_filter")
// is compared as written. Every line that sets a key gets the new value (sysctl.d applies the
// last one, so all must agree). A replaced line keeps its '-' prefix, its key as written and the
// spaces around '=' ("vm.swappiness=10" -> "vm.swappiness=1"); a line indented or with tabs around
// '=' is rewritten as "[-]key = value". New lines are "key = value" with the normalised name.
// Values are written trimmed, with any line break turned into a space. The result ends with a
// newline, and merging the same settings again gives the same text.
[[nodiscard]] std::string merge_sysctl_dropin(std::string_view existing,
                                              const std::map<std::string, std::string>& settings);
// The same file with `keys` taken out (for rollback of one transaction's keys when others stay):
// every line that sets one of them is removed, every other line kept. Empty result when nothing
// but comments (the header) and blank lines is left: the caller then removes the file.
[[nodiscard]] std::string remove_from_sysctl_dropin(std::string_view existing,
                                                    const std::vector<std::string>& keys);

// /etc/security/limits.d/90-dltune.conf (limits.conf(5)): for `domain` ("*" or a user name),
// item ("nofile", "memlock") -> value ("65536", "unlimited"), soft and hard lines both.
//
// An existing line for the same domain and item (type soft, hard or '-', which is both) gets the
// new value in place, nothing else on it changes; the types no line covers are appended, item by
// item in name order, soft before hard, as "<domain> <type> <item> <value>" with single spaces.
// Other lines are kept byte for byte. Check the input with check_limits first; values are written
// as given (trimmed, line breaks turned into spaces). Ends with a newline; idempotent.
[[nodiscard]] std::string merge_limits_dropin(std::string_view existing, const std::string& domain,
                                              const std::map<std::string, std::string>& items);
// The same file with every line for `domain` and one of `items` (any type) removed; empty when
// nothing but comments and blank lines is left.
[[nodiscard]] std::string remove_from_limits_dropin(std::string_view existing,
                                                    const std::string& domain,
                                                    const std::vector<std::string>& items);
// Refuses what pam_limits would not read as meant: an empty domain or one with spaces or '#',
// an item it does not know, a value other than "unlimited", "infinity", "-1" or an integer
// (other negative ones only for "nice" and "priority"). Error names the item and the value.
[[nodiscard]] Result<void> check_limits(const std::string& domain,
                                        const std::map<std::string, std::string>& items);

// /etc/fstab (fstab(5)): the entry whose mount point is `mount_point` with `option` added to its
// options (replacing relatime/strictatime/atime for the atime family). Error naming the mount
// point when there is no such entry, or when it appears twice. Comments, blank lines, spacing of
// other lines are kept byte for byte.
//
// Mount points are compared with their \ooo escapes decoded and trailing slashes ignored. Only
// the options field changes: "defaults" -> "defaults,noatime"; an option that contradicts the new
// one (the atime family noatime/relatime/strictatime/atime/norelatime/nostrictatime; "foo" and
// "nofoo"; "name=other" for "name=value") is replaced where it stands, further contradicting ones
// dropped; otherwise the option is appended. Already there and uncontradicted: the same text.
// An entry without an options field gets one after its type. Refuses an empty option or one with
// spaces, tabs, commas or '#'.
[[nodiscard]] Result<std::string> fstab_add_option(std::string_view fstab,
                                                   const std::string& mount_point,
                                                   const std::string& option);
// The options field of the entry for `mount_point` as written ("errors=remount-ro"; "defaults"
// when the entry has none), for the plan. Same errors as fstab_add_option.
[[nodiscard]] Result<std::string> fstab_options(std::string_view fstab,
                                                const std::string& mount_point);

}  // namespace dltune::settings

namespace dltune::settings {

inline constexpr std::string_view kTmpfilesDropinHeader =
    "# Written by dltune tune apply --persist: systemd-tmpfiles writes these sysfs values at boot "
    "(type w, tmpfiles.d(5)). Undo with: dltune tune rollback. Do not edit: dltune rewrites this "
    "file.";

// /etc/tmpfiles.d/90-dltune.conf (tmpfiles.d(5)): for each sysfs path (a glob is allowed, as
// type w accepts one: "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor") the line
// "w PATH - - - - VALUE". A `w` line for the same path gets the new value in place; new paths
// are appended in path order; other lines are kept byte for byte. Refuses a path that is not
// under /sys or holds blanks, and an empty value. Ends with a newline; idempotent.
[[nodiscard]] Result<std::string> merge_tmpfiles_dropin(
    std::string_view existing, const std::map<std::string, std::string>& writes);

inline constexpr std::string_view kUdevDropinHeader =
    "# Written by dltune tune apply --persist: udev sets these attributes of the disks under the "
    "training data whenever a disk appears (at boot, and when it is plugged in), by the disk's "
    "serial number where udev knows it (udev(7)). Undo with: dltune tune rollback. Do not edit: "
    "dltune rewrites this file.";

// One rule of dltune's udev file: a whole disk (`match`: `ENV{ID_SERIAL}=="..."`, or
// `KERNEL=="sdb"` for a disk udev knows no serial of) and the attribute under its sysfs
// directory that it sets ("queue/scheduler") to `value`.
struct UdevRule {
  std::string match, attribute, value;
  int line = 0;  // in the file (1-based), when read from one
};
// /etc/udev/rules.d/60-dltune.rules: `existing` with `writes` (match -> attribute -> value)
// merged in, one line a rule:
//   ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", MATCH, ATTR{ATTRIBUTE}="VALUE"
// A rule for the same match and attribute gets the new value in place; new ones are appended in
// order; other lines are kept byte for byte. Refuses a match that is neither form, an attribute
// outside queue/ with other than letters, digits and '_', and a value with quotes, backslashes
// or blanks. Ends with a newline; idempotent.
[[nodiscard]] Result<std::string> merge_udev_dropin(
    std::string_view existing,
    const std::map<std::string, std::map<std::string, std::string>>& writes);
// The rules of such a file (lines of any other shape are not dltune's: left out).
[[nodiscard]] std::vector<UdevRule> udev_dropin_rules(std::string_view text);

}  // namespace dltune::settings

#pragma once
// A mounted file system's access-time mode (mount.noatime): read from
// /proc/self/mountinfo, changed live with mount(2) (MS_REMOUNT | MS_BIND: only the mount's own
// flags change, the file system's options are left alone; what `mount -o remount,noatime` does
// for per-mount flags, see mount(2) "Changing the mount flags of an existing mount").
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "host/root.hpp"

namespace dltune::settings {

// "noatime", "relatime", "strictatime" (no atime option: the kernel's default before 2.6.30) of
// the mount at `mount_point` (the last one mounted there); empty when nothing is mounted there.
[[nodiscard]] Result<std::optional<std::string>> read_atime_mode(const host::Root& root,
                                                                 const std::string& mount_point);
// Remounts `mount_point` with atime mode `mode`, keeping its other per-mount flags (ro, nosuid,
// nodev, noexec, nodiratime); returns the mode read back. Only on the live host, as root.
[[nodiscard]] Result<std::string> set_atime_mode(const host::Root& root,
                                                 const std::string& mount_point,
                                                 const std::string& mode);
// The atime mode that a mount's option list gives ("rw,nosuid,relatime" -> "relatime").
[[nodiscard]] std::string atime_mode(std::string_view options);

}  // namespace dltune::settings

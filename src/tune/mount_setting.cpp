#include "tune/mount_setting.hpp"

#include <sys/mount.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "core/text.hpp"
#include "host/parse/proc.hpp"

namespace dltune::tune {

namespace {

Result<std::optional<host::parse::Mount>> find_mount(const host::Root& root,
                                                     const std::string& mount_point) {
  auto text = root.read("/proc/self/mountinfo");
  if (!text) return tl::unexpected(text.error());
  if (!*text) return fail("cannot read the mount table", "/proc/self/mountinfo", ENOENT);
  auto mounts = host::parse::mountinfo(**text);
  if (!mounts) return tl::unexpected(mounts.error());
  std::optional<host::parse::Mount> found;
  for (auto& m : *mounts)  // the last one mounted there is the one in use
    if (m.mount_point == mount_point) found = std::move(m);
  return found;
}

bool has(const std::vector<std::string>& options, std::string_view o) {
  return std::find(options.begin(), options.end(), o) != options.end();
}

}  // namespace

std::string atime_mode(std::string_view options) {
  const auto parts = text::split(options, ',');
  const auto in = [&](std::string_view o) {
    return std::find(parts.begin(), parts.end(), o) != parts.end();
  };
  if (in("noatime")) return "noatime";
  if (in("relatime")) return "relatime";
  return "strictatime";
}

Result<std::optional<std::string>> read_atime_mode(const host::Root& root,
                                                   const std::string& mount_point) {
  auto m = find_mount(root, mount_point);
  if (!m) return tl::unexpected(m.error());
  if (!*m) return std::optional<std::string>();
  return atime_mode(text::join((*m)->options, ","));
}

Result<std::string> set_atime_mode(const host::Root& root, const std::string& mount_point,
                                   const std::string& mode) {
  unsigned long atime = 0;
  if (mode == "noatime") {
    atime = MS_NOATIME;
  } else if (mode == "relatime") {
    atime = MS_RELATIME;
  } else if (mode == "strictatime") {
    atime = MS_STRICTATIME;
  } else {
    return fail(fmt::format("not an access-time mode (noatime, relatime, strictatime) for {}:",
                            mount_point),
                mode);
  }
  if (!root.live()) return fail("can remount only on the live host, not in", root.base(), EPERM);
  auto m = find_mount(root, mount_point);
  if (!m) return tl::unexpected(m.error());
  if (!*m) return fail("nothing is mounted on", mount_point, ENOENT);
  // The mount's other per-mount flags stay as they are: MS_REMOUNT | MS_BIND replaces all of
  // them (mount(2)), so each is passed again.
  unsigned long flags = MS_REMOUNT | MS_BIND | atime;
  const auto& o = (*m)->options;
  if (has(o, "ro")) flags |= MS_RDONLY;
  if (has(o, "nosuid")) flags |= MS_NOSUID;
  if (has(o, "nodev")) flags |= MS_NODEV;
  if (has(o, "noexec")) flags |= MS_NOEXEC;
  if (has(o, "nodiratime")) flags |= MS_NODIRATIME;
#ifdef MS_NOSYMFOLLOW
  if (has(o, "nosymfollow")) flags |= MS_NOSYMFOLLOW;
#endif
  if (::mount(nullptr, mount_point.c_str(), nullptr, flags, nullptr) != 0)
    return fail(fmt::format("cannot remount with {}:", mode), mount_point, errno);
  auto back = read_atime_mode(root, mount_point);
  if (!back) return tl::unexpected(back.error());
  if (!*back) return fail("the mount vanished after the remount:", mount_point, ENOENT);
  return **back;
}

}  // namespace dltune::tune

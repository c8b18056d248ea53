#include "settings/mount_setting.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include <fmt/format.h>

#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/data_paths.hpp"
#include "settings/dropins.hpp"

namespace dltune::settings {

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
  // The mount looked up, not whatever the path names by the time mount(2) walks it (a link or
  // another mount put in its way meanwhile would get this mount's flags, "rw" among them): the
  // path is opened once, checked to be that mount's root (its mount id, statx(2)), and
  // remounted through the descriptor.
  const int fd = ::open(mount_point.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail("cannot open the mount point", mount_point, errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) != 0)
    return fail("cannot read the status of", mount_point, errno);
  if ((sx.stx_mask & STATX_MNT_ID) != 0 && sx.stx_mnt_id != static_cast<std::uint64_t>((*m)->id))
    return fail(
        fmt::format("{} is no longer mount {} of /proc/self/mountinfo (it leads to mount "
                    "{}): not remounted",
                    mount_point, (*m)->id, sx.stx_mnt_id));
  if ((sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
      (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) == 0)
    return fail(fmt::format("{} is not the root of a mount: not remounted", mount_point));
  const std::string through = fmt::format("/proc/self/fd/{}", fd);
  if (::mount(nullptr, through.c_str(), nullptr, flags, nullptr) != 0)
    return fail(fmt::format("cannot remount with {}:", mode), mount_point, errno);
  auto back = read_atime_mode(root, mount_point);
  if (!back) return tl::unexpected(back.error());
  if (!*back) return fail("the mount vanished after the remount:", mount_point, ENOENT);
  return **back;
}

const ChangeKind kMountChange = {"mount", read_atime_mode, set_atime_mode, false};

Result<void> plan_mount(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  if (!e.expected.matches("true")) {
    item.status = PlanItem::Status::kNotTunable;
    item.summary = "tune only adds noatime; the profile does not ask for it";
    return {};
  }
  if (context.facts.os.container) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "in a container: the mount options are the host's";
    return {};
  }
  auto& persisted = context.persisted;
  const auto paths = context.data_paths.empty() ? default_data_paths() : context.data_paths;
  std::vector<std::string> from, ok;
  for (const auto& d : data_file_systems(context.root, context.facts, paths)) {
    const auto& mp = d.fs->mount_point;
    const auto mode = atime_mode(text::join(d.fs->options, ","));
    if (mode == "noatime") {
      ok.push_back(mp);
    } else {
      from.push_back(fmt::format("{} {}", mp, mode));
      item.changes.push_back({e.key, "mount", mp, mode, "noatime", false});
    }
    if (!context.persist) continue;
    const std::string fstab =
        persisted.fstab_new ? *persisted.fstab_new : persisted.fstab_old.value_or("");
    auto next = fstab_add_option(fstab, mp, "noatime");
    if (!next) {
      persisted.fstab_notes.push_back(fmt::format(
          "{}: {}; the remount lasts until {} is mounted again", mp, next.error().message(), mp));
      continue;
    }
    if (*next != fstab) persisted.fstab_new = *next;
  }
  if (item.changes.empty()) {
    item.status = ok.empty() ? PlanItem::Status::kNotApplicable : PlanItem::Status::kAlreadyOk;
    item.summary = ok.empty() ? "no file system holds the data paths"
                              : fmt::format("already noatime: {}", fmt::join(ok, ", "));
    return {};
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> noatime (remount)", fmt::join(from, ", "));
  return {};
}

std::vector<Finding> check_mount(const CheckInput& in, const ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = check_data_paths(in.facts, in.data_paths);
  for (const auto& d : data_file_systems(in.root, in.facts, paths)) {
    const auto* best = d.fs;
    const std::string mode = atime_mode(text::join(best->options, ","));
    Finding f =
        judge(entry, "storage", mode == "noatime" ? "true" : "false",
              {{"/proc/self/mountinfo", fmt::format("{} {} {}", best->mount_point, best->fstype,
                                                    fmt::join(best->options, ","))}});
    f.actual = mode;
    if (f.severity == Severity::kOk) {
      f.summary = fmt::format("{} ({}) is mounted noatime", best->mount_point, best->fstype);
    } else {
      // relatime writes an access time at most once a day per file: little to gain.
      if (mode == "relatime") f.severity = Severity::kInfo;
      f.summary =
          fmt::format("{} ({}) is mounted {}, not noatime{}", best->mount_point, best->fstype, mode,
                      d.path == best->mount_point ? "" : " (holds " + d.path + ")");
      f.fix = data_fix(entry.key, in.data_paths, d.path);
      f.notes.push_back(
          "every read of a training file also writes its access time unless the "
          "file system is mounted noatime");
    }
    container_advice(in, f, "");
    // Apptainer's user guide, "Bind Paths and Mounts": host directories come in with --bind
    // (and $HOME, /tmp by default) as bind mounts, whose atime flag is the host mount's.
    if (const auto runtime = apptainer_runtime(in); !runtime.empty() && f.severity != Severity::kOk)
      f.notes.push_back(runtime +
                        " brings host directories in with --bind, with the host mount's "
                        "options: remount it noatime on the host");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(not_applicable(entry, "storage", "no file system holds the data paths"));
  return out;
}

}  // namespace dltune::settings

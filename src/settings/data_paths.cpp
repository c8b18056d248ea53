#include "settings/data_paths.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "inventory/storage.hpp"
#include "settings/setting.hpp"

namespace dltune::settings {

namespace {

// File system types that hold no data of their own, beside the kernel's (proc, sysfs, cgroup...:
// inventory::is_data_fstype): memory (tmpfs, ramfs, devtmpfs), a container's layers (overlay,
// aufs), read-only images (squashfs and squashfuse: snaps, live systems, Apptainer's images;
// iso9660 and udf: optical media) and LXC's /proc views (lxcfs).
constexpr std::string_view kNotDataTypes[] = {
    "tmpfs",      "ramfs",         "devtmpfs",        "overlay",
    "aufs",       "squashfs",      "fuse.squashfuse", "fuse.squashfuse_ll",
    "fuse.lxcfs", "fuse.snapfuse", "iso9660",         "udf"};

// Directories of the system (the Filesystem Hierarchy Standard 3.0's, systemd's /efi, snapd's
// /snap, Apptainer's /.singularity.d): a mount on or under one (/boot/efi, /run/user/1000,
// /var/lib/docker/overlay2/..., /var/lib/kubelet/pods/..., /etc/hosts in a container) holds
// the system or a runtime's state, not training data.
constexpr std::string_view kSystemDirs[] = {"/boot",  "/efi",   "/dev",    "/proc",          "/sys",
                                            "/run",   "/snap",  "/etc",    "/usr",           "/opt",
                                            "/var",   "/tmp",   "/bin",    "/sbin",          "/lib",
                                            "/lib32", "/lib64", "/libx32", "/.singularity.d"};

std::string dirname(const std::string& path) {
  return path.substr(0, path.rfind('/'));
}

}  // namespace

Result<void> check_data_option(const host::Root& root, const std::vector<std::string>& paths) {
  for (const auto& d : paths)
    if (d.empty() || d.front() != '/')
      return fail(fmt::format("--data {}: expected an absolute path", d));
  // A host tree holds no data directories (a capture copies /proc, /sys and /etc): only this
  // kernel's are looked for, through its mount when it is one (without the list of known
  // locations: data lives anywhere, /data, /mnt, /scratch).
  if (!root.this_kernel()) return {};
  for (const auto& d : paths) {
    struct stat st {};
    const auto where = root.outside(d);
    if (::stat(where.c_str(), &st) != 0)
      return fail(
          fmt::format("--data {}: {} (expected the directory that holds the training "
                      "data, or a file in it)",
                      d, std::strerror(errno)));
  }
  return {};
}

std::vector<std::string> default_data_paths() {
  return {"/", "/home"};
}

bool is_data_mount(const inventory::FileSystem& fs) {
  const auto& mp = fs.mount_point;
  const auto defaults = default_data_paths();
  if (mp.empty() || std::find(defaults.begin(), defaults.end(), mp) != defaults.end()) return false;
  if (!inventory::is_data_fstype(fs.fstype)) return false;
  for (const auto t : kNotDataTypes)
    if (fs.fstype == t) return false;
  for (const auto d : kSystemDirs)
    if (text::path_within(mp, d)) return false;
  // statvfs's size; 0 for pseudo file systems. Unknown (not recorded in a capture): counted.
  return !fs.total_bytes || *fs.total_bytes >= kMinDataFileSystemBytes;
}

std::vector<std::string> data_mounts(const inventory::StorageFacts& storage) {
  std::vector<std::string> out;
  for (const auto& fs : storage.file_systems)
    if (is_data_mount(fs) && std::find(out.begin(), out.end(), fs.mount_point) == out.end())
      out.push_back(fs.mount_point);
  return out;
}

std::vector<std::string> check_data_paths(const inventory::HostFacts& facts,
                                          const std::vector<std::string>& given) {
  if (!given.empty()) return given;
  auto paths = default_data_paths();
  for (auto& m : data_mounts(facts.storage)) paths.push_back(std::move(m));
  return paths;
}

Fix data_fix(const std::string& key, const std::vector<std::string>& given,
             const std::string& path) {
  return Fix{fmt::format("dltune tune apply --only {}{} --persist", key, data_option(given, path)),
             true};
}

std::string data_option(const std::vector<std::string>& given, const std::string& path) {
  const auto defaults = default_data_paths();
  if (given.empty() && std::find(defaults.begin(), defaults.end(), path) != defaults.end())
    return "";
  return " --data " + text::shell_quote(path);
}

std::optional<std::string> disk_of(const host::Root& root, const std::string& device) {
  if (!device.starts_with("/dev/")) return std::nullopt;
  // /dev/mapper/x and /dev/disk/by-*/x are links to /dev/dm-0, /dev/sda1, ...
  auto real = root.resolve(device);
  const std::string name(real && *real ? text::base_name(**real) : text::base_name(device));
  if (name.empty()) return std::nullopt;
  // /sys/class/block/NAME links into the device tree: .../block/sda/sda1 for a partition
  // (which has a `partition` file), .../block/sda for a disk (sysfs-block(5)).
  auto dev = root.resolve("/sys/class/block/" + name);
  if (!dev || !*dev) return std::nullopt;
  const std::string disk =
      root.exists(**dev + "/partition") ? std::string(text::base_name(dirname(**dev))) : name;
  if (!root.exists("/sys/block/" + disk + "/queue")) return std::nullopt;
  return disk;
}

std::vector<DataFileSystem> data_file_systems(const host::Root& root,
                                              const inventory::HostFacts& facts,
                                              const std::vector<std::string>& paths) {
  std::vector<DataFileSystem> out;
  for (const auto& p : paths) {
    const inventory::FileSystem* best = nullptr;
    for (const auto& fs : facts.storage.file_systems) {
      const auto& mp = fs.mount_point;
      const bool holds = mp == "/" || p == mp || (p.starts_with(mp) && p[mp.size()] == '/');
      if (holds && (!best || mp.size() > best->mount_point.size())) best = &fs;
    }
    if (!best) continue;
    if (std::any_of(out.begin(), out.end(), [&](const DataFileSystem& d) { return d.fs == best; }))
      continue;
    out.push_back({best, p, disk_of(root, best->device)});
  }
  return out;
}

DiskMatch udev_disk_match(const host::Root& root, const std::string& disk) {
  DiskMatch m{fmt::format("KERNEL==\"{}\"", disk), true};
  const auto dev = read_trimmed(root, "/sys/block/" + disk + "/dev");
  if (!dev) return m;
  const auto lines = root.lines("/run/udev/data/b" + *dev);
  if (!lines || !*lines) return m;
  for (const auto& line : **lines) {
    if (!line.starts_with("E:ID_SERIAL=")) continue;
    const std::string serial = line.substr(12);
    // udev's serial is already escaped to letters, digits and _-.:+ (udev_replace_chars); one
    // that is not is not matched by it here either.
    if (serial.empty() || serial.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
                                                   "tuvwxyz0123456789_-.:+") != std::string::npos)
      return m;
    return {fmt::format("ENV{{ID_SERIAL}}==\"{}\"", serial), false};
  }
  return m;
}

}  // namespace dltune::settings

#pragma once
// Where training data lives (check --data, tune --data): the file systems that hold the data
// paths and the disks under them, for mount.noatime and block.read_ahead_kb. Without --data,
// tune acts on / and /home, and check judges those and the host's data mounts as well.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "inventory/storage.hpp"
#include "settings/finding.hpp"

namespace dltune::settings {

// tune's data paths when none are given (tune --data): the root and home file systems.
[[nodiscard]] std::vector<std::string> default_data_paths();
// The --data paths of check, tune and bench: each absolute, and on this kernel's host (live, or
// a mount of it) present; a typo would otherwise judge or remount the file system of / in its
// place. A host tree's are not looked for (it holds no data). The error names the path and
// says what was expected.
[[nodiscard]] Result<void> check_data_option(const host::Root& root,
                                             const std::vector<std::string>& paths);

// File systems smaller than this are not data file systems (when their size is known).
inline constexpr std::uint64_t kMinDataFileSystemBytes = 10ULL << 30;

// Whether `fs` holds data rather than the system: a file system of files (not proc, sysfs,
// tmpfs, devtmpfs, a container's overlay, a squashfs image such as a snap), not mounted on or
// under a system directory (/boot, /efi, /dev, /proc, /sys, /run, /snap, /etc, /usr, /opt,
// /var, /tmp and their kind: /var/lib/docker's mounts among them), and of at least
// kMinDataFileSystemBytes when its size is known. / and /home are not counted here: they are
// default_data_paths().
[[nodiscard]] bool is_data_mount(const inventory::FileSystem& fs);

// The mount points of the data file systems (is_data_mount), in the mount table's order.
[[nodiscard]] std::vector<std::string> data_mounts(const inventory::StorageFacts& storage);

// The data paths check judges (check --data): `given` when it is not empty, else / and /home
// (default_data_paths) and every data mount (data_mounts: /data, /scratch, /mnt/..., an NFS,
// Lustre, GPFS, BeeGFS, XFS or ext4 volume).
[[nodiscard]] std::vector<std::string> check_data_paths(const inventory::HostFacts& facts,
                                                        const std::vector<std::string>& given);

// The --data option that makes `tune` act on the file system holding `path`, for a check's fix:
// " --data PATH" when --data was given or when `path` is not one of tune's defaults, else "".
[[nodiscard]] std::string data_option(const std::vector<std::string>& given,
                                      const std::string& path);
// The fix of a setting judged per file system under the data (`key`: mount.noatime, block.*):
// "dltune tune apply --only KEY[ --data PATH] --persist".
[[nodiscard]] Fix data_fix(const std::string& key, const std::vector<std::string>& given,
                           const std::string& path);

struct DataFileSystem {
  const inventory::FileSystem* fs = nullptr;
  std::string path;                 // the (first) data path it holds
  std::optional<std::string> disk;  // the whole disk under /sys/block that holds it ("vda",
                                    // "nvme0n1", "dm-0"); empty for tmpfs, NFS, overlay...
};

// One entry per file system that holds a path of `paths` (the longest mount point that is a
// prefix of it), in the order of `paths`, without repeats.
[[nodiscard]] std::vector<DataFileSystem> data_file_systems(const host::Root& root,
                                                            const inventory::HostFacts& facts,
                                                            const std::vector<std::string>& paths);

// The disk under /sys/block that holds block device `device` ("/dev/sda1" -> "sda",
// "/dev/mapper/vg-data" -> "dm-0", "/dev/vda" -> "vda"); empty when it is not a block device.
[[nodiscard]] std::optional<std::string> disk_of(const host::Root& root, const std::string& device);

// How dltune's udev file (kUdevDropin) names disk `disk` ("sda", "nvme0n1"): by the serial udev
// recorded for it (/run/udev/data/bMAJOR:MINOR, the line E:ID_SERIAL=..., MAJOR:MINOR from
// /sys/block/DISK/dev), which stays with the disk when its name changes at the next boot; else
// by its name now (`by_name`: no udev database, or no serial in it).
struct DiskMatch {
  std::string match;  // ENV{ID_SERIAL}=="..." or KERNEL=="sda"
  bool by_name = true;
};
[[nodiscard]] DiskMatch udev_disk_match(const host::Root& root, const std::string& disk);

}  // namespace dltune::settings

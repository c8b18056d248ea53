#pragma once
// Where training data lives (check --data, tune --data): the file systems that hold the data
// paths and the disks under them, for mount.noatime and block.read_ahead_kb.
#include <optional>
#include <string>
#include <vector>

#include "host/root.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::settings {

// The data paths when none are given: the root and home file systems.
[[nodiscard]] std::vector<std::string> default_data_paths();

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

}  // namespace dltune::settings

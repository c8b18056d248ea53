#pragma once
// Storage facts: the file systems that hold data and checkpoints (mount point, device, type,
// options, size and free space) and the block devices under them (rotational or not, NVMe,
// scheduler, read-ahead).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "inventory/context.hpp"

namespace dltune::inventory {

struct FileSystem {
  std::string mount_point;
  std::string device;
  std::string fstype;
  std::vector<std::string> options;  // mount and superblock options together
  bool noatime = false;              // noatime (or relatime's weaker form is not counted)
  bool discard = false;
  std::optional<std::uint64_t> total_bytes;
  std::optional<std::uint64_t> free_bytes;
};

struct BlockDevice {
  std::string name;
  std::optional<bool> rotational;
  bool nvme = false;
  std::optional<std::string> scheduler;  // the selected one
  std::optional<std::uint64_t> read_ahead_kb;
  std::optional<std::uint64_t> size_bytes;
  std::optional<std::string> model;
};

struct StorageFacts {
  std::vector<FileSystem> file_systems;
  std::vector<BlockDevice> block_devices;
  // The block device named `name` ("sda", "nvme0n1"), or null.
  [[nodiscard]] const BlockDevice* block_device(std::string_view name) const;
};

// A virtio or Xen disk ("vda", "xvdb"): what is under it is the hypervisor's, and its rotational
// flag says nothing of that (a virtio disk reads 1 by default).
[[nodiscard]] bool is_virtual_disk(std::string_view name);

// Whether a file system type holds files (ext4, xfs, nfs, overlay, tmpfs...) rather than
// kernel state (proc, sysfs, cgroup...).
[[nodiscard]] bool is_data_fstype(const std::string& fstype);

[[nodiscard]] StorageFacts collect_storage(Context& ctx);
[[nodiscard]] Json to_json(const StorageFacts& f);
[[nodiscard]] std::vector<text::Section> render_storage(const StorageFacts& f);

}  // namespace dltune::inventory

#include "settings/data_paths.hpp"

#include <algorithm>

namespace dltune::settings {

namespace {

std::string basename(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

std::string dirname(const std::string& path) {
  return path.substr(0, path.rfind('/'));
}

}  // namespace

std::vector<std::string> default_data_paths() {
  return {"/", "/home"};
}

std::optional<std::string> disk_of(const host::Root& root, const std::string& device) {
  if (!device.starts_with("/dev/")) return std::nullopt;
  // /dev/mapper/x and /dev/disk/by-*/x are links to /dev/dm-0, /dev/sda1, ...
  auto real = root.resolve(device);
  const std::string name = real && *real ? basename(**real) : basename(device);
  if (name.empty()) return std::nullopt;
  // /sys/class/block/NAME links into the device tree: .../block/sda/sda1 for a partition
  // (which has a `partition` file), .../block/sda for a disk (sysfs-block(5)).
  auto dev = root.resolve("/sys/class/block/" + name);
  if (!dev || !*dev) return std::nullopt;
  const std::string disk = root.exists(**dev + "/partition") ? basename(dirname(**dev)) : name;
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

}  // namespace dltune::settings

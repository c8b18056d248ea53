#include "inventory/capture_extras.hpp"

#include "core/json.hpp"
#include "inventory/capture_files.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::inventory {

std::map<std::string, std::string> capture_extras(const HostFacts& facts, const host::Root& root) {
  std::map<std::string, std::string> out;
  Json manifest;
  manifest["dltune_version"] = DLTUNE_VERSION;
  manifest["captured_at"] = facts.collected_at;
  if (facts.os.hostname) manifest["hostname"] = *facts.os.hostname;
  out[capture_files::kManifest] = manifest.dump(2) + "\n";

  Json environ = Json::object();
  for (const auto& [k, v] : environment_for(root)) environ[k] = v;
  out[capture_files::kEnviron] = environ.dump(2) + "\n";

  Json usage = Json::object();
  auto add_usage = [&](const std::string& mount_point, std::optional<std::uint64_t> total,
                       std::optional<std::uint64_t> free) {
    if (total && free) usage[mount_point] = Json{{"total_bytes", *total}, {"free_bytes", *free}};
  };
  for (const auto& fs : facts.storage.file_systems)
    add_usage(fs.mount_point, fs.total_bytes, fs.free_bytes);
  if (facts.memory.shm && facts.memory.shm->used_bytes && !usage.contains("/dev/shm")) {
    // /dev/shm is reported by storage too when mounted; this covers a filtered one.
    add_usage("/dev/shm", facts.memory.shm->size_bytes,
              *facts.memory.shm->size_bytes - *facts.memory.shm->used_bytes);
  }
  out[capture_files::kFsUsage] = usage.dump(2) + "\n";
  // NVML's answer, so that the capture shows the GPUs as the driver saw them.
  out[capture_files::kNvml] = nvml_json(facts.gpu).dump(2) + "\n";
  // ethtool netlink's answer: a NIC's rings and offloads are no file either.
  out[capture_files::kEthtool] = ethtool_json(facts.network).dump(2) + "\n";
  return out;
}

Result<host::CaptureStats> capture_host(const std::string& out_path, bool force,
                                        const CollectOptions& collect) {
  host::Root root;
  root.start_recording();
  const auto facts = inventory::collect(root, collect);
  return host::write_capture(root, out_path, capture_extras(facts, root), force);
}

}  // namespace dltune::inventory

#pragma once
// Files that `dltune capture` adds to a capture beside the host files it packs: what is not a
// file on the host but that env needs to give the same answer from the capture. They live under
// /run/dltune/capture/ in the tarball (a known location that no host uses for anything else).
namespace dltune::inventory::capture_files {

inline constexpr const char* kDir = "/run/dltune/capture";
// {"dltune_version", "captured_at" (unix s), "hostname"}
inline constexpr const char* kManifest = "/run/dltune/capture/manifest.json";
// {"PATH": "...", ...}: the variables of Context::environment_names() that were set
inline constexpr const char* kEnviron = "/run/dltune/capture/environ.json";
// {"/": {"total_bytes": N, "free_bytes": N}, ...}: statvfs of each reported mount point
inline constexpr const char* kFsUsage = "/run/dltune/capture/fs-usage.json";
// The NVML part of the GPU facts, as `env --json` prints it under gpu.nvml
inline constexpr const char* kNvml = "/run/dltune/capture/nvml.json";
// {"eth0": {"rings": {...}, "offloads": {...}}, ...}: ethtool netlink's answer for each physical
// interface, as `env --json` prints it under network.interfaces[].ethtool
inline constexpr const char* kEthtool = "/run/dltune/capture/ethtool.json";

}  // namespace dltune::inventory::capture_files

#pragma once
// OS facts: release, kernel and its command line, boot time, virtualisation, container and
// cgroup version.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "inventory/context.hpp"

namespace dltune::inventory {

struct KernelCmdline {
  std::string raw;
  std::optional<std::string> iommu;        // iommu=pt|on|off|...
  std::optional<std::string> intel_iommu;  // intel_iommu=on|off|sm_on
  std::optional<std::string> amd_iommu;    // amd_iommu=on|off|pgtbl_v2
  bool pci_noacs = false;                  // pci=noacs (needed by some NCCL P2P setups)
};

struct CgroupFacts {
  std::string version;                      // "v1", "v2" or "hybrid"
  std::optional<std::string> v2_mount;      // where cgroup2 is mounted
  std::vector<std::string> controllers;     // available (v2: cgroup.controllers; v1: mounted)
  std::vector<std::string> v2_controllers;  // hybrid: what the cgroup2 mount itself offers
  std::optional<std::string> own_path;      // this process's cgroup (v2 path, or v1 memory's)
  std::optional<bool> namespaced;           // a private cgroup namespace
};

struct OsFacts {
  std::optional<std::string> name;        // PRETTY_NAME
  std::optional<std::string> id;          // ID
  std::optional<std::string> version_id;  // VERSION_ID
  std::optional<std::string> hostname;
  std::optional<std::string> kernel_release;
  std::optional<std::string> kernel_version;
  std::optional<KernelCmdline> cmdline;
  std::vector<std::string> nouveau_blacklist;  // where nouveau is blacklisted (empty: nowhere)
  std::optional<std::int64_t> boot_time;       // unix seconds
  std::optional<double> uptime_seconds;
  std::optional<std::string> virtualization;  // "kvm", "qemu", "vmware", "hyper-v", ... or "none"
  // "docker", "podman", "kubernetes", "apptainer", "singularity", "container"
  std::optional<std::string> container;
  bool container_known = false;  // the mount table was read: no container is then "none"
  std::vector<std::string> container_evidence;
  std::optional<CgroupFacts> cgroup;
};

[[nodiscard]] OsFacts collect_os(Context& ctx);
[[nodiscard]] Json to_json(const OsFacts& f);
[[nodiscard]] std::vector<text::Section> render_os(const OsFacts& f);

}  // namespace dltune::inventory

#pragma once
// How each profile key is judged against a host: by its kind of setting (settings/, through the
// catalog), or by one of audit's own checks, listed here (one explicit table, no static
// registration).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "audit/finding.hpp"
#include "core/error.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "settings/judge.hpp"
#include "settings/profile.hpp"
#include "settings/sysctl_files.hpp"

namespace dltune::audit {

using AuditInput = settings::CheckInput;
using RuleFn = settings::Judge;
using settings::container_advice;
using settings::judge;
using settings::not_applicable;
using settings::tune_fix;
using settings::worse;

// A GPU's power limit within 1% of its default is the default (NVML and amdgpu round some
// boards' limits).
inline constexpr double kPowerTolerance = 0.99;

// One of audit's own checks: a key of the settings catalog that no kind of setting judges.
struct Rule {
  const char* key;  // a key of the settings catalog
  RuleFn fn;
};

// audit's own checks, for the catalog keys whose spec has no judge of its kind.
[[nodiscard]] const std::vector<Rule>& rules();
// What judges `key`: its kind of setting's judge (the catalog spec that covers it), else audit's
// check; null when neither does.
[[nodiscard]] RuleFn rule_for(const std::string& key);

// placement_rules.cpp: pci.gpu_nic, each GPU's nearest RDMA NIC (behind its PCIe switch, on its
// NUMA node, or across), ACS redirection between them, and where to launch on a host whose GPUs
// span NUMA nodes.
std::vector<Finding> pci_gpu_nic(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_numa_placement(const AuditInput&, const settings::ProfileEntry&);
// A bridge's ACS control register, as pci.acs reads it (fabric_rules.cpp): `readable` when its
// extended configuration space could be read (root can), `control` when it has ACS.
inline constexpr std::uint16_t kAcsRedirect = 0x1c;  // Request/Completion Redirect, Upstream Fwd
struct BridgeAcs {
  bool readable = false;
  std::optional<std::uint16_t> control;
  [[nodiscard]] bool redirects() const { return control && (*control & kAcsRedirect) != 0; }
};
[[nodiscard]] BridgeAcs bridge_acs(const host::Root& root, const std::string& bdf);
// pci.acs's fix for `bridges`: setpci until reboot, or the BIOS option.
[[nodiscard]] Fix acs_fix(const std::vector<std::string>& bridges);

// GPU checks: gpu.nouveau, gpu.driver_match,
// gpu.driver_cuda, gpu.pcie_link, gpu.ecc, gpu.throttle.
std::vector<Finding> gpu_nouveau(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_driver_match(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_driver_cuda(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_pcie_link(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_ecc(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_throttle(const AuditInput&, const settings::ProfileEntry&);
// gpu_health_rules.cpp: gpu.health, every NVIDIA GPU on PCI driven and answering NVML.
std::vector<Finding> gpu_health(const AuditInput&, const settings::ProfileEntry&);
// gpu_config_rules.cpp: gpu.power_limit, gpu.mig, gpu.nvlink.
std::vector<Finding> gpu_power_limit(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_mig(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_nvlink(const AuditInput&, const settings::ProfileEntry&);
// amdgpu_rules.cpp: gpu.ecc and gpu.power_limit of every vendor (NVIDIA's above, then AMD's
// from amdgpu's sysfs).
std::vector<Finding> gpu_ecc_any_vendor(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_power_limit_any_vendor(const AuditInput&, const settings::ProfileEntry&);
// env_rules.cpp: env.training, the shell's NCCL, CUDA, PyTorch and thread variables.
std::vector<Finding> env_training(const AuditInput&, const settings::ProfileEntry&);

}  // namespace dltune::audit

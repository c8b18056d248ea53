#pragma once
// Rules: how each profile key is judged against a host's facts (CONTRIBUTING.md, convention 8: one
// explicit table, no static registration).
#include <string>
#include <vector>

#include "audit/finding.hpp"
#include "core/error.hpp"
#include "inventory/host_facts.hpp"
#include "settings/profile.hpp"
#include "settings/sysctl_files.hpp"

namespace dltune::audit {

struct AuditInput {
  const inventory::HostFacts& facts;
  const host::Root& root;
  bool in_container = false;            // facts.os.container set
  std::vector<std::string> data_paths;  // --data: file systems that hold data
  // boot-time sysctl sources, read once per check
  const settings::SysctlFiles* sysctl_files = nullptr;
};

// A rule judges one profile entry. It returns exactly one Finding whose id is entry.key (with
// evidence, expected, actual, severity from the entry, reason and source copied from it, and
// the fix), or several for keys that cover several things (one per GPU: id "gpu.persistence"
// each, the GPU named in summary and evidence).
using RuleFn = std::vector<Finding> (*)(const AuditInput&, const settings::ProfileEntry&);

struct Rule {
  const char* key;  // a key of the settings catalog: exact, or a family's prefix ("vm.")
  RuleFn fn;
};

// The table of every rule; the sysctl rule covers any key under /proc/sys.
[[nodiscard]] const std::vector<Rule>& rules();
// The rule that judges `key` (through the catalog spec that covers it); null when none does.
[[nodiscard]] const Rule* rule_for(const std::string& key);
// The area of `key` in the settings catalog ("kernel" for a key it does not know).
[[nodiscard]] const char* area_of(const std::string& key);

// Shared by rules: a finding for `entry` with its severity decided by `actual`.
[[nodiscard]] Finding judge(const settings::ProfileEntry& entry, const char* area,
                            const std::string& actual, std::vector<Evidence> evidence);

// GPU rules: gpu.persistence, gpu.nouveau, gpu.driver_match,
// gpu.driver_cuda, gpu.pcie_link, gpu.ecc, gpu.throttle.
std::vector<Finding> gpu_persistence(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_nouveau(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_driver_match(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_driver_cuda(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_pcie_link(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_ecc(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_throttle(const AuditInput&, const settings::ProfileEntry&);

}  // namespace dltune::audit

#include "audit/rules.hpp"

#include <fmt/format.h>

#include "audit/system_rules.hpp"
#include "settings/catalog.hpp"

namespace dltune::audit {

const std::vector<Rule>& rules() {
  // Every key of the settings catalog has its rule here (a test checks that both hold the same
  // keys); the sysctl families share one.
  static const std::vector<Rule> kRules = {
      {"thp.enabled", thp_rule},
      {"thp.defrag", thp_rule},
      {"cpu.governor", cpu_governor},
      {"limits.nofile", limit_rule},
      {"limits.memlock", limit_rule},
      {"shm.size", shm_size},
      {"mount.noatime", mount_noatime},
      {"block.read_ahead_kb", block_read_ahead},
      {"swap.consistency", swap_consistency},
      {"iommu.mode", iommu_mode},
      {"pci.acs", pci_acs},
      {"rdma.ports", rdma_ports},
      {"gpu.persistence", gpu_persistence},
      {"gpu.nouveau", gpu_nouveau},
      {"gpu.driver_match", gpu_driver_match},
      {"gpu.driver_cuda", gpu_driver_cuda},
      {"gpu.pcie_link", gpu_pcie_link},
      {"gpu.ecc", gpu_ecc},
      {"gpu.throttle", gpu_throttle},
      {"vm.", sysctl_rule},
      {"net.", sysctl_rule},
      {"kernel.", sysctl_rule},
      {"fs.", sysctl_rule},
      {"dev.", sysctl_rule},
      {"user.", sysctl_rule},
      {"abi.", sysctl_rule},
  };
  return kRules;
}

const Rule* rule_for(const std::string& key) {
  const auto* spec = settings::spec_for(key);
  if (spec == nullptr) return nullptr;
  for (const auto& r : rules())
    if (std::string_view(r.key) == spec->key) return &r;
  return nullptr;
}

const char* area_of(const std::string& key) {
  const auto* spec = settings::spec_for(key);
  return spec != nullptr ? spec->area : "kernel";
}

Finding judge(const settings::ProfileEntry& entry, const char* area, const std::string& actual,
              std::vector<Evidence> evidence) {
  Finding f;
  f.id = entry.key;
  f.area = area;
  f.expected = entry.expected.text();
  f.actual = actual;
  f.evidence = std::move(evidence);
  f.reason = entry.reason;
  f.source = entry.source;
  if (entry.expected.matches(actual)) {
    f.severity = Severity::kOk;
    f.summary = fmt::format("{} is {}", entry.key, actual);
  } else {
    f.severity = severity_from(entry.severity).value_or(Severity::kWarn);
    if (entry.critical && !entry.critical->matches(actual)) f.severity = Severity::kCritical;
    f.summary = fmt::format("{} is {}, expected {}", entry.key, actual.empty() ? "unknown" : actual,
                            f.expected);
  }
  return f;
}

}  // namespace dltune::audit

#include "audit/rules.hpp"

#include <fmt/format.h>

#include "audit/system_rules.hpp"
#include "tune/sysctl_name.hpp"

namespace dltune::audit {

const std::vector<Rule>& rules() {
  // Exact keys first; the sysctl families last (a key is judged by the first rule that covers
  // it). Every key a profile may hold is listed here or is a sysctl.
  static const std::vector<Rule> kRules = {
      {"thp.enabled", "memory", thp_rule},
      {"thp.defrag", "memory", thp_rule},
      {"cpu.governor", "cpu", cpu_governor},
      {"limits.nofile", "limits", limit_rule},
      {"limits.memlock", "limits", limit_rule},
      {"shm.size", "memory", shm_size},
      {"mount.noatime", "storage", mount_noatime},
      {"block.read_ahead_kb", "storage", block_read_ahead},
      {"swap.consistency", "memory", swap_consistency},
      {"iommu.mode", "kernel", iommu_mode},
      {"pci.acs", "kernel", pci_acs},
      {"rdma.ports", "network", rdma_ports},
      {"gpu.persistence", "gpu", gpu_persistence},
      {"gpu.nouveau", "gpu", gpu_nouveau},
      {"gpu.driver_match", "gpu", gpu_driver_match},
      {"gpu.driver_cuda", "gpu", gpu_driver_cuda},
      {"gpu.pcie_link", "gpu", gpu_pcie_link},
      {"gpu.ecc", "gpu", gpu_ecc},
      {"gpu.throttle", "gpu", gpu_throttle},
      // sysctl(8) families: the top directories of /proc/sys.
      {"vm.", "memory", sysctl_rule},
      {"net.", "network", sysctl_rule},
      {"kernel.", "kernel", sysctl_rule},
      {"fs.", "kernel", sysctl_rule},
      {"dev.", "kernel", sysctl_rule},
      {"user.", "kernel", sysctl_rule},
      {"abi.", "kernel", sysctl_rule},
  };
  return kRules;
}

const Rule* rule_for(const std::string& key) {
  for (const auto& r : rules()) {
    const std::string_view k = r.key;
    if (k.back() == '.' ? key.starts_with(k) && key.size() > k.size() : key == k) return &r;
  }
  return nullptr;
}

Result<void> validate_key(const std::string& key) {
  const Rule* r = rule_for(key);
  if (r == nullptr)
    return fail("unknown setting (not a sysctl, a known sysfs setting, a limit or a check):", key);
  if (r->fn == sysctl_rule) {
    auto path = tune::sysctl_path(key);
    if (!path) return tl::unexpected(path.error());
  }
  return {};
}

Finding judge(const tune::ProfileEntry& entry, const char* area, const std::string& actual,
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

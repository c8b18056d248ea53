#include "audit/rules.hpp"

#include "audit/system_rules.hpp"
#include "settings/catalog.hpp"

namespace dltune::audit {

const std::vector<Rule>& rules() {
  // Every catalog key without a judge of its kind has its check here (a test checks that each
  // key has exactly one).
  static const std::vector<Rule> kRules = {
      {"shm.size", shm_size},
      {"swap.consistency", swap_consistency},
      {"iommu.mode", iommu_mode},
      {"pci.acs", pci_acs},
      {"pci.gpu_nic", pci_gpu_nic},
      {"rdma.ports", rdma_ports},
      {"nic.settings", nic_settings},
      {"cpu.latency_us", cpu_latency},
      {"storage.data_device", storage_data_device},
      {"storage.trim", storage_trim},
      {"build.toolchain", build_toolchain},
      {"blas.library", blas_library},
      {"gpu.health", gpu_health},
      {"gpu.nouveau", gpu_nouveau},
      {"gpu.driver_match", gpu_driver_match},
      {"gpu.driver_cuda", gpu_driver_cuda},
      {"gpu.pcie_link", gpu_pcie_link},
      {"gpu.ecc", gpu_ecc_any_vendor},
      {"gpu.throttle", gpu_throttle},
      {"gpu.power_limit", gpu_power_limit_any_vendor},
      {"gpu.mig", gpu_mig},
      {"gpu.nvlink", gpu_nvlink},
      {"gpu.numa_placement", gpu_numa_placement},
      {"env.training", env_training},
  };
  return kRules;
}

RuleFn rule_for(const std::string& key) {
  const auto* spec = settings::spec_for(key);
  if (spec == nullptr) return nullptr;
  if (spec->check != nullptr) return spec->check;
  for (const auto& r : rules())
    if (std::string_view(r.key) == spec->key) return r.fn;
  return nullptr;
}

}  // namespace dltune::audit

#pragma once
// Checks on the OS side of the host that no kind of setting changes.
#include <cstdint>
#include <optional>

#include "audit/rules.hpp"

namespace dltune::audit {

std::vector<Finding> shm_size(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> swap_consistency(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> iommu_mode(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> pci_acs(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> rdma_ports(const AuditInput&, const settings::ProfileEntry&);
// nic_rules.cpp
std::vector<Finding> nic_settings(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> cpu_latency(const AuditInput&, const settings::ProfileEntry&);
// storage_rules.cpp
std::vector<Finding> storage_data_device(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> storage_trim(const AuditInput&, const settings::ProfileEntry&);
// build_rules.cpp
std::vector<Finding> build_toolchain(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> blas_library(const AuditInput&, const settings::ProfileEntry&);

// The ACS control register of a PCIe function's config space (as sysfs `config` gives it),
// when its extended capabilities are readable and hold ACS.
[[nodiscard]] std::optional<std::uint16_t> acs_control(const std::string& config);

}  // namespace dltune::audit

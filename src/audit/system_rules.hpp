#pragma once
// Rules on the OS side of the host.
#include <cstdint>
#include <optional>

#include "audit/rules.hpp"

namespace dltune::audit {

std::vector<Finding> sysctl_rule(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> thp_rule(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> cpu_governor(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> limit_rule(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> shm_size(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> mount_noatime(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> block_read_ahead(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> swap_consistency(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> iommu_mode(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> pci_acs(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> rdma_ports(const AuditInput&, const settings::ProfileEntry&);

// The ACS control register of a PCIe function's config space (as sysfs `config` gives it),
// when its extended capabilities are readable and hold ACS.
[[nodiscard]] std::optional<std::uint16_t> acs_control(const std::string& config);

}  // namespace dltune::audit

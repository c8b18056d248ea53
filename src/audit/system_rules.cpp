// OS rules (owner: lead; stubs until written).
#include "audit/system_rules.hpp"

namespace dltune::audit {

std::vector<Finding> sysctl_rule(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> thp_rule(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> cpu_governor(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> limit_rule(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> shm_size(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> mount_noatime(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> swap_consistency(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> iommu_mode(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> pci_acs(const AuditInput&, const tune::ProfileEntry&) { return {}; }
std::vector<Finding> rdma_ports(const AuditInput&, const tune::ProfileEntry&) { return {}; }

}  // namespace dltune::audit

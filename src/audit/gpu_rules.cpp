// GPU rules (owner: gpu-rules helper; stubs until then).
#include "audit/rules.hpp"

namespace dltune::audit {

std::vector<Finding> gpu_persistence(const AuditInput&, const tune::ProfileEntry&) {
  return {};
}
std::vector<Finding> gpu_nouveau(const AuditInput&, const tune::ProfileEntry&) {
  return {};
}
std::vector<Finding> gpu_driver_match(const AuditInput&, const tune::ProfileEntry&) {
  return {};
}
std::vector<Finding> gpu_driver_cuda(const AuditInput&, const tune::ProfileEntry&) {
  return {};
}
std::vector<Finding> gpu_pcie_link(const AuditInput&, const tune::ProfileEntry&) {
  return {};
}
std::vector<Finding> gpu_ecc(const AuditInput&, const tune::ProfileEntry&) {
  return {};
}
std::vector<Finding> gpu_throttle(const AuditInput&, const tune::ProfileEntry&) {
  return {};
}

}  // namespace dltune::audit

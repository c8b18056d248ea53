#pragma once
// How each profile key is judged against a host: by its kind of setting (settings/, through the
// catalog), or by one of audit's own checks, listed here (one explicit table, no static
// registration).
#include <string>
#include <vector>

#include "audit/finding.hpp"
#include "core/error.hpp"
#include "inventory/host_facts.hpp"
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

// GPU checks: gpu.nouveau, gpu.driver_match,
// gpu.driver_cuda, gpu.pcie_link, gpu.ecc, gpu.throttle.
std::vector<Finding> gpu_nouveau(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_driver_match(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_driver_cuda(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_pcie_link(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_ecc(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_throttle(const AuditInput&, const settings::ProfileEntry&);
// gpu_config_rules.cpp: gpu.power_limit, gpu.mig, gpu.nvlink.
std::vector<Finding> gpu_power_limit(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_mig(const AuditInput&, const settings::ProfileEntry&);
std::vector<Finding> gpu_nvlink(const AuditInput&, const settings::ProfileEntry&);

}  // namespace dltune::audit

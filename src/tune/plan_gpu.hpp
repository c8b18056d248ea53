#pragma once
// The plan for the GPU settings that tune changes through NVML (gpu.persistence): one change
// per GPU whose mode differs, each naming its GPU by UUID (tune/nvml_setting.hpp).
#include "inventory/host_facts.hpp"
#include "tune/plan.hpp"
#include "tune/profile.hpp"

namespace dltune::tune {

// Fills `item` (status, summary, changes, notes) for the profile entry gpu.persistence.
void plan_gpu_persistence(const inventory::HostFacts& facts, const ProfileEntry& entry,
                          bool persist, PlanItem& item);

}  // namespace dltune::tune

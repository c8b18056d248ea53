#pragma once
// Judging a profile entry against the host: what a check of a setting sees, and the helpers every
// judge shares. Each kind of setting judges its own keys (`check_*` in catalog.hpp, next to its
// planner), so that reading, judging, planning and writing a kind live in one file; audit's own
// checks (GPUs, IOMMU, PCIe ACS, swap, /dev/shm) use the same helpers.
#include <string>
#include <vector>

#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "settings/finding.hpp"
#include "settings/profile.hpp"
#include "settings/sysctl_files.hpp"

namespace dltune::settings {

struct CheckInput {
  const inventory::HostFacts& facts;
  const host::Root& root;
  bool in_container = false;            // facts.os.container set
  std::vector<std::string> data_paths;  // --data; empty: check_data_paths' default
  // boot-time sysctl sources, read once per check
  const SysctlFiles* sysctl_files = nullptr;
};

// A judge returns exactly one Finding whose id is entry.key (with evidence, expected, actual,
// severity from the entry, reason and source copied from it, and the fix), or several for keys
// that cover several things (one per GPU or file system, named in summary and evidence).
using Judge = std::vector<Finding> (*)(const CheckInput&, const ProfileEntry&);

// A finding for `entry` with its severity decided by `actual`.
[[nodiscard]] Finding judge(const ProfileEntry& entry, const char* area, const std::string& actual,
                            std::vector<Evidence> evidence);
// The finding for a setting this host does not have: reported, never a failure.
[[nodiscard]] Finding not_applicable(const ProfileEntry& entry, const char* area, std::string why);
// "dltune tune apply --only KEY".
[[nodiscard]] Fix tune_fix(const std::string& key);
// Inside a container the host's settings are not ours to change: say what the runtime can set
// (`runtime_flag`, e.g. "docker run --sysctl ...") and that the rest is the host's to fix. In
// Apptainer's and Singularity's containers, which have none of Docker's --shm-size, --ulimit
// and --sysctl, the fix is the host's and the note says why in their terms.
void container_advice(const CheckInput& in, Finding& f, const std::string& runtime_flag);
// "Apptainer" or "Singularity" when the check runs in one of their containers (os.container
// "apptainer" or "singularity"), else empty.
[[nodiscard]] std::string apptainer_runtime(const CheckInput& in);
[[nodiscard]] Severity worse(Severity a, Severity b);

}  // namespace dltune::settings

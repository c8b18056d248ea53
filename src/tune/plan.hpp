#pragma once
// What `tune` would change to bring a host to a profile: every change with the value now and the
// value it would write, and for the rest why nothing is written. Each item comes from the
// planner of its setting's kind (settings/catalog.hpp); the plan adds the persistent files.
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "settings/setting.hpp"

namespace dltune::tune {

// A plan is made of the settings layer's items and changes.
using settings::memcg_swappiness_differing;
using settings::PlanItem;
using settings::PlannedChange;
using settings::status_name;
using settings::target_value;

struct Plan {
  std::string profile;
  std::vector<std::string> chain;  // the profile's includes and --set, itself among them
  bool persist = false;
  std::vector<PlanItem> items;
  [[nodiscard]] std::vector<PlannedChange> changes() const;  // all, in order
};

struct PlanOptions {
  // Where training data lives (mount.noatime, block.read_ahead_kb); empty: / and /home.
  std::vector<std::string> data_paths;
  // cgroup v1: also set memory.swappiness of the memory cgroups that exist (they keep their own
  // value when vm.swappiness changes; new groups inherit it).
  bool cgroups = false;
};

// Fails when `only` names a key the profile does not have (bad input: nothing changes, errno 0),
// and when a value it must journal is there but cannot be read (a sysctl, a persistent file: the
// error names the setting, the file and the errno).
[[nodiscard]] Result<Plan> make_plan(const host::Root& root, const inventory::HostFacts& facts,
                                     const settings::Profile& profile,
                                     const std::vector<std::string>& only, bool persist,
                                     const PlanOptions& options = {});

}  // namespace dltune::tune

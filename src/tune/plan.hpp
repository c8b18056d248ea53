#pragma once
// What `tune` would change to bring a host to a profile: every change with the value
// now and the value it would write, and for the rest why nothing is written.
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts.hpp"
#include "tune/profile.hpp"

namespace dltune::tune {

struct PlannedChange {
  std::string key;                       // the profile key
  std::string kind;                      // "sysctl", "sysfs", "cgroup", "file", "mount", "nvml"
  std::string target;                    // the path written
  std::optional<std::string> old_value;  // now (absent: a file that does not exist yet)
  std::string new_value;
  bool implied = false;  // not written: the kernel changes it as a side effect of another change
                         // (vm.dirty_bytes when vm.dirty_ratio is written); journaled so that
                         // rollback restores it
};

struct PlanItem {
  enum class Status { kChange, kAlreadyOk, kNotTunable, kNotApplicable };
  std::string key;
  Status status = Status::kNotTunable;
  std::string summary;  // "60 -> 10", "already one of always, madvise", why not tunable
  std::string reason;   // the profile's
  std::vector<PlannedChange> changes;
  std::vector<std::string> notes;
};

struct Plan {
  std::string profile;
  bool persist = false;
  std::vector<PlanItem> items;
  [[nodiscard]] std::vector<PlannedChange> changes() const;  // all, in order
};

[[nodiscard]] const char* status_name(PlanItem::Status s);

// The value to write for `expected` given the current value: nullopt when `current` already
// meets it. `field` (1-based) replaces one field of a multi-field value.
[[nodiscard]] std::optional<std::string> target_value(const Expected& expected,
                                                      const std::string& current,
                                                      std::optional<int> field);

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
                                     const Profile& profile, const std::vector<std::string>& only,
                                     bool persist, const PlanOptions& options = {});

// The memory cgroups (v1) under /sys/fs/cgroup/memory, below the root group, whose
// memory.swappiness is not `value`: path of the memory.swappiness file -> its value now.
// At most `limit` groups are looked at (deepest first is not promised).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> memcg_swappiness_differing(
    const host::Root& root, const std::string& value, std::size_t limit = 4096);

}  // namespace dltune::tune

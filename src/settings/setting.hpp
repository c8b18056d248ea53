#pragma once
// One kind of setting, the shape that audit's rules and tune's transactions both build on
// (tuned's plugin base is the model: `_check_and_save_value`, `_verify_value`). A kind knows how
// to read its value now, plan the change that brings it to a profile's value, and write, read
// back and restore the targets that plan names. Every kind is listed once, in catalog.cpp.
//
//   change kind  target                                       value
//   sysctl       /proc/sys/vm/swappiness                      the file's text ("60")
//   sysfs        /sys/kernel/mm/transparent_hugepage/...      the [selected] word or the text
//   cgroup       /sys/fs/cgroup/memory/G/memory.swappiness    the text
//   file         /etc/sysctl.d/90-dltune.conf                 the whole file (absent: no file)
//   mount        /home (a mount point)                        its atime mode: noatime|relatime|...
//   nvml         nvml:GPU-UUID/persistence_mode               on|off
//   irq          /proc/irq/38/smp_affinity_list               a CPU list ("32-63")
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "settings/profile.hpp"

namespace dltune::settings {

// The persistent files tune writes (dltune's own drop-ins and the system's fstab).
inline constexpr const char* kSysctlDropin = "/etc/sysctl.d/90-dltune.conf";
inline constexpr const char* kLimitsDropin = "/etc/security/limits.d/90-dltune.conf";
inline constexpr const char* kTmpfilesDropin = "/etc/tmpfiles.d/90-dltune.conf";
inline constexpr const char* kUdevDropin = "/etc/udev/rules.d/60-dltune.rules";
inline constexpr const char* kFstab = "/etc/fstab";

struct PlannedChange {
  std::string key;                       // the profile key
  std::string kind;                      // the change kind: "sysctl", "sysfs", "cgroup", ...
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
  std::string origin;   // the profile that set it: ProfileEntry::origin_text()
  std::vector<PlannedChange> changes;
  std::vector<std::string> notes;
};

[[nodiscard]] const char* status_name(PlanItem::Status s);

// The value to write for `expected` given the current value: nullopt when `current` already
// meets it. `field` (1-based) replaces one field of a multi-field value.
[[nodiscard]] std::optional<std::string> target_value(const Expected& expected,
                                                      const std::string& current,
                                                      std::optional<int> field);

// What the persistent files will hold, gathered while the items are planned.
struct Persisted {
  std::map<std::string, std::string> sysctls;  // dotted name -> value
  std::map<std::string, std::string> limits;   // item -> value
  std::map<std::string, std::string> sysfs;    // sysfs path or glob -> value (tmpfiles.d)
  // A disk's udev match (udev_disk_match) -> its attribute ("queue/scheduler") -> value
  std::map<std::string, std::map<std::string, std::string>> udev;
  // Disks whose persistent line names them as they are named now (udev knows no serial of
  // them, or the host has no udev and their values are tmpfiles.d lines)
  std::vector<std::string> udev_by_name;
  std::optional<std::string> fstab_old, fstab_new;
  std::vector<std::string> fstab_notes;
};

// What every planner sees.
struct PlanContext {
  const host::Root& root;
  const inventory::HostFacts& facts;
  std::vector<std::string> data_paths;  // where training data lives; empty: / and /home
  bool cgroups = false;  // cgroup v1: also the memory.swappiness of existing memory groups
  bool persist = false;  // the drop-ins too
  Persisted& persisted;
  // The sysfs targets already planned, and the value each will be given: a later planner whose
  // setting depends on another's (nr_requests on the scheduler) reads what the host will hold.
  std::map<std::string, std::string> planned = {};
};

// Fills `item` (status, summary, changes, notes) for one profile entry. An error only when a
// value that must be journaled is there but cannot be read.
using Planner = Result<void> (*)(PlanContext& context, const ProfileEntry& entry, PlanItem& item);

// How one kind of change is read, written and restored: the `kind` of a journaled change.
struct ChangeKind {
  const char* name;
  // The value now; an empty optional when the target does not exist.
  Result<std::optional<std::string>> (*read)(const host::Root& root, const std::string& target);
  // Writes `value` and returns what the target reports afterwards (read back).
  Result<std::string> (*write)(const host::Root& root, const std::string& target,
                               const std::string& value);
  // A whole file: compared byte for byte, and removed on rollback when it did not exist.
  bool whole_file = false;
};

// The effective value of a setting file's text: "always [madvise] never" -> "madvise";
// anything else whitespace-normalised.
[[nodiscard]] std::string effective_value(std::string_view raw);

// A value read on a best-effort basis (read-ahead, cgroups that come and go): absent when it
// cannot be read; whitespace-normalised.
[[nodiscard]] std::optional<std::string> read_trimmed(const host::Root& root,
                                                      const std::string& path);
// A setting's value now, whitespace-normalised; empty when the file is absent. A file that is
// there but cannot be read (EACCES, EIO) is an error naming the setting `key`: its old value
// could not be journaled, and "this kernel has no ..." would be a lie.
[[nodiscard]] Result<std::optional<std::string>> read_setting(const host::Root& root,
                                                              const std::string& key,
                                                              const std::string& path);

}  // namespace dltune::settings

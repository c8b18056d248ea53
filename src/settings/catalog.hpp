#pragma once
// Every key a profile may hold, listed once (explicit registration, no static constructors):
// its area, and for the keys of a kind of setting that kind's planner and judge. A sysctl needs
// no entry of its own: the families ("vm.", "net.", ...) cover every name under /proc/sys, so
// adding a sysctl to a profile is its TOML entry only. Adding a kind of setting is one file with
// its judge and planner (and change kind, when it writes something new) plus its line here.
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "settings/judge.hpp"
#include "settings/setting.hpp"

namespace dltune::settings {

struct KeySpec {
  const char* key;   // exact key, or a prefix ending in '.' for a family ("vm.", "net.")
  const char* area;  // "memory", "cpu", "storage", "network", "kernel", "limits", "gpu"
  Planner plan;      // null: a check only (tune leaves it alone)
  Judge check;       // null: one of audit's own checks judges it
  [[nodiscard]] bool family() const { return std::string_view(key).back() == '.'; }
};

// Exact keys first, the sysctl families last: a key belongs to the first spec that covers it.
[[nodiscard]] const std::vector<KeySpec>& catalog();
[[nodiscard]] const KeySpec* spec_for(std::string_view key);
// The area of `key` ("kernel" for a key the catalog does not know).
[[nodiscard]] const char* area_of(const std::string& key);
// For load_profile: a key is valid when the catalog covers it (a sysctl: a well-formed name).
[[nodiscard]] Result<void> validate_key(const std::string& key);

// The change kinds tune journals, by name ("sysctl", "sysfs", "cgroup", "file", "mount",
// "nvml", "irq"); null for a name that is none of them.
[[nodiscard]] const ChangeKind* change_kind(std::string_view name);

// The planners, one per kind of setting (sysctl_setting.cpp, sysfs_setting.cpp,
// mount_setting.cpp, limits_setting.cpp, gpu_setting.cpp).
Result<void> plan_sysctl(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_thp(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_governor(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_epp(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_read_ahead(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_scheduler(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_nr_requests(PlanContext&, const ProfileEntry&, PlanItem&);
// The end of a plan over the disks under the data (read-ahead, scheduler): a change when `from`
// (one "DISK OLD -> NEW" each) has any, else already ok (`ok`, one "DISK VALUE" each) or not
// applicable with `none_summary`; the note that disk names can change between boots.
void finish_disk_plan(PlanItem& item, const std::vector<std::string>& from,
                      const std::vector<std::string>& ok, const char* none_summary);
// For --persist: `attribute` ("queue/scheduler") of `disk` set to `value` by dltune's udev file,
// the disk named by its serial where udev knows it (udev_disk_match).
void persist_disk_attribute(PlanContext& context, const std::string& disk,
                            const std::string& attribute, const std::string& value);
Result<void> plan_mount(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_limits(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_gpu_persistence(PlanContext&, const ProfileEntry&, PlanItem&);
Result<void> plan_irq_affinity(PlanContext&, const ProfileEntry&, PlanItem&);

// The judges, in the same files as the planners.
std::vector<Finding> check_sysctl(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_thp(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_governor(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_epp(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_read_ahead(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_scheduler(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_nr_requests(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_mount(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_limits(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_gpu_persistence(const CheckInput&, const ProfileEntry&);
std::vector<Finding> check_irq_affinity(const CheckInput&, const ProfileEntry&);

// cgroup v1: the memory cgroups under /sys/fs/cgroup/memory, below the root group, whose
// memory.swappiness is not `value` (they keep their own when vm.swappiness changes; new groups
// inherit it): path of the memory.swappiness file -> its value now. At most `limit` groups are
// looked at (deepest first is not promised).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> memcg_swappiness_differing(
    const host::Root& root, const std::string& value, std::size_t limit = 4096);

// The change kinds, one per kind of target.
extern const ChangeKind kSysctlChange;
extern const ChangeKind kSysfsChange;
extern const ChangeKind kCgroupChange;
extern const ChangeKind kFileChange;
extern const ChangeKind kMountChange;
extern const ChangeKind kNvmlChange;
extern const ChangeKind kIrqChange;

// Every setting id a profile may hold that the catalog or a built-in profile names (a family's
// members, such as a sysctl, only as the built-in profiles name them), sorted: what completion
// offers after --only, --skip and --set. Compiled in: no file is read.
[[nodiscard]] std::vector<std::string> known_setting_ids();

}  // namespace dltune::settings

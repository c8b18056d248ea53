#include "tune/plan.hpp"

#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/dropins.hpp"
#include "settings/sysctl_files.hpp"
#include "tune/boot.hpp"

namespace dltune::tune {

namespace {

using settings::kFstab;
using settings::kLimitsDropin;
using settings::kSysctlDropin;
using settings::kTmpfilesDropin;
using settings::merge_limits_dropin;
using settings::merge_sysctl_dropin;
using settings::merge_tmpfiles_dropin;
using settings::Persisted;

// A persistent file as it is now (empty: absent). An unreadable one is an error naming the item:
// taking it for absent would replace it, and rollback would then remove it.
Result<std::optional<std::string>> read_dropin(const host::Root& root, const std::string& key,
                                               const char* path) {
  auto r = root.read(path);
  if (!r)
    return fail(fmt::format("{}: {}", key, r.error().what), r.error().input, r.error().errno_);
  return *r;
}

// The drop-in item for one persistent file: a change when its content would differ.
PlanItem file_item(const char* key, const char* path, const std::optional<std::string>& old,
                   const std::string& merged, std::string summary) {
  PlanItem item;
  item.key = key;
  if (old && *old == merged) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = std::string(path) + " already holds these values";
  } else {
    item.status = PlanItem::Status::kChange;
    item.summary = std::move(summary);
    item.changes.push_back({key, "file", path, old, merged, false});
  }
  return item;
}

// The plan's note for a drop-in nothing on this host reads at boot (boot.hpp).
std::optional<std::string> boot_note(const BootReaders& boot, const char* file) {
  for (const auto& f : boot.files)
    if (f.file == file && !f.by) return f.note;
  return std::nullopt;
}

}  // namespace

std::vector<PlannedChange> Plan::changes() const {
  std::vector<PlannedChange> out;
  for (const auto& i : items)
    for (const auto& c : i.changes) out.push_back(c);
  return out;
}

Result<Plan> make_plan(const host::Root& root, const inventory::HostFacts& facts,
                       const settings::Profile& profile, const std::vector<std::string>& only,
                       bool persist, const PlanOptions& options) {
  for (const auto& id : only) {
    if (profile.find(id) == nullptr)
      return fail(fmt::format("profile {} has no setting", profile.name), id);
  }
  Plan plan;
  plan.profile = profile.name;
  plan.chain = profile.chain;
  plan.persist = persist;
  Persisted persisted;
  if (persist) {
    auto fstab = read_dropin(root, "persist.fstab", kFstab);
    if (!fstab) return tl::unexpected(fstab.error());
    persisted.fstab_old = *fstab;
  }
  settings::PlanContext context{root,    facts,    options.data_paths, options.cgroups,
                                persist, persisted};
  const BootReaders boot = persist ? boot_readers(root) : BootReaders{};
  // The scheduler before the requests it may hold, whatever the profile's order: a switch of
  // scheduler resets nr_requests, and its planner reads the scheduler the disk will have.
  std::vector<const settings::ProfileEntry*> entries;
  for (const auto& e : profile.entries) entries.push_back(&e);
  const auto entry_at = [&](const char* key) {
    return std::find_if(entries.begin(), entries.end(),
                        [&](const settings::ProfileEntry* e) { return e->key == key; });
  };
  if (const auto nr = entry_at("block.nr_requests"), sched = entry_at("block.scheduler");
      nr != entries.end() && sched != entries.end() && nr < sched)
    std::rotate(nr, sched, sched + 1);
  for (const auto* entry : entries) {
    const auto& e = *entry;
    if (!only.empty() && std::find(only.begin(), only.end(), e.key) == only.end()) continue;
    PlanItem item;
    item.key = e.key;
    item.reason = e.reason;
    item.origin = e.origin_text();
    const auto* spec = settings::spec_for(e.key);
    if (spec != nullptr && spec->plan != nullptr) {
      if (auto ok = spec->plan(context, e, item); !ok) return tl::unexpected(ok.error());
    } else {
      item.status = PlanItem::Status::kNotTunable;
      item.summary = "not changed by tune: `dltune check --only " + e.key + "` gives the fix";
    }
    plan.items.push_back(std::move(item));
  }
  // The energy-performance preference before the governor, whatever the profile's order: under
  // intel_pstate's and amd-pstate's performance governor the preference is pinned to
  // "performance" and any other write fails (EBUSY; intel_pstate.rst, "Energy vs Performance
  // Hints"), so a rollback (in reverse order) must restore the governor first.
  const auto at = [&](const char* key) {
    return std::find_if(plan.items.begin(), plan.items.end(),
                        [&](const PlanItem& i) { return i.key == key; });
  };
  if (const auto epp = at("cpu.epp"), gov = at("cpu.governor");
      epp != plan.items.end() && gov != plan.items.end() && gov < epp)
    std::rotate(gov, epp, epp + 1);
  if (!persist) return plan;
  if (!persisted.sysctls.empty()) {
    auto old = read_dropin(root, "persist.sysctl", kSysctlDropin);
    if (!old) return tl::unexpected(old.error());
    auto item =
        file_item("persist.sysctl", kSysctlDropin, *old,
                  merge_sysctl_dropin(old->value_or(""), persisted.sysctls),
                  fmt::format("write {} ({} settings)", kSysctlDropin, persisted.sysctls.size()));
    settings::SysctlFiles files(root);
    for (const auto& [key, value] : persisted.sysctls)
      for (const auto& s : files.overriding_dltune(key))
        item.notes.push_back(fmt::format("{}:{} sets {} = {} and comes after {}: it wins at boot",
                                         s.file, s.line, key, s.value, kSysctlDropin));
    if (auto note = boot_note(boot, kSysctlDropin)) item.notes.push_back(*note);
    plan.items.push_back(std::move(item));
  }
  if (!persisted.limits.empty()) {
    auto old = read_dropin(root, "persist.limits", kLimitsDropin);
    if (!old) return tl::unexpected(old.error());
    plan.items.push_back(file_item("persist.limits", kLimitsDropin, *old,
                                   merge_limits_dropin(old->value_or(""), "*", persisted.limits),
                                   fmt::format("write {}", kLimitsDropin)));
  }
  if (!persisted.sysfs.empty()) {
    auto old = read_dropin(root, "persist.sysfs", kTmpfilesDropin);
    if (!old) return tl::unexpected(old.error());
    auto merged = merge_tmpfiles_dropin(old->value_or(""), persisted.sysfs);
    if (!merged) return tl::unexpected(merged.error());
    auto item = file_item("persist.sysfs", kTmpfilesDropin, *old, *merged,
                          fmt::format("write {} ({} sysfs value(s) for boot)", kTmpfilesDropin,
                                      persisted.sysfs.size()));
    if (!persisted.udev_by_name.empty() && persisted.udev.empty())
      item.notes.push_back(fmt::format(
          "no /etc/udev/rules.d (udev is not installed): the values of {} are tmpfiles.d lines "
          "that name {} as named now, and disk names (sda, nvme0n1) can change between boots",
          text::join(persisted.udev_by_name, ", "),
          persisted.udev_by_name.size() == 1 ? "it" : "them"));
    if (auto note = boot_note(boot, kTmpfilesDropin)) item.notes.push_back(*note);
    plan.items.push_back(std::move(item));
  }
  if (!persisted.udev.empty()) {
    auto old = read_dropin(root, "persist.udev", settings::kUdevDropin);
    if (!old) return tl::unexpected(old.error());
    auto merged = settings::merge_udev_dropin(old->value_or(""), persisted.udev);
    if (!merged) return tl::unexpected(merged.error());
    std::size_t n = 0;
    for (const auto& [match, attrs] : persisted.udev) n += attrs.size();
    auto item = file_item("persist.udev", settings::kUdevDropin, *old, *merged,
                          fmt::format("write {} ({} disk attribute(s), set whenever the disk "
                                      "appears)",
                                      settings::kUdevDropin, n));
    if (!persisted.udev_by_name.empty())
      item.notes.push_back(fmt::format(
          "udev knows no serial of {}: {} as named now, and disk names (sda, nvme0n1) can "
          "change between boots",
          text::join(persisted.udev_by_name, ", "),
          persisted.udev_by_name.size() == 1 ? "its rule names it" : "their rules name them"));
    if (auto note = boot_note(boot, settings::kUdevDropin)) item.notes.push_back(*note);
    plan.items.push_back(std::move(item));
  }
  if (persisted.fstab_new || !persisted.fstab_notes.empty()) {
    PlanItem item;
    item.key = "persist.fstab";
    if (persisted.fstab_new) {
      item.status = PlanItem::Status::kChange;
      item.summary = fmt::format("add noatime to entries of {} (backed up first)", kFstab);
      item.changes.push_back(
          {"persist.fstab", "file", kFstab, persisted.fstab_old, *persisted.fstab_new, false});
    } else {
      item.status = PlanItem::Status::kNotApplicable;
      item.summary = fmt::format("{} has no entry to change", kFstab);
    }
    item.notes = persisted.fstab_notes;
    plan.items.push_back(std::move(item));
  }
  return plan;
}

}  // namespace dltune::tune

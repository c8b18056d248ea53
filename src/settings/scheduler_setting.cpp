// block.scheduler: the I/O scheduler of each disk under the training data
// (/sys/block/DISK/queue/scheduler), as tuned's disk plugin sets `elevator`. "auto" chooses by
// the disk's kind; a name is the same for every disk. Written live through sysfs, kept for boot
// as a rule of dltune's udev file like read-ahead's (the disk named by its serial).
#include <algorithm>

#include <fmt/format.h>

#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/data_paths.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::settings {

namespace {

// What a disk holds and which scheduler "auto" gives it, with the reason in a few words.
// Sources: Documentation/block/blk-mq.rst and switching-sched.rst (none leaves the ordering to
// a device with deep queues of its own; mq-deadline bounds how long a read waits behind writes
// on a single-queue device); Red Hat Enterprise Linux 9, Monitoring and managing system status
// and performance, "Setting the disk scheduler" (none for NVMe and fast SSDs, mq-deadline for
// traditional disks and SATA SSDs; in a virtual guest none, as the host schedules).
struct Wanted {
  std::string scheduler;
  std::string why;
};

std::optional<Wanted> auto_scheduler(const std::string& disk, const inventory::BlockDevice* dev) {
  // A stacked device (LVM, dm-crypt, md RAID) passes its I/O to its members: theirs decide.
  if (disk.starts_with("dm-") || disk.starts_with("md")) return std::nullopt;
  if (disk.starts_with("nvme")) return Wanted{"none", "NVMe: the device's own queues order I/O"};
  if (inventory::is_virtual_disk(disk))
    return Wanted{"none", "a virtual disk: the hypervisor's host schedules"};
  if (dev != nullptr && dev->rotational == true)
    return Wanted{"mq-deadline", "a rotational disk: reads are not starved by writes"};
  return Wanted{"mq-deadline", "a SATA/SAS SSD: reads are not starved by writes"};
}

struct Disk {
  std::string name, mount_point, data_path, file;
  std::string selected, raw;  // raw: the file's text ("none [mq-deadline] kyber")
  std::vector<std::string> offered;
  std::optional<Wanted> wanted;  // empty: not applicable (a stacked device)
};

// The disks under the data paths' file systems that have a scheduler file, each once.
std::vector<Disk> data_disks(const host::Root& root, const inventory::HostFacts& facts,
                             const std::vector<std::string>& paths, const ProfileEntry& e) {
  std::vector<Disk> out;
  for (const auto& d : data_file_systems(root, facts, paths)) {
    if (!d.disk) continue;
    if (std::any_of(out.begin(), out.end(), [&](const Disk& x) { return x.name == *d.disk; }))
      continue;
    Disk k;
    k.name = *d.disk;
    k.mount_point = d.fs->mount_point;
    k.data_path = d.path;
    k.file = "/sys/block/" + k.name + "/queue/scheduler";
    const auto raw = read_trimmed(root, k.file);
    if (!raw) continue;
    const auto choice = host::parse::bracket_choice(*raw);
    if (!choice.selected) continue;
    k.selected = *choice.selected;
    k.raw = text::normalise_spaces(*raw);
    k.offered = choice.options;
    const inventory::BlockDevice* dev = facts.storage.block_device(k.name);
    if (e.expected.values.empty() || e.expected.values.front() == "auto")
      k.wanted = auto_scheduler(k.name, dev);
    else
      k.wanted = Wanted{e.expected.values.front(), "the profile's"};
    out.push_back(std::move(k));
  }
  return out;
}

bool offers(const Disk& d) {
  return d.wanted &&
         std::find(d.offered.begin(), d.offered.end(), d.wanted->scheduler) != d.offered.end();
}

}  // namespace

Result<void> plan_scheduler(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const auto paths = context.data_paths.empty() ? default_data_paths() : context.data_paths;
  std::vector<std::string> from, ok, skipped;
  for (const auto& d : data_disks(context.root, context.facts, paths, e)) {
    if (!d.wanted) {
      skipped.push_back(d.name + " (stacked: its member disks' schedulers decide)");
      continue;
    }
    if (!offers(d)) {
      skipped.push_back(fmt::format("{} (offers {}, not {})", d.name, fmt::join(d.offered, " "),
                                    d.wanted->scheduler));
      continue;
    }
    persist_disk_attribute(context, d.name, "queue/scheduler", d.wanted->scheduler);
    if (d.selected == d.wanted->scheduler) {
      ok.push_back(fmt::format("{} {}", d.name, d.selected));
      continue;
    }
    from.push_back(fmt::format("{} {} -> {}", d.name, d.selected, d.wanted->scheduler));
    item.changes.push_back({e.key, "sysfs", d.file, d.selected, d.wanted->scheduler, false});
  }
  for (const auto& s : skipped) item.notes.push_back("left alone: " + s);
  finish_disk_plan(item, from, ok, "no disk with a scheduler under the data paths' file systems");
  return {};
}

std::vector<Finding> check_scheduler(const CheckInput& in, const ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = check_data_paths(in.facts, in.data_paths);
  for (const auto& d : data_disks(in.root, in.facts, paths, entry)) {
    const std::string offered = fmt::format("{}", fmt::join(d.offered, " "));
    if (!d.wanted) {
      out.push_back(not_applicable(
          entry, "storage",
          fmt::format("{} (holding {}) is a stacked device: the schedulers of the disks under it "
                      "decide",
                      d.name, d.mount_point)));
      continue;
    }
    Finding f = judge(entry, "storage", d.selected, {{d.file, d.raw}});
    f.expected = fmt::format("{} ({})", d.wanted->scheduler, d.wanted->why);
    f.actual = d.selected;
    const bool met = d.selected == d.wanted->scheduler;
    f.severity = met ? Severity::kOk : gpu_judge::not_met(entry);
    f.summary = fmt::format("{} (holding {}) schedules I/O with {}{}", d.name, d.mount_point,
                            d.selected, met ? "" : ", expected " + f.expected);
    if (!met && !offers(d)) {
      f.severity = Severity::kInfo;
      f.notes.push_back(fmt::format(
          "this kernel offers {} for {}, not {}: load its module (modprobe {}) and run tune again",
          offered, d.name, d.wanted->scheduler,
          d.wanted->scheduler == "kyber" ? "kyber-iosched" : d.wanted->scheduler));
    } else if (!met) {
      f.fix = Fix{fmt::format("dltune tune apply --only block.scheduler{} --persist",
                              data_option(in.data_paths, d.data_path)),
                  true};
    }
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(
        not_applicable(entry, "storage", "no disk with a scheduler under the data paths"));
  return out;
}

}  // namespace dltune::settings

// block.scheduler: the I/O scheduler of each disk under the training data
// (/sys/block/DISK/queue/scheduler), as tuned's disk plugin sets `elevator`. "auto" chooses by
// the disk's kind; a name is the same for every disk. Written live through sysfs, kept for boot
// as a rule of dltune's udev file like read-ahead's (the disk named by its serial).
//
// block.nr_requests: how many requests that scheduler may hold (queue/nr_requests), judged only
// where a scheduler holds them: under `none` the file is the device's own tags and cannot be
// raised past them. Facts from block/blk-mq-sched.c (blk_mq_init_sched: a scheduler starts
// with twice the hardware tags, at most 2 x BLKDEV_DEFAULT_RQ = 256), block/elevator.c (a
// switch to none takes the tags again) and block/blk-mq.c (blk_mq_update_nr_requests: at most
// MAX_SCHED_RQ = 2048 under a scheduler, EINVAL above).
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
                             const std::vector<std::string>& paths, const std::string& wanted) {
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
    if (wanted == "auto")
      k.wanted = auto_scheduler(k.name, dev);
    else
      k.wanted = Wanted{wanted, "the profile's"};
    out.push_back(std::move(k));
  }
  return out;
}

// The scheduler block.scheduler's profile value asks for ("auto" or a name).
std::string wanted_value(const ProfileEntry& e) {
  return e.expected.values.empty() ? std::string("auto") : e.expected.values.front();
}

std::string nr_requests_file(const std::string& disk) {
  return "/sys/block/" + disk + "/queue/nr_requests";
}

// The device's own tags (the first hardware queue's; blk-mq gives each the same depth).
std::optional<std::int64_t> hardware_tags(const host::Root& root, const std::string& disk) {
  const auto raw = read_trimmed(root, "/sys/block/" + disk + "/mq/0/nr_tags");
  if (!raw) return std::nullopt;
  return text::to_int(*raw);
}

// queue/nr_requests right after a switch to `scheduler` (the facts at the top of this file).
std::optional<std::string> nr_requests_after_switch(const host::Root& root, const std::string& disk,
                                                    const std::string& scheduler) {
  const auto tags = hardware_tags(root, disk);
  if (!tags) return std::nullopt;
  return std::to_string(scheduler == "none" ? *tags : 2 * std::min<std::int64_t>(*tags, 128));
}

bool offers(const Disk& d) {
  return d.wanted &&
         std::find(d.offered.begin(), d.offered.end(), d.wanted->scheduler) != d.offered.end();
}

}  // namespace

Result<void> plan_scheduler(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const auto paths = context.data_paths.empty() ? default_data_paths() : context.data_paths;
  std::vector<std::string> from, ok, skipped;
  for (const auto& d : data_disks(context.root, context.facts, paths, wanted_value(e))) {
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
    // The switch resets the disk's nr_requests: journaled first, so that rollback restores it
    // after the old scheduler is back.
    const auto nr = read_trimmed(context.root, nr_requests_file(d.name));
    const auto after = nr_requests_after_switch(context.root, d.name, d.wanted->scheduler);
    if (nr && after && *nr != *after)
      item.changes.push_back({e.key, "sysfs", nr_requests_file(d.name), *nr, *after, true});
    item.changes.push_back({e.key, "sysfs", d.file, d.selected, d.wanted->scheduler, false});
    context.planned[d.file] = d.wanted->scheduler;
  }
  for (const auto& s : skipped) item.notes.push_back("left alone: " + s);
  finish_disk_plan(item, from, ok, "no disk with a scheduler under the data paths' file systems");
  return {};
}

std::vector<Finding> check_scheduler(const CheckInput& in, const ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = check_data_paths(in.facts, in.data_paths);
  for (const auto& d : data_disks(in.root, in.facts, paths, wanted_value(entry))) {
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
      f.fix = data_fix(entry.key, in.data_paths, d.data_path);
    }
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(
        not_applicable(entry, "storage", "no disk with a scheduler under the data paths"));
  return out;
}

Result<void> plan_nr_requests(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const auto paths = context.data_paths.empty() ? default_data_paths() : context.data_paths;
  std::vector<std::string> from, ok, skipped;
  for (const auto& d : data_disks(context.root, context.facts, paths, "auto")) {
    // The scheduler the disk will have: block.scheduler is planned first (tune/plan.cpp).
    const auto planned = context.planned.find(d.file);
    const bool switched = planned != context.planned.end();
    const std::string scheduler = switched ? planned->second : d.selected;
    if (scheduler == "none") {
      skipped.push_back(d.name + " (no scheduler: its queue is the device's own tags)");
      continue;
    }
    const std::string file = nr_requests_file(d.name);
    auto now = switched ? nr_requests_after_switch(context.root, d.name, scheduler)
                        : read_trimmed(context.root, file);
    if (!now) {
      if (switched)
        skipped.push_back(d.name + " (its queue after the switch to " + scheduler +
                          " is not known: no mq/0/nr_tags; tune it again after this one)");
      continue;
    }
    const auto target = target_value(e.expected, *now, std::nullopt);
    persist_disk_attribute(context, d.name, "queue/nr_requests", target.value_or(*now));
    if (!target) {
      ok.push_back(fmt::format("{} {} ({})", d.name, *now, scheduler));
      continue;
    }
    from.push_back(fmt::format("{} {} -> {} ({})", d.name, *now, *target, scheduler));
    item.changes.push_back({e.key, "sysfs", file, *now, *target, false});
  }
  for (const auto& s : skipped) item.notes.push_back("left alone: " + s);
  finish_disk_plan(item, from, ok,
                   "no disk under the data paths' file systems has an I/O scheduler");
  return {};
}

std::vector<Finding> check_nr_requests(const CheckInput& in, const ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = check_data_paths(in.facts, in.data_paths);
  for (const auto& d : data_disks(in.root, in.facts, paths, "auto")) {
    const std::string file = nr_requests_file(d.name);
    const auto nr = read_trimmed(in.root, file);
    if (!nr) continue;
    const auto tags = hardware_tags(in.root, d.name);
    const std::string device_takes =
        tags ? fmt::format("the device takes {} at once (mq/0/nr_tags)", *tags) : std::string();
    if (d.selected == "none") {
      out.push_back(not_applicable(
          entry, "storage",
          fmt::format("{} (holding {}) has no I/O scheduler: its {} requests are the device's "
                      "own tags",
                      d.name, d.mount_point, *nr)));
      continue;
    }
    Finding f = judge(entry, "storage", *nr, {{file, *nr}, {d.file, d.raw}});
    f.summary =
        fmt::format("{} (holding {}) lets {} hold {} requests{}", d.name, d.mount_point, d.selected,
                    *nr, f.severity == Severity::kOk ? "" : ", expected " + f.expected);
    if (!device_takes.empty()) f.notes.push_back(device_takes);
    if (f.severity != Severity::kOk) f.fix = data_fix(entry.key, in.data_paths, d.data_path);
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(
        not_applicable(entry, "storage", "no disk with an I/O scheduler under the data paths"));
  return out;
}

}  // namespace dltune::settings

// The plan's storage, sysfs-at-boot and cgroup parts on hand-made trees: mount.noatime (with the
// fstab entry), block.read_ahead_kb, the tmpfiles.d drop-in, and v1 memory cgroups' swappiness.
#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/dropins.hpp"
#include "settings/dropins_text.hpp"
#include "settings/mount_setting.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"
#include "tune/plan.hpp"

namespace plan_storage_test {

using namespace dltune;
using tune::PlanItem;

namespace {

const PlanItem* item(const tune::Plan& p, const std::string& key) {
  for (const auto& i : p.items)
    if (i.key == key) return &i;
  return nullptr;
}

tune::Plan plan_for(const host::Root& root, std::vector<std::string> only, bool persist,
                    tune::PlanOptions options = {}) {
  auto prof = settings::load_profile("training", root, settings::validate_key);
  EXPECT_TRUE(prof.has_value());
  const auto facts = inventory::collect(root, {});
  auto plan = tune::make_plan(root, facts, *prof, only, persist, options);
  EXPECT_TRUE(plan.has_value()) << plan.error().message();
  return *plan;
}

std::string disk_dir(const std::string& disk) {
  return "sys/devices/pci0/block/" + disk;
}

// Disk `disk` with `part` on it (or `part` the whole disk), linked as sysfs links them.
dltune::testing::TempTree& add_disk(dltune::testing::TempTree& t, const std::string& part,
                                    const std::string& disk) {
  if (part != disk)
    t.link("sys/class/block/" + part, "../../devices/pci0/block/" + disk + "/" + part)
        .write(disk_dir(disk) + "/" + part + "/partition", "1\n");
  else
    t.link("sys/class/block/" + part, "../../devices/pci0/block/" + disk);
  return t.link("sys/block/" + disk, "../devices/pci0/block/" + disk);
}

// / on sda1 (relatime, in fstab), /srv/data on sdb1 (strictatime, in fstab), /data on sdc
// (noatime, not in fstab), /scratch a tmpfs (relatime, not in fstab).
void host_with_disks(dltune::testing::TempTree& t) {
  t.write("proc/self/mountinfo",
          "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw,errors=remount-ro\n"
          "23 22 8:17 / /srv/data rw,nosuid - ext4 /dev/sdb1 rw\n"
          "24 22 8:32 / /data rw,noatime - xfs /dev/sdc rw\n"
          "25 22 0:5 / /scratch rw,relatime - tmpfs tmpfs rw,size=1g\n")
      .write("etc/fstab",
             "# /etc/fstab: static file system information.\n"
             "UUID=1234  /          ext4  errors=remount-ro  0 1\n"
             "/dev/sdb1  /srv/data  ext4  defaults,nosuid    0 2\n")
      .write("dev/sda1", "")
      .write("dev/sdb1", "")
      .write("dev/sdc", "");
  for (const auto& [part, disk, kb] :
       {std::tuple{"sda1", "sda", "128"}, {"sdb1", "sdb", "16"}, {"sdc", "sdc", "64"}})
    add_disk(t, part, disk).write(disk_dir(disk) + "/queue/read_ahead_kb", std::string(kb) + "\n");
}

}  // namespace

TEST(AtimeMode, FromTheMountOptions) {
  EXPECT_EQ(settings::atime_mode("rw,nosuid,relatime"), "relatime");
  EXPECT_EQ(settings::atime_mode("rw,noatime,nodiratime"), "noatime");
  EXPECT_EQ(settings::atime_mode("rw,nosuid"), "strictatime");
}

TEST(AtimeMode, ReadFromMountinfoAndRemountRefusedOffTheLiveHost) {
  dltune::testing::TempTree t;
  host_with_disks(t);
  const auto root = t.root();
  EXPECT_EQ(*settings::read_atime_mode(root, "/srv/data"), "strictatime");
  EXPECT_EQ(*settings::read_atime_mode(root, "/data"), "noatime");
  EXPECT_EQ(*settings::read_atime_mode(root, "/nowhere"), std::nullopt);
  const auto r = settings::set_atime_mode(root, "/srv/data", "noatime");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("live host"), std::string::npos) << r.error().message();
  const auto bad = settings::set_atime_mode(root, "/srv/data", "sometimes");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("sometimes"), std::string::npos);
}

TEST(PlanMount, RemountsEachDataFileSystemThatIsNotNoatime) {
  dltune::testing::TempTree t;
  host_with_disks(t);
  const auto plan = plan_for(t.root(), {"mount.noatime"}, false,
                             {{"/srv/data/imagenet", "/data", "/", "/home"}, false});
  const auto* m = item(plan, "mount.noatime");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->status, PlanItem::Status::kChange);
  ASSERT_EQ(m->changes.size(), 2u);  // /data is noatime already; /home is on /
  EXPECT_EQ(m->changes[0].kind, "mount");
  EXPECT_EQ(m->changes[0].target, "/srv/data");
  EXPECT_EQ(m->changes[0].old_value, "strictatime");
  EXPECT_EQ(m->changes[0].new_value, "noatime");
  EXPECT_EQ(m->changes[1].target, "/");
  EXPECT_EQ(m->changes[1].old_value, "relatime");
  EXPECT_EQ(item(plan, "persist.fstab"), nullptr);  // live only
  // Already noatime: nothing to do.
  const auto ok = plan_for(t.root(), {"mount.noatime"}, false, {{"/data"}, false});
  EXPECT_EQ(item(ok, "mount.noatime")->status, PlanItem::Status::kAlreadyOk);
}

TEST(PlanMount, PersistAddsNoatimeToTheFstabEntriesAndSaysWhichHaveNone) {
  dltune::testing::TempTree t;
  host_with_disks(t);
  const auto plan =
      plan_for(t.root(), {"mount.noatime"}, true, {{"/srv/data", "/scratch", "/"}, false});
  EXPECT_EQ(item(plan, "mount.noatime")->changes.size(), 3u);
  const auto* f = item(plan, "persist.fstab");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->changes.size(), 1u);
  EXPECT_EQ(f->changes[0].target, "/etc/fstab");
  EXPECT_EQ(f->changes[0].kind, "file");
  EXPECT_EQ(f->changes[0].new_value,
            "# /etc/fstab: static file system information.\n"
            "UUID=1234  /          ext4  errors=remount-ro,noatime  0 1\n"
            "/dev/sdb1  /srv/data  ext4  defaults,nosuid,noatime    0 2\n");
  ASSERT_EQ(f->notes.size(), 1u);
  EXPECT_NE(f->notes[0].find("/scratch"), std::string::npos) << f->notes[0];
}

TEST(PlanMount, NotInAContainer) {
  // The container fixture: / is an overlay, relatime.
  const auto root = *host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/container-cgv2");
  const auto plan = plan_for(root, {"mount.noatime"}, false);
  const auto* m = item(plan, "mount.noatime");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->status, PlanItem::Status::kNotApplicable) << m->summary;
  EXPECT_TRUE(m->changes.empty());
}

TEST(PlanReadAhead, RaisesTheDisksUnderTheDataAndPersistsEveryOne) {
  dltune::testing::TempTree t;
  host_with_disks(t);
  // training: >= 128 KiB. sdb (under /srv/data) has 16, sdc (under /data) 64, sda 128.
  t.mkdir("etc/udev/rules.d")
      .write(disk_dir("sdb") + "/dev", "8:16\n")
      .write("run/udev/data/b8:16",
             "S:disk/by-id/ata-WDC_WD40EFRX_WD-WCC4E1234567\n"
             "E:ID_SERIAL=WDC_WD40EFRX_WD-WCC4E1234567\n");
  const auto plan = plan_for(t.root(), {"block.read_ahead_kb"}, true,
                             {{"/srv/data", "/data", "/", "/scratch"}, false});
  const auto* r = item(plan, "block.read_ahead_kb");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, PlanItem::Status::kChange);
  ASSERT_EQ(r->changes.size(), 2u);
  EXPECT_EQ(r->changes[0].target, "/sys/block/sdb/queue/read_ahead_kb");
  EXPECT_EQ(r->changes[0].old_value, "16");
  EXPECT_EQ(r->changes[0].new_value, "128");
  EXPECT_EQ(r->changes[1].target, "/sys/block/sdc/queue/read_ahead_kb");
  EXPECT_EQ(r->summary, "sdb 16 -> 128 KiB, sdc 64 -> 128 KiB");
  const auto* p = item(plan, "persist.udev");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->changes.size(), 1u);
  EXPECT_EQ(p->changes[0].target, "/etc/udev/rules.d/60-dltune.rules");
  EXPECT_FALSE(p->changes[0].old_value);
  const auto& text = p->changes[0].new_value;
  // sdb by the serial udev recorded for it (it keeps its rule under another name), the others
  // by name.
  const std::string head = R"(ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", )";
  EXPECT_NE(text.find(head + R"(KERNEL=="sda", ATTR{queue/read_ahead_kb}="128")" + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(head + R"(ENV{ID_SERIAL}=="WDC_WD40EFRX_WD-WCC4E1234567", )" +
                      R"(ATTR{queue/read_ahead_kb}="128")" + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(head + R"(KERNEL=="sdc", ATTR{queue/read_ahead_kb}="128")" + "\n"),
            std::string::npos);
  EXPECT_EQ(item(plan, "persist.sysfs"), nullptr);  // nothing of a disk's in tmpfiles.d
  ASSERT_EQ(p->notes.size(), 2u);
  EXPECT_EQ(p->notes[0],
            "udev knows no serial of sdc, sda: their rules name them as named now, and disk names "
            "(sda, nvme0n1) can change between boots");
  // Nothing here runs udevd at boot: the plan says so.
  EXPECT_NE(p->notes[1].find("runs nothing that reads it at boot"), std::string::npos)
      << p->notes[1];
  EXPECT_NE(p->notes[1].find("dltune tune apply --boot"), std::string::npos) << p->notes[1];
}

TEST(PlanTmpfiles, ThpAndGovernorValuesForBootUnderSystemd) {
  dltune::testing::TempTree t;
  t.write("sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n")
      .write("sys/kernel/mm/transparent_hugepage/defrag", "always defer [defer+madvise] never\n")
      .write("sys/devices/system/cpu/online", "0-1\n")
      .write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n")
      .write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n")
      .write("usr/bin/systemd-tmpfiles", "")
      .write("proc/1/comm", "systemd\n")
      .write("etc/tmpfiles.d/90-dltune.conf",
             "w /sys/kernel/mm/transparent_hugepage/enabled - - - - always\n"
             "d /run/mine 0755 root root -\n");
  const auto plan = plan_for(t.root(), {"thp.enabled", "thp.defrag", "cpu.governor"}, true);
  const auto* p = item(plan, "persist.sysfs");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->changes.size(), 1u);
  EXPECT_TRUE(p->notes.empty()) << p->notes[0];  // systemd applies tmpfiles.d at boot
  const std::string want =
      std::string(settings::kTmpfilesDropinHeader) + "\n" +
      "w /sys/kernel/mm/transparent_hugepage/enabled - - - - always\n"  // replaced in place
      "d /run/mine 0755 root root -\n"                                  // kept
      "w /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor - - - - performance\n"
      "w /sys/kernel/mm/transparent_hugepage/defrag - - - - defer+madvise\n";
  EXPECT_EQ(p->changes[0].new_value, want);
  EXPECT_EQ(*p->changes[0].old_value,
            "w /sys/kernel/mm/transparent_hugepage/enabled - - - - always\n"
            "d /run/mine 0755 root root -\n");
}

// intel_pstate in active mode on four CPUs, two of them on balance_performance: tune plans each
// CPU's file and one tmpfiles.d line for all, before the governor whatever the
// profile's order (under the performance governor another preference cannot be written back).
TEST(PlanEpp, EachCpusPreferenceBeforeTheGovernorAndOneLineForBoot) {
  dltune::testing::TempTree t;
  t.write("sys/devices/system/cpu/online", "0-3\n").write("proc/1/comm", "systemd\n");
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string d = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/";
    t.write(d + "scaling_driver", "intel_pstate\n")
        .write(d + "scaling_governor", "powersave\n")
        .write(d + "scaling_available_governors", "performance powersave\n")
        .write(d + "energy_performance_preference",
               cpu < 2 ? "balance_performance\n" : "performance\n")
        .write(d + "energy_performance_available_preferences",
               "default performance balance_performance balance_power power\n");
  }
  // A profile that names the governor first.
  t.write("etc/dltune/profiles/mine.toml",
          "[settings.\"cpu.governor\"]\nvalue = \"performance\"\nreason = \"r\"\nsource = \"s\"\n"
          "[settings.\"cpu.epp\"]\nvalue = \"performance\"\nreason = \"r\"\nsource = \"s\"\n");
  auto root = t.root();
  const auto facts = inventory::collect(root, {});
  ASSERT_EQ(facts.cpu.epp.size(), 2u);
  EXPECT_EQ(facts.cpu.available_epp.size(), 5u);
  auto mine = settings::load_profile("mine", root, settings::validate_key);
  ASSERT_TRUE(mine) << mine.error().message();
  auto plan = tune::make_plan(root, facts, *mine, {}, true);
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_GE(plan->items.size(), 2u);
  EXPECT_EQ(plan->items[0].key, "cpu.epp");
  EXPECT_EQ(plan->items[1].key, "cpu.governor");
  const auto* e = item(*plan, "cpu.epp");
  ASSERT_EQ(e->status, PlanItem::Status::kChange);
  EXPECT_EQ(e->summary, "balance_performance on CPUs 0-1 -> performance");
  ASSERT_EQ(e->changes.size(), 2u);
  EXPECT_EQ(e->changes[0].target,
            "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference");
  EXPECT_EQ(e->changes[1].old_value, "balance_performance");
  const auto* p = item(*plan, "persist.sysfs");
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p->changes.at(0).new_value.find("w /sys/devices/system/cpu/cpu*/cpufreq/"
                                            "energy_performance_preference - - - - performance\n"),
            std::string::npos)
      << p->changes[0].new_value;
  // A preference the driver does not offer is refused, naming its file.
  t.write("etc/dltune/profiles/odd.toml",
          "[settings.\"cpu.epp\"]\nvalue = \"turbo\"\nreason = \"r\"\nsource = \"s\"\n");
  auto odd = settings::load_profile("odd", root, settings::validate_key);
  ASSERT_TRUE(odd) << odd.error().message();
  auto refused = tune::make_plan(root, facts, *odd, {}, false);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("energy_performance_available_preferences allows "
                                           "default, performance, balance_performance"),
            std::string::npos)
      << refused.error().message();
}

TEST(TmpfilesDropin, MergesInPlaceIsIdempotentAndRefusesOddPaths) {
  const std::map<std::string, std::string> w = {{"/sys/block/sda/queue/read_ahead_kb", "256"}};
  const auto once = settings::merge_tmpfiles_dropin("", w);
  ASSERT_TRUE(once);
  EXPECT_EQ(*once, std::string(settings::kTmpfilesDropinHeader) +
                       "\nw /sys/block/sda/queue/read_ahead_kb - - - - 256\n");
  EXPECT_EQ(*settings::merge_tmpfiles_dropin(*once, w), *once);
  const auto changed =
      settings::merge_tmpfiles_dropin(*once, {{"/sys/block/sda/queue/read_ahead_kb", "512\n"}});
  EXPECT_EQ(*changed, std::string(settings::kTmpfilesDropinHeader) +
                          "\nw /sys/block/sda/queue/read_ahead_kb - - - - 512\n");
  for (const auto& bad :
       {std::string("/etc/passwd"), std::string("/sys/a b"), std::string("relative/sys")}) {
    const auto r = settings::merge_tmpfiles_dropin("", {{bad, "1"}});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find(bad), std::string::npos);
  }
  EXPECT_FALSE(settings::merge_tmpfiles_dropin("", {{"/sys/x", " \n"}}));
}

TEST(PlanMemcg, V1GroupsThatKeepTheirOwnSwappinessAreNamedOrSet) {
  dltune::testing::TempTree t;
  t.write("proc/self/mountinfo",
          "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
          "30 22 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n")
      .write("proc/self/cgroup", "4:memory:/\n")
      .write("proc/sys/vm/swappiness", "60\n")
      .write("sys/fs/cgroup/memory/memory.swappiness", "60\n")  // the root group: never listed
      .write("sys/fs/cgroup/memory/jobs/memory.swappiness", "60\n")
      .write("sys/fs/cgroup/memory/jobs/a/memory.swappiness", "30\n")
      .write("sys/fs/cgroup/memory/done/memory.swappiness", "10\n");
  const auto root = t.root();
  const auto groups = tune::memcg_swappiness_differing(root, "10");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].first, "/sys/fs/cgroup/memory/jobs/a/memory.swappiness");
  EXPECT_EQ(groups[0].second, "30");
  EXPECT_EQ(groups[1].first, "/sys/fs/cgroup/memory/jobs/memory.swappiness");

  const auto noted = plan_for(root, {"vm.swappiness"}, false);
  const auto* n = item(noted, "vm.swappiness");
  ASSERT_EQ(n->changes.size(), 1u);  // the sysctl only
  ASSERT_EQ(n->notes.size(), 1u);
  EXPECT_NE(n->notes[0].find("2 memory cgroup(s)"), std::string::npos) << n->notes[0];
  EXPECT_NE(n->notes[0].find("--cgroups"), std::string::npos);

  const auto set = plan_for(root, {"vm.swappiness"}, false, {{}, true});
  const auto* s = item(set, "vm.swappiness");
  ASSERT_EQ(s->changes.size(), 3u);
  EXPECT_EQ(s->changes[1].kind, "cgroup");
  EXPECT_EQ(s->changes[1].target, "/sys/fs/cgroup/memory/jobs/a/memory.swappiness");
  EXPECT_EQ(s->changes[1].old_value, "30");
  EXPECT_EQ(s->changes[1].new_value, "10");
  EXPECT_EQ(s->summary, "60 -> 10 (and 2 memory cgroup(s))");
  EXPECT_TRUE(s->notes.empty());
}

}  // namespace plan_storage_test

namespace plan_storage_test {

namespace {

// /data on nvme0n1 (mq-deadline), /srv/data on sdb1 of a hard disk (none), / on sda1 of an SSD
// whose kernel offers only bfq and none, /scratch a tmpfs.
void host_with_schedulers(dltune::testing::TempTree& t) {
  t.write("proc/self/mountinfo",
          "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
          "23 22 8:17 / /srv/data rw,noatime - ext4 /dev/sdb1 rw\n"
          "24 22 259:0 / /data rw,noatime - xfs /dev/nvme0n1 rw\n"
          "25 22 0:5 / /scratch rw,relatime - tmpfs tmpfs rw,size=1g\n")
      .write("dev/sda1", "")
      .write("dev/sdb1", "")
      .write("dev/nvme0n1", "");
  for (const auto& [part, disk, rotational, scheduler] :
       {std::tuple{"sda1", "sda", "0", "[bfq] none"},
        {"sdb1", "sdb", "1", "[none] mq-deadline kyber bfq"},
        {"nvme0n1", "nvme0n1", "0", "[mq-deadline] kyber none"}}) {
    const std::string dev = disk_dir(disk);
    add_disk(t, part, disk)
        .write(dev + "/queue/rotational", std::string(rotational) + "\n")
        .write(dev + "/queue/scheduler", std::string(scheduler) + "\n")
        .write(dev + "/size", "2000000\n");
  }
}

}  // namespace

// auto: none for NVMe, mq-deadline for a hard disk; a scheduler the kernel does not offer is
// left alone with the reason, never written.
TEST(PlanScheduler, AutoChoosesByTheDisksKindAndLeavesWhatTheKernelDoesNotOffer) {
  dltune::testing::TempTree t;
  host_with_schedulers(t);
  t.mkdir("etc/udev/rules.d");
  const auto plan = plan_for(t.root(), {"block.scheduler"}, true,
                             {{"/srv/data", "/data", "/", "/scratch"}, false});
  const auto* r = item(plan, "block.scheduler");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, PlanItem::Status::kChange);
  ASSERT_EQ(r->changes.size(), 2u);
  EXPECT_EQ(r->changes[0].target, "/sys/block/sdb/queue/scheduler");
  EXPECT_EQ(r->changes[0].old_value, "none");
  EXPECT_EQ(r->changes[0].new_value, "mq-deadline");
  EXPECT_EQ(r->changes[1].target, "/sys/block/nvme0n1/queue/scheduler");
  EXPECT_EQ(r->changes[1].old_value, "mq-deadline");
  EXPECT_EQ(r->changes[1].new_value, "none");
  EXPECT_EQ(r->summary, "sdb none -> mq-deadline, nvme0n1 mq-deadline -> none");
  ASSERT_FALSE(r->notes.empty());
  EXPECT_EQ(r->notes[0], "left alone: sda (offers bfq none, not mq-deadline)");
  const auto* p = item(plan, "persist.udev");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->changes.size(), 1u);
  const auto& text = p->changes[0].new_value;
  EXPECT_NE(text.find(R"(KERNEL=="sdb", ATTR{queue/scheduler}="mq-deadline")" + std::string("\n")),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(KERNEL=="nvme0n1", ATTR{queue/scheduler}="none")"), std::string::npos);
  EXPECT_EQ(text.find(R"(KERNEL=="sda")"), std::string::npos);

  // Without udev the values are tmpfiles.d lines, by the disks' names now, and the plan says so.
  dltune::testing::TempTree bare;
  host_with_schedulers(bare);
  const auto no_udev = plan_for(bare.root(), {"block.scheduler"}, true,
                                {{"/srv/data", "/data", "/", "/scratch"}, false});
  EXPECT_EQ(item(no_udev, "persist.udev"), nullptr);
  const auto* tmpfiles = item(no_udev, "persist.sysfs");
  ASSERT_NE(tmpfiles, nullptr);
  ASSERT_EQ(tmpfiles->changes.size(), 1u);
  EXPECT_NE(
      tmpfiles->changes[0].new_value.find("w /sys/block/sdb/queue/scheduler - - - - mq-deadline\n"),
      std::string::npos)
      << tmpfiles->changes[0].new_value;
  ASSERT_FALSE(tmpfiles->notes.empty());
  EXPECT_EQ(tmpfiles->notes[0],
            "no /etc/udev/rules.d (udev is not installed): the values of sdb, nvme0n1 are "
            "tmpfiles.d lines that name them as named now, and disk names (sda, nvme0n1) can "
            "change between boots");

  // check: one finding a disk, the fix where tune can apply it, the reason where it cannot.
  const auto facts = inventory::collect(t.root(), {});
  auto prof = settings::load_profile("training", t.root(), settings::validate_key);
  ASSERT_TRUE(prof);
  const auto root = t.root();
  const settings::CheckInput in{facts, root, false, {"/srv/data", "/data", "/"}, nullptr};
  const auto found = settings::check_scheduler(in, *prof->find("block.scheduler"));
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].summary,
            "sdb (holding /srv/data) schedules I/O with none, expected mq-deadline (a rotational "
            "disk: reads are not starved by writes)");
  EXPECT_EQ(found[0].severity, settings::Severity::kInfo);
  ASSERT_TRUE(found[0].fix);
  EXPECT_EQ(found[0].fix->command,
            "dltune tune apply --only block.scheduler --data /srv/data --persist");
  EXPECT_EQ(found[0].evidence[0].value, "[none] mq-deadline kyber bfq");
  EXPECT_EQ(found[1].actual, "mq-deadline");
  EXPECT_NE(found[1].expected.find("none (NVMe"), std::string::npos) << found[1].expected;
  EXPECT_FALSE(found[2].fix);
  ASSERT_FALSE(found[2].notes.empty());
  EXPECT_NE(found[2].notes.back().find("modprobe mq-deadline"), std::string::npos);

  // A name: the same scheduler everywhere it is offered; already there, nothing to do.
  auto only_none = *prof;
  for (auto& e : only_none.entries)
    if (e.key == "block.scheduler") e.expected.values = {"none"};
  const auto none = settings::check_scheduler(in, *only_none.find("block.scheduler"));
  ASSERT_EQ(none.size(), 3u);
  EXPECT_EQ(none[0].severity, settings::Severity::kOk);  // sdb has none
  EXPECT_EQ(none[1].severity, settings::Severity::kInfo);
  EXPECT_EQ(none[2].severity, settings::Severity::kInfo);  // sda has bfq, offers none
  EXPECT_TRUE(none[2].fix);
}

// The schedulers' queues of host_with_schedulers' disks: nr_requests and the device's tags.
void add_queues(dltune::testing::TempTree& t) {
  for (const auto& [disk, nr, tags] :
       {std::tuple{"sda", "64", "32"}, {"sdb", "32", "32"}, {"nvme0n1", "256", "1023"}})
    t.write(disk_dir(disk) + "/queue/nr_requests", std::string(nr) + "\n")
        .write(disk_dir(disk) + "/mq/0/nr_tags", std::string(tags) + "\n");
}

// nr_requests is planned against the scheduler each disk will have: sdb's switch to
// mq-deadline resets its queue to twice its tags (journaled as the kernel's change, before the
// switch) and the queue is raised from there; nvme0n1 switches to none and is left alone; sda
// keeps bfq and is raised. The scheduler's persistent line comes before the queue's.
TEST(PlanNrRequests, PlannedAgainstTheSchedulerEachDiskWillHave) {
  dltune::testing::TempTree t;
  host_with_schedulers(t);
  add_queues(t);
  t.mkdir("etc/udev/rules.d");
  const tune::PlanOptions data{{"/srv/data", "/data", "/", "/scratch"}, false};
  const auto plan = plan_for(t.root(), {"block.nr_requests", "block.scheduler"}, true, data);
  ASSERT_GE(plan.items.size(), 2u);
  EXPECT_EQ(plan.items[0].key, "block.scheduler");  // the profile lists it first anyway
  const auto* s = item(plan, "block.scheduler");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->changes.size(), 4u);
  EXPECT_EQ(s->changes[0].target, "/sys/block/sdb/queue/nr_requests");
  EXPECT_TRUE(s->changes[0].implied);
  EXPECT_EQ(s->changes[0].old_value, "32");
  EXPECT_EQ(s->changes[0].new_value, "64");
  EXPECT_EQ(s->changes[1].target, "/sys/block/sdb/queue/scheduler");
  EXPECT_FALSE(s->changes[1].implied);
  EXPECT_EQ(s->changes[2].target, "/sys/block/nvme0n1/queue/nr_requests");
  EXPECT_EQ(s->changes[2].new_value, "1023");
  const auto* r = item(plan, "block.nr_requests");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, PlanItem::Status::kChange);
  ASSERT_EQ(r->changes.size(), 2u);
  EXPECT_EQ(r->changes[0].target, "/sys/block/sdb/queue/nr_requests");
  EXPECT_EQ(r->changes[0].old_value, "64");
  EXPECT_EQ(r->changes[0].new_value, "256");
  EXPECT_EQ(r->changes[1].target, "/sys/block/sda/queue/nr_requests");
  EXPECT_EQ(r->summary, "sdb 64 -> 256 (mq-deadline), sda 64 -> 256 (bfq)");
  ASSERT_FALSE(r->notes.empty());
  EXPECT_EQ(r->notes[0], "left alone: nvme0n1 (no scheduler: its queue is the device's own tags)");
  const auto* p = item(plan, "persist.udev");
  ASSERT_NE(p, nullptr);
  const auto& text = p->changes.at(0).new_value;
  const auto sched = text.find(R"(KERNEL=="sdb", ATTR{queue/scheduler}="mq-deadline")");
  const auto queue = text.find(R"(KERNEL=="sdb", ATTR{queue/nr_requests}="256")");
  ASSERT_NE(sched, std::string::npos) << text;
  ASSERT_NE(queue, std::string::npos) << text;
  EXPECT_LT(sched, queue) << text;
  EXPECT_EQ(text.find(R"(KERNEL=="nvme0n1", ATTR{queue/nr_requests})"), std::string::npos);

  // Without udev, tmpfiles.d lines in the same order.
  dltune::testing::TempTree bare;
  host_with_schedulers(bare);
  add_queues(bare);
  const auto no_udev = plan_for(bare.root(), {"block.nr_requests", "block.scheduler"}, true, data);
  const auto* tmpfiles = item(no_udev, "persist.sysfs");
  ASSERT_NE(tmpfiles, nullptr);
  const auto& lines = tmpfiles->changes.at(0).new_value;
  const auto s_line = lines.find("w /sys/block/sdb/queue/scheduler - - - - mq-deadline\n");
  const auto q_line = lines.find("w /sys/block/sdb/queue/nr_requests - - - - 256\n");
  ASSERT_NE(s_line, std::string::npos) << lines;
  ASSERT_NE(q_line, std::string::npos) << lines;
  EXPECT_LT(s_line, q_line) << lines;

  // check: judged where a scheduler holds the requests, with the device's tags.
  const auto facts = inventory::collect(t.root(), {});
  auto prof = settings::load_profile("training", t.root(), settings::validate_key);
  ASSERT_TRUE(prof);
  const auto root = t.root();
  const settings::CheckInput in{facts, root, false, {"/srv/data", "/data", "/"}, nullptr};
  const auto found = settings::check_nr_requests(in, *prof->find("block.nr_requests"));
  ASSERT_EQ(found.size(), 3u);
  EXPECT_FALSE(found[0].applicable);  // sdb: none
  EXPECT_NE(found[0].summary.find("has no I/O scheduler"), std::string::npos) << found[0].summary;
  EXPECT_EQ(found[1].severity, settings::Severity::kOk);  // nvme0n1: mq-deadline, 256
  EXPECT_EQ(found[1].summary, "nvme0n1 (holding /data) lets mq-deadline hold 256 requests");
  ASSERT_FALSE(found[1].notes.empty());
  EXPECT_EQ(found[1].notes[0], "the device takes 1023 at once (mq/0/nr_tags)");
  EXPECT_EQ(found[2].severity, settings::Severity::kInfo);  // sda: bfq, 64
  ASSERT_TRUE(found[2].fix);
  EXPECT_EQ(found[2].fix->command, "dltune tune apply --only block.nr_requests --data / --persist");
  EXPECT_EQ(found[2].evidence[1].value, "[bfq] none");
}

TEST(DropinText, MoveFirstMovesOnlyTheChosenLinesWithinTheirSlots) {
  const auto moved = settings::dropin_text::move_first(
      "# head\nb 1\na 1\n# mid\nb 2\na 2\n", [](std::string_view l) { return !l.starts_with("#"); },
      [](std::string_view l) { return l.starts_with("a"); });
  EXPECT_EQ(moved, "# head\na 1\na 2\n# mid\nb 1\nb 2\n");
}

}  // namespace plan_storage_test

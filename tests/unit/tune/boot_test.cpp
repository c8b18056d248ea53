// dltune's drop-ins at boot, on fixture host trees: who reads each under systemd, sysvinit,
// OpenRC, a container's init and /etc/rc.local; and `tune apply --boot` writing what the
// sysctl.d and tmpfiles.d drop-ins hold (globs expanded, values in place left, a '-' line that
// fails, a path outside dltune's settings refused, a disk that is not there skipped).
#include "tune/boot.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "settings/dropins.hpp"
#include "support/temp_tree.hpp"

namespace dltune::tune::boot_test {
namespace {

using dltune::testing::TempTree;

std::string read(const TempTree& t, const std::string& rel) {
  std::ifstream in(t.dir() / rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const BootReader& reader(const BootReaders& r, const std::string& file) {
  for (const auto& f : r.files)
    if (f.file == file) return f;
  static const BootReader none;
  ADD_FAILURE() << "no entry for " << file;
  return none;
}

TempTree& with_dropins(TempTree& t) {
  return t.write("etc/sysctl.d/90-dltune.conf", "vm.swappiness = 10\n")
      .write("etc/tmpfiles.d/90-dltune.conf",
             "w /sys/block/sda/queue/read_ahead_kb - - - - 4096\n");
}

TEST(BootReaders, EachInitAndWhatItReads) {
  {  // systemd: both drop-ins
    TempTree t;
    with_dropins(t).write("proc/1/comm", "systemd\n").mkdir("run/systemd/system");
    const auto r = boot_readers(t.root());
    EXPECT_EQ(r.init, "systemd");
    EXPECT_EQ(reader(r, "/etc/sysctl.d/90-dltune.conf").by.value_or(""), "systemd-sysctl.service");
    EXPECT_EQ(reader(r, "/etc/tmpfiles.d/90-dltune.conf").by.value_or(""),
              "systemd-tmpfiles-setup.service");
    EXPECT_TRUE(reader(r, "/etc/sysctl.d/90-dltune.conf").exists);
    EXPECT_FALSE(reader(r, "/etc/security/limits.d/90-dltune.conf").exists);
    EXPECT_FALSE(r.anything_lost());
    EXPECT_EQ(render_text(r).find("NOT AT BOOT"), std::string::npos) << render_text(r);
  }
  {  // sysvinit with procps: sysctl.d yes, tmpfiles.d no (nothing runs systemd-tmpfiles)
    TempTree t;
    with_dropins(t).write("proc/1/comm", "init\n").write("etc/inittab", "id:2:initdefault:\n");
    t.link("etc/rcS.d/S01procps", "../init.d/procps");
    const auto r = boot_readers(t.root());
    EXPECT_EQ(reader(r, "/etc/sysctl.d/90-dltune.conf").by.value_or(""),
              "/etc/init.d/procps (sysvinit)");
    EXPECT_FALSE(reader(r, "/etc/tmpfiles.d/90-dltune.conf").by);
    EXPECT_TRUE(r.anything_lost());
    const auto text = render_text(r);
    EXPECT_NE(text.find("NOT AT BOOT /etc/tmpfiles.d/90-dltune.conf: this host's init (init) runs "
                        "nothing that reads it at boot"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("dltune tune apply --boot"), std::string::npos) << text;
  }
  {  // OpenRC with both services in the boot runlevel
    TempTree t;
    with_dropins(t).write("proc/1/comm", "openrc-init\n");
    t.link("etc/runlevels/boot/sysctl", "/etc/init.d/sysctl");
    t.link("etc/runlevels/boot/opentmpfiles-setup", "/etc/init.d/opentmpfiles-setup");
    const auto r = boot_readers(t.root());
    EXPECT_EQ(reader(r, "/etc/sysctl.d/90-dltune.conf").by.value_or(""), "OpenRC's sysctl service");
    EXPECT_EQ(reader(r, "/etc/tmpfiles.d/90-dltune.conf").by.value_or(""),
              "OpenRC's opentmpfiles-setup service");
  }
  {  // a container's init: nothing, until rc.local runs the command (a comment does not count)
    TempTree t;
    with_dropins(t)
        .write("proc/1/comm", "tini\n")
        .write("etc/rc.local", "#!/bin/sh\n# dltune tune apply --boot\nexit 0\n");
    auto r = boot_readers(t.root());
    EXPECT_FALSE(reader(r, "/etc/sysctl.d/90-dltune.conf").by);
    EXPECT_FALSE(reader(r, "/etc/tmpfiles.d/90-dltune.conf").by);
    EXPECT_TRUE(r.anything_lost());
    const auto j = to_json(r);
    EXPECT_EQ(j["init"], "tini");
    EXPECT_TRUE(j["files"][0]["applied_by"].is_null());
    t.write("etc/rc.local", "#!/bin/sh\n/usr/bin/dltune tune apply --boot --yes || true\n");
    r = boot_readers(t.root());
    EXPECT_EQ(reader(r, "/etc/tmpfiles.d/90-dltune.conf").by.value_or(""),
              "/etc/rc.local (dltune tune apply --boot)");
    EXPECT_FALSE(r.anything_lost());
  }
  {  // no drop-in written: nothing to say, whatever the init
    TempTree t;
    t.write("proc/1/comm", "tini\n");
    const auto r = boot_readers(t.root());
    EXPECT_FALSE(r.anything_lost());
    EXPECT_EQ(render_text(r), "");
  }
}

TEST(ApplyAtBoot, WritesWhatTheDropinsHoldAndSaysWhatItCouldNot) {
  TempTree t;
  t.write("etc/sysctl.d/90-dltune.conf", std::string(settings::kSysctlDropinHeader) +
                                             "\n"
                                             "vm.swappiness = 10\n"
                                             "net.core.rmem_max = 16777216\n"
                                             "-kernel.no_such_knob = 1\n"
                                             "kernel.also_missing = 1\n"
                                             "net.ipv4.conf.*.rp_filter = 1\n")
      .write("proc/sys/vm/swappiness", "60\n")
      .write("proc/sys/net/core/rmem_max", "16777216\n")
      .write("etc/tmpfiles.d/90-dltune.conf",
             std::string(settings::kTmpfilesDropinHeader) +
                 "\n"
                 "w /sys/block/*/queue/read_ahead_kb - - - - 4096\n"
                 "w /sys/kernel/mm/transparent_hugepage/enabled - - - - madvise\n"
                 "w /sys/block/nvme9n1/queue/scheduler - - - - none\n"
                 "w /sys/power/state - - - - mem\n")
      .write("sys/block/sda/queue/read_ahead_kb", "128\n")
      .write("sys/block/sdb/queue/read_ahead_kb", "4096\n")
      .write("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n")
      .write("sys/power/state", "freeze mem\n");
  auto r = apply_at_boot(t.root());
  ASSERT_TRUE(r) << r.error().message();
  std::map<std::string, const BootWrite*> by;
  for (const auto& w : r->writes) by[w.target.empty() ? w.key : w.target] = &w;
  const auto status = [&](const std::string& k) {
    return by.contains(k) ? std::string(boot_status_name(by[k]->status)) : std::string("(none)");
  };
  EXPECT_EQ(status("/proc/sys/vm/swappiness"), "written");
  EXPECT_EQ(by["/proc/sys/vm/swappiness"]->before.value_or(""), "60");
  EXPECT_EQ(by["/proc/sys/vm/swappiness"]->line, 2);
  EXPECT_EQ(read(t, "proc/sys/vm/swappiness"), "10\n");
  EXPECT_EQ(status("/proc/sys/net/core/rmem_max"), "already");
  // '-' lets a line fail; without it, a knob this kernel lacks is a failure.
  EXPECT_EQ(status("/proc/sys/kernel/no_such_knob"), "skipped");
  EXPECT_EQ(status("/proc/sys/kernel/also_missing"), "failed");
  EXPECT_EQ(status("net.ipv4.conf.*.rp_filter"), "skipped");
  // The glob: each disk, one already in place.
  EXPECT_EQ(status("/sys/block/sda/queue/read_ahead_kb"), "written");
  EXPECT_EQ(read(t, "sys/block/sda/queue/read_ahead_kb"), "4096\n");
  EXPECT_EQ(status("/sys/block/sdb/queue/read_ahead_kb"), "already");
  // A choice file compares by its [selected] word.
  EXPECT_EQ(status("/sys/kernel/mm/transparent_hugepage/enabled"), "already");
  EXPECT_EQ(status("/sys/block/nvme9n1/queue/scheduler"), "skipped");
  // A line added by hand for a file dltune never writes: refused, the file untouched.
  EXPECT_EQ(status("/sys/power/state"), "failed");
  EXPECT_NE(by["/sys/power/state"]->why.find("refusing to write"), std::string::npos)
      << by["/sys/power/state"]->why;
  EXPECT_EQ(read(t, "sys/power/state"), "freeze mem\n");
  EXPECT_EQ(r->count(BootWrite::Status::kWritten), 2);
  EXPECT_EQ(r->count(BootWrite::Status::kFailed), 2);

  const auto text = render_text(*r);
  EXPECT_NE(text.find("2 written, 3 already in place, 2 failed, 3 skipped"), std::string::npos)
      << text;
  const auto j = to_json(*r);
  EXPECT_EQ(j["schema"], "dltune.tune.boot/1");
  EXPECT_EQ(j["written"], 2);
  EXPECT_EQ(j["failed"], 2);
  for (const auto& w : j["writes"])
    for (const char* key :
         {"source", "line", "kind", "key", "target", "value", "status", "before", "after", "why"})
      EXPECT_TRUE(w.contains(key)) << key;

  // Again: what was written is in place now.
  r = apply_at_boot(t.root());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count(BootWrite::Status::kWritten), 0);
}

TEST(ApplyAtBoot, NoDropinsNothingToWrite) {
  TempTree t;
  const auto r = apply_at_boot(t.root());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->writes.empty());
  EXPECT_NE(render_text(*r).find("nothing to write"), std::string::npos);
}

}  // namespace
}  // namespace dltune::tune::boot_test

namespace dltune::tune::boot_test {

// dltune's udev file: each rule on the disk it matches now (by serial in udev's database, or by
// name), a rule for a disk that is not here skipped; who reads the file at boot.
TEST(ApplyAtBoot, UdevRulesOnTheDisksTheyMatch) {
  TempTree t;
  const std::string head = R"(ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", )";
  t.write("etc/udev/rules.d/60-dltune.rules",
          std::string(settings::kUdevDropinHeader) + "\n" + head +
              R"(ENV{ID_SERIAL}=="Samsung_SSD_S4EV", ATTR{queue/scheduler}="none")" + "\n" + head +
              R"(KERNEL=="sdb", ATTR{queue/read_ahead_kb}="1024")" + "\n" + head +
              R"(ENV{ID_SERIAL}=="gone_disk", ATTR{queue/scheduler}="none")" + "\n")
      // The Samsung came up as sdc this boot.
      .write("sys/block/sdc/dev", "8:32\n")
      .write("run/udev/data/b8:32", "E:ID_SERIAL=Samsung_SSD_S4EV\n")
      .write("sys/block/sdc/queue/scheduler", "[mq-deadline] none\n")
      .write("sys/block/sdb/dev", "8:16\n")
      .write("sys/block/sdb/queue/read_ahead_kb", "128\n");
  auto r = apply_at_boot(t.root());
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->writes.size(), 3u);
  EXPECT_EQ(r->writes[0].target, "/sys/block/sdc/queue/scheduler");
  EXPECT_EQ(r->writes[0].status, BootWrite::Status::kWritten);
  EXPECT_EQ(r->writes[0].line, 2);
  EXPECT_EQ(read(t, "sys/block/sdc/queue/scheduler"), "none\n");
  EXPECT_EQ(r->writes[1].target, "/sys/block/sdb/queue/read_ahead_kb");
  EXPECT_EQ(read(t, "sys/block/sdb/queue/read_ahead_kb"), "1024\n");
  EXPECT_EQ(r->writes[2].status, BootWrite::Status::kSkipped);
  EXPECT_EQ(r->writes[2].why, "no disk on this host matches it");

  // Read at boot by systemd-udevd under systemd; by nobody on a bare init without udevd.
  t.write("proc/1/comm", "systemd\n").mkdir("run/systemd/system");
  auto readers = boot_readers(t.root());
  EXPECT_EQ(reader(readers, "/etc/udev/rules.d/60-dltune.rules").by.value_or(""),
            "systemd-udevd.service");
  TempTree bare;
  bare.write("proc/1/comm", "tini\n")
      .write("etc/udev/rules.d/60-dltune.rules", std::string(settings::kUdevDropinHeader) + "\n");
  readers = boot_readers(bare.root());
  EXPECT_FALSE(reader(readers, "/etc/udev/rules.d/60-dltune.rules").by);
  EXPECT_TRUE(readers.anything_lost());
}

}  // namespace dltune::tune::boot_test

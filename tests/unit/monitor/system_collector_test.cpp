// SystemCollector on fixture trees: every part filled from files kept open (a rewritten file is
// seen at the next collect), whole disks told from partitions through /sys/block, a missing
// source switched off with one notice, a broken file an error naming it.
#include <gtest/gtest.h>

#include "monitor/sampler.hpp"
#include "support/temp_tree.hpp"

namespace dltune::monitor::system_collector_test {
namespace {

using dltune::testing::TempTree;

void write_host(TempTree& t, bool psi = true) {
  t.write("proc/stat",
          "cpu  3163916 0 312679 665867 6863 0 983 688 0 0\n"
          "cpu0 1563674 0 149237 359602 2257 0 44 333 0 0\n"
          "cpu1 1600242 0 163441 306264 4605 0 939 355 0 0\n"
          "ctxt 10742364\nbtime 1796017549\nprocesses 155580\nprocs_running 4\n"
          "procs_blocked 0\n");
  t.write("proc/meminfo",
          "MemTotal:       24683656 kB\nMemFree:        19735812 kB\n"
          "MemAvailable:   23116008 kB\nCached:          3457460 kB\n");
  t.write("proc/vmstat", "pgfault 862383514\npgmajfault 25514\noom_kill 29\n");
  if (psi) {
    t.write("proc/pressure/cpu",
            "some avg10=2.37 avg60=0.57 avg300=0.48 total=6899256696\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
    t.write("proc/pressure/memory",
            "some avg10=0.00 avg60=0.00 avg300=0.12 total=76118475\n"
            "full avg10=0.00 avg60=0.00 avg300=0.09 total=43348502\n");
    t.write("proc/pressure/io",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=24311\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=8908\n");
  }
  t.write("proc/diskstats",
          "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
          " 254       0 vda 568198 19205 14999442 484995 401825 227106 216241240 1108843 0 "
          "204068 1659403 258905 80 202607048 58775 71771 6787\n"
          " 254       1 vda1 1 2 3 4 5 6 7 8 9 10 11 0 0 0 0 0 0\n"
          " 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  t.mkdir("sys/block/loop0").mkdir("sys/block/vda/vda1").mkdir("sys/block/zram0");
  t.write("proc/net/dev",
          "Inter-|   Receive                                                |  Transmit\n"
          " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
          "errs drop fifo colls carrier compressed\n"
          "    lo:    9801      87    0    0    0     0          0         0     9801      87    "
          "0    0    0     0       0          0\n"
          "  eth0: 67578305    1446    0    0    0     0          0         0    72423     911    "
          "0    0    0     0       0          0\n");
}

TEST(SystemCollector, FillsEveryPartAndSeesAFileRewritten) {
  TempTree t;
  write_host(t);
  SystemCollector c(t.root());
  Notices notices;
  System s;
  ASSERT_TRUE(c.collect(s, notices));
  EXPECT_TRUE(notices.take().empty());
  EXPECT_EQ(s.total.user, 3163916u);
  EXPECT_EQ(s.cpus.size(), 2u);
  EXPECT_EQ(s.memory.total, 24683656ull * 1024);
  EXPECT_EQ(s.vm.oom_kill, 29u);
  ASSERT_TRUE(s.pressure.cpu && s.pressure.memory && s.pressure.io);
  EXPECT_EQ(s.pressure.io->full->total_us, 8908u);
  // loop0 (a loop device) and vda1 (a partition: not in /sys/block) are left out.
  ASSERT_EQ(s.disks.size(), 2u);
  EXPECT_EQ(s.disks[0].name, "vda");
  EXPECT_EQ(s.disks[1].name, "zram0");
  ASSERT_EQ(s.net.size(), 1u);
  EXPECT_EQ(s.net[0].name, "eth0");

  // The descriptors stay open: the same inode rewritten is read afresh.
  t.write("proc/stat", "cpu  1 0 1 1\ncpu0 1 0 1 1\nctxt 5\n");
  ASSERT_TRUE(c.collect(s, notices));
  EXPECT_EQ(s.total.user, 1u);
  EXPECT_EQ(s.cpus.size(), 1u);
  EXPECT_EQ(s.context_switches, 5u);
}

TEST(SystemCollector, NoPsiIsOneNoticeAndNoPressure) {
  TempTree t;
  write_host(t, false);
  SystemCollector c(t.root());
  Notices notices;
  System s;
  s.pressure.cpu.emplace();  // left over from another host: cleared
  ASSERT_TRUE(c.collect(s, notices));
  EXPECT_FALSE(s.pressure.cpu);
  EXPECT_FALSE(s.pressure.io);
  const auto said = notices.take();
  ASSERT_EQ(said.size(), 1u);  // one for the three files, said once
  EXPECT_NE(said[0].find("no /proc/pressure: the kernel has no PSI"), std::string::npos);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c.collect(s, notices));
  EXPECT_TRUE(notices.take().empty());
  EXPECT_EQ(s.total.user, 3163916u);  // the rest goes on
}

TEST(SystemCollector, NoSysBlockMeansNoDisksWithANotice) {
  TempTree t;
  write_host(t);
  std::filesystem::remove_all(t.dir() / "sys/block");
  SystemCollector c(t.root());
  Notices notices;
  System s;
  ASSERT_TRUE(c.collect(s, notices));
  EXPECT_TRUE(s.disks.empty());
  const auto said = notices.take();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("/sys/block"), std::string::npos);
}

// activity_every(3): vmstat, PSI, diskstats and net/dev read at the first collect and every third
// after, their last reading carried between with its time; /proc/stat and meminfo every collect.
TEST(SystemCollector, ActivityCountersEveryNCollectsCarriedBetween) {
  TempTree t;
  write_host(t);
  SystemCollector c(t.root());
  c.activity_every(3);
  Notices notices;
  System s;
  ASSERT_TRUE(c.collect(s, notices, 1000));
  EXPECT_FALSE(s.activity_carried);
  EXPECT_EQ(s.activity_ns, 1000);
  EXPECT_EQ(s.vm.oom_kill, 29u);
  t.write("proc/vmstat", "pgfault 862383600\npgmajfault 25514\noom_kill 30\n");
  t.write("proc/pressure/io",
          "some avg10=0.00 avg60=0.00 avg300=0.00 total=99999\n"
          "full avg10=0.00 avg60=0.00 avg300=0.00 total=8908\n");
  t.write("proc/stat", "cpu  1 0 1 1\ncpu0 1 0 1 1\nctxt 5\n");
  for (const std::int64_t at : {2000, 3000}) {
    s.vm = VmStat{};  // the caller's sample held something else: the carried reading replaces it
    s.disks.clear();
    ASSERT_TRUE(c.collect(s, notices, at));
    EXPECT_TRUE(s.activity_carried);
    EXPECT_EQ(s.activity_ns, 1000);  // when what it carries was read
    EXPECT_EQ(s.vm.oom_kill, 29u);
    EXPECT_EQ(s.pressure.io->some.total_us, 24311u);
    ASSERT_EQ(s.disks.size(), 2u);
    EXPECT_EQ(s.disks[0].name, "vda");
    ASSERT_EQ(s.net.size(), 1u);
    EXPECT_EQ(s.total.user, 1u);  // /proc/stat read anew
    EXPECT_EQ(s.context_switches, 5u);
  }
  ASSERT_TRUE(c.collect(s, notices, 4000));
  EXPECT_FALSE(s.activity_carried);
  EXPECT_EQ(s.activity_ns, 4000);
  EXPECT_EQ(s.vm.oom_kill, 30u);
  EXPECT_EQ(s.pressure.io->some.total_us, 99999u);
  ASSERT_TRUE(c.collect(s, notices, 5000));
  EXPECT_TRUE(s.activity_carried);
  EXPECT_EQ(s.vm.oom_kill, 30u);

  // Set again, the next collect reads; 1 is every collect.
  c.activity_every(1);
  for (const std::int64_t at : {6000, 7000}) {
    ASSERT_TRUE(c.collect(s, notices, at));
    EXPECT_FALSE(s.activity_carried);
    EXPECT_EQ(s.activity_ns, at);
  }
  EXPECT_TRUE(notices.take().empty());
}

TEST(SystemCollector, ABrokenFileIsAnErrorNamingIt) {
  TempTree t;
  write_host(t);
  t.write("proc/vmstat", "pgfault 1\npgmajfault lots\n");
  SystemCollector c(t.root());
  Notices notices;
  System s;
  auto r = c.collect(s, notices);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().input, "/proc/vmstat line 2: 'lots'");
}

}  // namespace
}  // namespace dltune::monitor::system_collector_test

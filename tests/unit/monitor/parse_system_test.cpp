// The host-wide parsers with text copied from this VM's /proc (2 vCPUs, Linux 6.18, cgroup v1
// hybrid) and odd cases: CPU hotplug gaps, an old cpu.pressure, short and long diskstats lines,
// counters near 2^64, garbage.
#include <gtest/gtest.h>

#include "monitor/parse_system.hpp"

namespace dltune::monitor::parse_system_test {
namespace {

constexpr const char* kStat =
    "cpu  3163916 0 312679 665867 6863 0 983 688 0 0\n"
    "cpu0 1563674 0 149237 359602 2257 0 44 333 0 0\n"
    "cpu1 1600242 0 163441 306264 4605 0 939 355 0 0\n"
    "intr 11626028 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 16 0 0 0 0 4155 1233\n"
    "ctxt 10742364\n"
    "btime 1796017549\n"
    "processes 155580\n"
    "procs_running 4\n"
    "procs_blocked 0\n"
    "softirq 4324168 0 816283 4 1970 736625 0 7 904220 0 1865059\n";

TEST(ParseProcStat, ThisVm) {
  System s;
  ASSERT_TRUE(parse_proc_stat(kStat, s));
  EXPECT_EQ(s.total.cpu, -1);
  EXPECT_EQ(s.total.user, 3163916u);
  EXPECT_EQ(s.total.system, 312679u);
  EXPECT_EQ(s.total.idle, 665867u);
  EXPECT_EQ(s.total.iowait, 6863u);
  EXPECT_EQ(s.total.softirq, 983u);
  EXPECT_EQ(s.total.steal, 688u);
  ASSERT_EQ(s.cpus.size(), 2u);
  EXPECT_EQ(s.cpus[1].cpu, 1);
  EXPECT_EQ(s.cpus[1].user, 1600242u);
  EXPECT_EQ(s.cpus[1].steal, 355u);
  EXPECT_EQ(s.context_switches, 10742364u);
  EXPECT_EQ(s.processes_forked, 155580u);
  EXPECT_EQ(s.procs_running, 4u);
  EXPECT_EQ(s.procs_blocked, 0u);
}

TEST(ParseProcStat, AWarmSampleReusesItsVectorAndAnOfflineCpuLeavesAGap) {
  System s;
  ASSERT_TRUE(parse_proc_stat(kStat, s));
  const auto* data = s.cpus.data();
  // cpu1 taken offline, cpu2 present: numbers, not positions.
  ASSERT_TRUE(parse_proc_stat("cpu  10 0 10 10\ncpu0 5 0 5 5\ncpu2 5 0 5 5\n", s));
  ASSERT_EQ(s.cpus.size(), 2u);
  EXPECT_EQ(s.cpus.data(), data);  // overwritten in place, no new allocation
  EXPECT_EQ(s.cpus[0].cpu, 0);
  EXPECT_EQ(s.cpus[1].cpu, 2);
  // Only 4 fields (before Linux 2.5.41): the rest are 0, not the previous sample's.
  EXPECT_EQ(s.cpus[1].iowait, 0u);
  EXPECT_EQ(s.cpus[1].steal, 0u);
  ASSERT_TRUE(parse_proc_stat("cpu  1 0 1 1\ncpu0 1 0 1 1\n", s));
  EXPECT_EQ(s.cpus.size(), 1u);
}

TEST(ParseProcStat, CountersNearTwoToThe64AndOverflow) {
  System s;
  ASSERT_TRUE(parse_proc_stat("cpu  18446744073709551615 0 0 0\nctxt 18446744073709551615\n", s));
  EXPECT_EQ(s.total.user, 18446744073709551615u);
  EXPECT_EQ(s.context_switches, 18446744073709551615u);
  auto bad = parse_proc_stat("cpu  18446744073709551616 0 0 0\n", s);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/stat line 1: '18446744073709551616'");
}

TEST(ParseProcStat, GarbageNamesTheLine) {
  System s;
  auto bad = parse_proc_stat("cpu  1 2 3 4\ncpu0 1 2 x 4\n", s);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().what, "not a number in");
  EXPECT_EQ(bad.error().input, "/proc/stat line 2: 'x'");
  bad = parse_proc_stat("cpu  1 2 3 4\ncpuX 1 2 3 4\n", s);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/stat line 2: 'cpuX'");
  bad = parse_proc_stat("cpu0 1 2 3 4\n", s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what.find("no total"), std::string::npos);
  EXPECT_FALSE(parse_proc_stat("cpu  1 2 3\n", s));  // too few times
  EXPECT_FALSE(parse_proc_stat("cpu  1 2 3 4\nctxt -1\n", s));
}

TEST(ParseMeminfo, ThisVmInBytes) {
  Memory m;
  ASSERT_TRUE(
      parse_meminfo("MemTotal:       24683656 kB\n"
                    "MemFree:        19735812 kB\n"
                    "MemAvailable:   23116008 kB\n"
                    "Buffers:           43652 kB\n"
                    "Cached:          3457460 kB\n"
                    "SwapCached:            0 kB\n"
                    "Active(anon):       1620 kB\n"
                    "SwapTotal:             0 kB\n"
                    "SwapFree:              0 kB\n"
                    "Dirty:             85308 kB\n"
                    "Writeback:             0 kB\n"
                    "Shmem:              8924 kB\n"
                    "AnonHugePages:     0 kB\n"
                    "HugePages_Total:       0\n",
                    m));
  EXPECT_EQ(m.total, 24683656ull * 1024);
  EXPECT_EQ(m.free, 19735812ull * 1024);
  EXPECT_EQ(m.available, 23116008ull * 1024);
  EXPECT_EQ(m.buffers, 43652ull * 1024);
  EXPECT_EQ(m.cached, 3457460ull * 1024);
  EXPECT_EQ(m.dirty, 85308ull * 1024);
  EXPECT_EQ(m.shmem, 8924ull * 1024);
  ASSERT_TRUE(m.swap_cached);
  EXPECT_EQ(*m.swap_cached, 0u);
  // A kernel without swap support has no SwapCached line: empty, not the previous value.
  ASSERT_TRUE(parse_meminfo("MemTotal: 1 kB\n", m));
  EXPECT_FALSE(m.swap_cached);
  EXPECT_EQ(m.total, 1024u);
  EXPECT_EQ(m.free, 0u);
}

TEST(ParseMeminfo, Garbage) {
  Memory m;
  auto bad = parse_meminfo("MemTotal: 1 kB\nnonsense\n", m);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/meminfo line 2: 'nonsense'");
  EXPECT_FALSE(parse_meminfo("MemTotal: x kB\n", m));
  EXPECT_FALSE(parse_meminfo("MemTotal: 1 MB\n", m));
  EXPECT_FALSE(parse_meminfo("MemTotal: 18446744073709551615 kB\n", m));  // overflows in bytes
}

TEST(ParseVmstat, ThisVmSumsTheReclaimSources) {
  VmStat v;
  ASSERT_TRUE(
      parse_vmstat("workingset_refault_anon 0\n"
                   "workingset_refault_file 1563406\n"
                   "pswpin 3\n"
                   "pswpout 4\n"
                   "pgfault 862383514\n"
                   "pgmajfault 25514\n"
                   "pgsteal_kswapd 10\n"
                   "pgsteal_direct 20\n"
                   "pgsteal_khugepaged 30\n"
                   "pgsteal_proactive 40\n"
                   "pgscan_kswapd 1\n"
                   "pgscan_direct 2\n"
                   "pgscan_khugepaged 3\n"
                   "pgscan_proactive 4\n"
                   "pgscan_direct_throttle 1000\n"
                   "pgscan_anon 1000\n"
                   "pgscan_file 23\n"
                   "pgsteal_anon 1000\n"
                   "pgsteal_file 23\n"
                   "oom_kill 29\n"
                   "compact_stall 5\n"
                   "thp_fault_alloc 6\n"
                   "thp_fault_fallback 7\n"
                   "thp_fault_fallback_charge 1000\n"
                   "thp_collapse_alloc 8\n",
                   v));
  EXPECT_EQ(v.pswpin, 3u);
  EXPECT_EQ(v.pswpout, 4u);
  EXPECT_EQ(v.pgfault, 862383514u);
  EXPECT_EQ(v.pgmajfault, 25514u);
  EXPECT_EQ(v.pgscan, 1u + 2 + 3 + 4);
  EXPECT_EQ(v.pgsteal, 10u + 20 + 30 + 40);
  EXPECT_EQ(v.workingset_refault_file, 1563406u);
  EXPECT_EQ(v.oom_kill, 29u);
  EXPECT_EQ(v.compact_stall, 5u);
  EXPECT_EQ(v.thp_fault_alloc, 6u);
  EXPECT_EQ(v.thp_fault_fallback, 7u);
  EXPECT_EQ(v.thp_collapse_alloc, 8u);
  // A second parse starts the sums afresh.
  ASSERT_TRUE(parse_vmstat("pgscan_kswapd 1\n", v));
  EXPECT_EQ(v.pgscan, 1u);
  EXPECT_EQ(v.oom_kill, 0u);
}

TEST(ParseVmstat, OldKernelRefaultNameAndGarbage) {
  VmStat v;
  ASSERT_TRUE(parse_vmstat("workingset_refault 77\n", v));  // before Linux 5.9
  EXPECT_EQ(v.workingset_refault_file, 77u);
  auto bad = parse_vmstat("pgfault 1\npgmajfault\n", v);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/vmstat line 2: ''");
}

TEST(ParsePressure, ThisVmAndAnOldCpuFileWithoutFull) {
  Pressure p;
  ASSERT_TRUE(
      parse_pressure("some avg10=2.37 avg60=0.57 avg300=0.48 total=6899256696\n"
                     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                     "/proc/pressure/cpu", p));
  EXPECT_DOUBLE_EQ(p.some.avg10, 2.37);
  EXPECT_DOUBLE_EQ(p.some.avg60, 0.57);
  EXPECT_DOUBLE_EQ(p.some.avg300, 0.48);
  EXPECT_EQ(p.some.total_us, 6899256696u);
  ASSERT_TRUE(p.full);
  EXPECT_EQ(p.full->total_us, 0u);
  // Linux before 5.13: the cpu file has no "full" line; the previous full is not kept.
  ASSERT_TRUE(parse_pressure("some avg10=96.05 avg60=47.96 avg300=13.02 total=6939765815\n",
                             "/sys/fs/cgroup/unified/cpu.pressure", p));
  EXPECT_FALSE(p.full);
  EXPECT_DOUBLE_EQ(p.some.avg10, 96.05);
}

TEST(ParsePressure, Garbage) {
  Pressure p;
  auto bad = parse_pressure("some avg10=x avg60=0 avg300=0 total=1\n", "/proc/pressure/io", p);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/pressure/io line 1: 'avg10=x'");
  bad = parse_pressure("full avg10=0 avg60=0 avg300=0 total=1\n", "/proc/pressure/io", p);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().what, "no 'some' line in");
  bad = parse_pressure("some avg10=0\n", "f", p);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().what, "no total= in");
  EXPECT_FALSE(parse_pressure("half avg10=0 total=1\n", "f", p));
}

bool whole(std::string_view name) {
  return name == "vda" || name == "sda" || name == "zram0";
}

TEST(ParseDiskstats, ThisVmTwentyFieldsAndAnOldFourteenFieldLine) {
  std::vector<Disk> d;
  ASSERT_TRUE(parse_diskstats(
      "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
      " 254       0 vda 568198 19205 14999442 484995 401825 227106 216241240 1108843 0 204068 "
      "1659403 258905 80 202607048 58775 71771 6787\n"
      " 254       1 vda1 1 2 3 4 5 6 7 8 9 10 11\n"
      " 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
      "   8       0 sda 10 1 80 5 20 2 160 7 1 30 12\n",
      whole, d));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].name, "vda");
  EXPECT_EQ(d[0].reads, 568198u);
  EXPECT_EQ(d[0].read_sectors, 14999442u);
  EXPECT_EQ(d[0].read_ms, 484995u);
  EXPECT_EQ(d[0].writes, 401825u);
  EXPECT_EQ(d[0].write_sectors, 216241240u);
  EXPECT_EQ(d[0].write_ms, 1108843u);
  EXPECT_EQ(d[0].in_flight, 0u);
  EXPECT_EQ(d[0].io_ms, 204068u);
  EXPECT_EQ(d[0].weighted_io_ms, 1659403u);
  EXPECT_EQ(d[1].name, "zram0");
  EXPECT_EQ(d[2].name, "sda");  // 14 fields (before Linux 4.18)
  EXPECT_EQ(d[2].write_sectors, 160u);
  EXPECT_EQ(d[2].weighted_io_ms, 12u);
  // Warm: the names are not assigned again.
  const auto* name = d[0].name.data();
  ASSERT_TRUE(parse_diskstats(" 254 0 vda 1 0 8 1 1 0 8 1 0 1 2 0 0 0 0 0 0\n", whole, d));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].name.data(), name);
  EXPECT_EQ(d[0].reads, 1u);
}

TEST(ParseDiskstats, AShortOrBrokenWholeDiskLineIsAnError) {
  std::vector<Disk> d;
  auto bad = parse_diskstats(" 254 0 vda 1 2 3 4\n", whole, d);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/diskstats line 1: 'vda'");
  bad = parse_diskstats("\n 254 0 vda 1 2 3 4 5 6 7 8 9 -1 11\n", whole, d);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/diskstats line 2: '-1'");
  // A partition line of a 2.6 kernel (4 counters) is skipped without a look at its numbers.
  EXPECT_TRUE(parse_diskstats(" 254 1 vda1 1 2 3 4\n", whole, d));
}

constexpr const char* kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo:    9801      87    0    0    0     0          0         0     9801      87    0    "
    "0    0     0       0          0\n"
    "  ifb0:       0       0    0    0    0     0          0         0        0       0    0    "
    "0    0     0       0          0\n"
    "  eth0: 67578305    1446    1    2    0     0          0         0    72423     911    3    "
    "4    0     0       0          0\n";

TEST(ParseNetDev, ThisVmWithoutLo) {
  std::vector<NetDevice> n;
  ASSERT_TRUE(parse_net_dev(kNetDev, n));
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].name, "ifb0");
  EXPECT_EQ(n[1].name, "eth0");
  EXPECT_EQ(n[1].rx_bytes, 67578305u);
  EXPECT_EQ(n[1].rx_packets, 1446u);
  EXPECT_EQ(n[1].rx_errors, 1u);
  EXPECT_EQ(n[1].rx_dropped, 2u);
  EXPECT_EQ(n[1].tx_bytes, 72423u);
  EXPECT_EQ(n[1].tx_packets, 911u);
  EXPECT_EQ(n[1].tx_errors, 3u);
  EXPECT_EQ(n[1].tx_dropped, 4u);
}

TEST(ParseNetDev, NoSpaceAfterTheColonAndGarbage) {
  std::vector<NetDevice> n;
  // Old kernels printed "eth0:67578305" when the counter filled the column.
  ASSERT_TRUE(parse_net_dev("h1\nh2\n  eth0:123456789012 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n", n));
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].rx_bytes, 123456789012u);
  auto bad = parse_net_dev("h1\nh2\n  eth0: 1 2 3\n", n);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/net/dev line 3: 'eth0'");
  bad = parse_net_dev("h1\nh2\nnonsense here\n", n);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/proc/net/dev line 3: 'nonsense here'");
}

TEST(ParseKeyed, CallsBackAndNamesABadLine) {
  std::uint64_t sum = 0;
  ASSERT_TRUE(parse_keyed("nr_periods 10\n\nnr_throttled 5\n", "cpu.stat",
                          [&](std::string_view, std::uint64_t v) { sum += v; }));
  EXPECT_EQ(sum, 15u);
  auto bad = parse_keyed("a 1\nb x\n", "/sys/fs/cgroup/x/cpu.stat", [](auto, auto) {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/sys/fs/cgroup/x/cpu.stat line 2: 'x'");
}

TEST(ParseNumber, MaxAndGarbage) {
  EXPECT_EQ(parse_number("52428800\n", "f").value(), 52428800u);
  EXPECT_EQ(parse_number("max\n", "f", 7).value(), 7u);
  EXPECT_FALSE(parse_number("-1\n", "f"));
  EXPECT_FALSE(parse_number("", "f"));
}

}  // namespace
}  // namespace dltune::monitor::parse_system_test

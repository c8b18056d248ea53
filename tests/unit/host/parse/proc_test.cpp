#include "host/parse/proc.hpp"

#include <gtest/gtest.h>

namespace proc_test {

using namespace dltune::host::parse;

TEST(OsRelease, QuotedUnquotedAndJunk) {
  const auto kv = os_release(
      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
      "NAME='Debian GNU/Linux'\n"
      "VERSION_ID=\"12\"\n"
      "ID=debian\n"
      "# comment\n"
      "garbage line without equals\n"
      "=novalue\n");
  EXPECT_EQ(kv.at("PRETTY_NAME"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(kv.at("NAME"), "Debian GNU/Linux");
  EXPECT_EQ(kv.at("ID"), "debian");
  EXPECT_EQ(kv.at("VERSION_ID"), "12");
  EXPECT_EQ(kv.size(), 4u);
}

TEST(Meminfo, KilobytesAndCounts) {
  const auto m = meminfo(
      "MemTotal:       24683656 kB\n"
      "MemAvailable:   24083656 kB\n"
      "HugePages_Total:       0\n"
      "Hugepagesize:       2048 kB\n");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->at("MemTotal"), 24683656ull * 1024);
  EXPECT_EQ(m->at("HugePages_Total"), 0u);
  EXPECT_EQ(m->at("Hugepagesize"), 2048u * 1024);
}

TEST(Meminfo, GarbledLineIsAnErrorNamingTheLine) {
  const auto m = meminfo("MemTotal: 1 kB\nMemFree: lots kB\n");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("line 2"), std::string::npos);
  EXPECT_NE(m.error().message().find("MemFree: lots kB"), std::string::npos);
  EXPECT_FALSE(meminfo("no colon here\n"));
  EXPECT_FALSE(meminfo("MemTotal: 1 MB\n"));
}

TEST(Cmdline, QuotesFlagsAndValues) {
  const auto p = cmdline(
      "BOOT_IMAGE=/vmlinuz-5.15 root=UUID=abc ro quiet intel_iommu=on iommu=pt "
      "pci=noacs,realloc dyndbg=\"file drivers/x +p\" modprobe.blacklist=nouveau\n");
  ASSERT_EQ(p.size(), 9u);
  EXPECT_EQ(p[1].key, "root");
  EXPECT_EQ(p[1].value, "UUID=abc");
  EXPECT_EQ(p[2].key, "ro");
  EXPECT_FALSE(p[2].value);
  EXPECT_EQ(p[7].key, "dyndbg");
  EXPECT_EQ(p[7].value, "file drivers/x +p");
  EXPECT_EQ(p[8].value, "nouveau");
}

TEST(BootTime, FindsBtime) {
  EXPECT_EQ(boot_time("cpu  1 2 3\nintr 5\nbtime 1764481549\nprocesses 9\n"), 1764481549);
  EXPECT_FALSE(boot_time("cpu 1 2 3\n"));
  EXPECT_FALSE(boot_time("btime soon\n"));
}

TEST(Limits, KernelFormat) {
  // Copied from this VM's /proc/self/limits.
  const auto l = limits(
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max stack size            8388608              unlimited            bytes     \n"
      "Max processes             96364                96364                processes \n"
      "Max open files            20000                20000                files     \n"
      "Max locked memory         8388608              8388608              bytes     \n"
      "Max realtime timeout      unlimited            unlimited            us        \n");
  ASSERT_TRUE(l) << l.error().message();
  EXPECT_EQ(l->at("Max open files").soft, 20000u);
  EXPECT_EQ(l->at("Max locked memory").hard, 8388608u);
  EXPECT_FALSE(l->at("Max cpu time").soft.has_value());  // unlimited
  EXPECT_FALSE(l->at("Max stack size").hard.has_value());
  EXPECT_EQ(l->at("Max processes").unit, "processes");
  EXPECT_EQ(l->size(), 6u);
}

TEST(Limits, GarbledIsAnError) {
  EXPECT_FALSE(limits("Limit Soft Hard Units\nMax open files lots many files\n"));
  EXPECT_FALSE(limits("Limit Soft Hard Units\n1024 2048\n"));
}

TEST(Mountinfo, RealLinesWithEscapesAndOptionalFields) {
  const auto m = mountinfo(
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict\n"
      "36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 shared:2 - ext3 /dev/root "
      "rw,errors=continue\n"
      "25 24 0:23 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,size=65536k\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ((*m)[0].mount_point, "/");
  EXPECT_EQ((*m)[0].fstype, "ext4");
  EXPECT_EQ((*m)[0].source, "/dev/vda");
  EXPECT_EQ((*m)[0].super_options, (std::vector<std::string>{"rw", "discard", "resv_strict"}));
  EXPECT_EQ((*m)[1].mount_point, "/mnt/with space");
  EXPECT_EQ((*m)[1].root, "/mnt1");
  EXPECT_EQ((*m)[1].options, (std::vector<std::string>{"rw", "noatime"}));
  EXPECT_EQ((*m)[1].fstype, "ext3");
  EXPECT_EQ((*m)[2].super_options[1], "size=65536k");
  EXPECT_EQ((*m)[3].fstype, "cgroup2");
}

TEST(Mountinfo, GarbledLinesAreErrors) {
  EXPECT_FALSE(mountinfo("27 1 254:0 / / rw,relatime ext4 /dev/vda rw\n"));  // no separator
  EXPECT_FALSE(mountinfo("x y 254:0 / / rw - ext4 /dev/vda rw\n"));          // ids
  auto e = mountinfo("27 1 254:0 / / rw - ext4 /dev/vda rw\n1 2 3\n");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("line 2"), std::string::npos);
}

TEST(Swaps, HeaderAndDevices) {
  const auto s = swaps(
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
      "/dev/nvme0n1p3                          partition\t16777212\t1024\t\t-2\n"
      "/swap\\040file                           file\t\t1048572\t\t0\t\t-3\n");
  ASSERT_TRUE(s) << s.error().message();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].name, "/dev/nvme0n1p3");
  EXPECT_EQ((*s)[0].size_bytes, 16777212ull * 1024);
  EXPECT_EQ((*s)[0].used_bytes, 1024ull * 1024);
  EXPECT_EQ((*s)[0].priority, -2);
  EXPECT_EQ((*s)[1].name, "/swap file");
  EXPECT_TRUE(swaps("Filename Type Size Used Priority\n")->empty());
  EXPECT_FALSE(swaps("Filename Type Size Used Priority\n/dev/x partition big 0 -2\n"));
}

TEST(BracketChoice, SysfsChoiceFiles) {
  auto c = bracket_choice("always [madvise] never\n");
  EXPECT_EQ(c.selected, "madvise");
  EXPECT_EQ(c.options, (std::vector<std::string>{"always", "madvise", "never"}));
  EXPECT_EQ(bracket_choice("always defer [defer+madvise] madvise never").selected, "defer+madvise");
  EXPECT_EQ(bracket_choice("[none] mq-deadline kyber bfq").selected, "none");
  EXPECT_EQ(bracket_choice("performance").selected, "performance");
  EXPECT_FALSE(bracket_choice("a b c").selected);
  EXPECT_FALSE(bracket_choice("").selected);
}

TEST(ProcCgroup, V1V2AndGarbage) {
  const auto c = proc_cgroup(
      "9:name=systemd:/\n"
      "4:memory:/process_api/c105\n"
      "2:cpu,cpuacct:/user.slice\n"
      "0::/user.slice/user-1000.slice/session-3.scope\n");
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_EQ(c->size(), 4u);
  EXPECT_EQ((*c)[1].controllers, (std::vector<std::string>{"memory"}));
  EXPECT_EQ((*c)[1].path, "/process_api/c105");
  EXPECT_EQ((*c)[2].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ((*c)[3].hierarchy, 0);
  EXPECT_TRUE((*c)[3].controllers.empty());
  EXPECT_EQ((*c)[3].path, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_FALSE(proc_cgroup("memory:/x\n"));
  EXPECT_FALSE(proc_cgroup("a:b:c\n"));
}

TEST(CpuInfo, X86AndArm) {
  const auto x = cpuinfo(
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu avx2 avx512f amx_tile hypervisor\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu avx2 avx512f amx_tile hypervisor\n");
  EXPECT_EQ(x.processors, 2);
  EXPECT_EQ(x.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(x.vendor, "GenuineIntel");
  EXPECT_TRUE(x.hypervisor);
  EXPECT_EQ(x.flags,
            (std::vector<std::string>{"amx_tile", "avx2", "avx512f", "fpu", "hypervisor"}));
  const auto a = cpuinfo("processor : 0\nFeatures : fp asimd sve\nCPU implementer : 0x41\n");
  EXPECT_EQ(a.vendor, "0x41");
  EXPECT_FALSE(a.hypervisor);
  EXPECT_EQ(a.flags.size(), 3u);
  EXPECT_EQ(cpuinfo("").processors, 0);
}

}  // namespace proc_test

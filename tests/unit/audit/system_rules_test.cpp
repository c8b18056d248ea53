// The OS-side rules, on hand-made trees and on the fixture hosts.
#include <algorithm>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "audit/check.hpp"
#include "audit/rules.hpp"
#include "audit/system_rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/data_paths.hpp"
#include "settings/sysctl_files.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"

namespace system_rules_test {

namespace fs = std::filesystem;

using namespace dltune;
using audit::Finding;
using audit::Severity;
using settings::Expected;
using settings::ProfileEntry;

namespace {

ProfileEntry entry(std::string key, Expected::Kind kind, std::vector<std::string> values,
                   std::string severity = "warn") {
  ProfileEntry e;
  e.key = std::move(key);
  e.expected = Expected{kind, std::move(values)};
  e.severity = std::move(severity);
  e.reason = "because";
  e.source = "a test";
  return e;
}

struct Host {
  host::Root root;
  inventory::HostFacts facts;
  settings::SysctlFiles files;
  explicit Host(const host::Root& r) : root(r), facts(inventory::collect(r, {})), files(r) {}
  std::vector<Finding> run(const ProfileEntry& e, std::vector<std::string> data = {}) {
    audit::AuditInput in{facts, root, facts.os.container.has_value(), std::move(data), &files};
    const auto judge = audit::rule_for(e.key);
    EXPECT_NE(judge, nullptr) << e.key;
    return judge ? judge(in, e) : std::vector<Finding>{};
  }
};

host::Root fixture(const std::string& name) {
  return *host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + name);
}

}  // namespace

TEST(RuleTable, EveryKindOfKeyHasARuleAndUnknownKeysAreRefused) {
  for (const char* k :
       {"vm.swappiness", "net.ipv4.tcp_rmem", "kernel.numa_balancing", "thp.enabled",
        "cpu.governor", "limits.nofile", "shm.size", "mount.noatime", "block.read_ahead_kb",
        "swap.consistency", "iommu.mode", "pci.acs", "rdma.ports", "gpu.persistence"})
    EXPECT_TRUE(settings::validate_key(k).has_value()) << k;
  const auto bad = settings::validate_key("bogus.key");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("bogus.key"), std::string::npos);
  EXPECT_FALSE(settings::validate_key("vm.").has_value());
  EXPECT_FALSE(settings::validate_key("vm...etc.shadow").has_value());
}

TEST(SysctlRule, JudgesTheValueNamesTheFileAndTheBootTimeSources) {
  dltune::testing::TempTree t;
  t.write("proc/sys/vm/swappiness", "60\n")
      .write("proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n")
      .write("etc/sysctl.d/10-base.conf", "vm.swappiness = 30\n")
      .write("etc/sysctl.d/99-cloud.conf", "# cloud image\nvm/swappiness=60\n")
      .write("etc/sysctl.conf", "; nothing\n");
  Host h(t.root());
  auto f = h.run(entry("vm.swappiness", Expected::Kind::kExact, {"10"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "vm.swappiness");
  EXPECT_EQ(f[0].area, "memory");
  EXPECT_EQ(f[0].actual, "60");
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  ASSERT_TRUE(f[0].fix);
  EXPECT_EQ(f[0].fix->command, "dltune tune apply --only vm.swappiness");
  EXPECT_TRUE(f[0].fix->by_dltune);
  ASSERT_EQ(f[0].evidence.size(), 3u);
  EXPECT_EQ(f[0].evidence[0].path, "/proc/sys/vm/swappiness");
  EXPECT_EQ(f[0].evidence[1].path, "/etc/sysctl.d/10-base.conf:1");
  EXPECT_EQ(f[0].evidence[2].path, "/etc/sysctl.d/99-cloud.conf:2");
  // 99-cloud.conf sorts after 90-dltune.conf: it would undo a persisted value at boot.
  ASSERT_EQ(f[0].notes.size(), 1u);
  EXPECT_NE(f[0].notes[0].find("/etc/sysctl.d/99-cloud.conf:2"), std::string::npos);

  auto ok = h.run(entry("vm.swappiness", Expected::Kind::kExact, {"60"}));
  EXPECT_EQ(ok[0].severity, Severity::kOk);
  EXPECT_FALSE(ok[0].fix);

  auto e = entry("net.ipv4.tcp_rmem", Expected::Kind::kAtLeast, {"16777216"});
  e.field = 3;
  auto rmem = h.run(e);
  EXPECT_EQ(rmem[0].actual, "6291456");
  EXPECT_EQ(rmem[0].area, "network");
  EXPECT_EQ(rmem[0].severity, Severity::kWarn);
  EXPECT_EQ(rmem[0].evidence[0].value, "4096 131072 6291456");
}

TEST(SysctlRule, ASettingTheKernelDoesNotHaveIsNotApplicable) {
  dltune::testing::TempTree t;
  Host h(t.root());
  auto f = h.run(entry("kernel.sched_min_granularity_ns", Expected::Kind::kExact, {"1"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].applicable);
  EXPECT_EQ(f[0].severity, Severity::kOk);
  EXPECT_NE(f[0].summary.find("/proc/sys/kernel/sched_min_granularity_ns"), std::string::npos);
}

TEST(SysctlRule, InAContainerNamespacedSysctlsAreRuntimeFlagsAndTheRestTheHosts) {
  Host h(fixture("container-cgv2"));
  auto fo = h.run(entry("net.ipv4.tcp_fastopen", Expected::Kind::kExact, {"3"}));
  ASSERT_EQ(fo.size(), 1u);
  ASSERT_NE(fo[0].severity, Severity::kOk);
  EXPECT_EQ(fo[0].fix->command, "docker run --sysctl net.ipv4.tcp_fastopen=3");
  EXPECT_FALSE(fo[0].fix->by_dltune);
  auto sw = h.run(entry("vm.swappiness", Expected::Kind::kExact, {"10"}));
  ASSERT_NE(sw[0].severity, Severity::kOk);
  EXPECT_EQ(sw[0].fix->command, "on the host: dltune tune apply --only vm.swappiness");
  EXPECT_NE(sw[0].notes.back().find("the host must change it"), std::string::npos);
}

TEST(ShmRule, DockerDefaultIsCriticalWithTheRuntimeFlag) {
  Host h(fixture("container-cgv2"));
  auto e = entry("shm.size", Expected::Kind::kAtLeast, {"1073741824"});
  e.critical = Expected{Expected::Kind::kAtLeast, {"268435456"}};
  auto f = h.run(e);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[0].actual, "67108864");
  EXPECT_NE(f[0].summary.find("64 MiB"), std::string::npos);
  EXPECT_NE(f[0].fix->command.find("--shm-size=8g"), std::string::npos);
  // Half of 1 TiB of RAM on the GPU host: fine.
  Host g(fixture("gpu8-numa2-cgv2"));
  EXPECT_EQ(g.run(e)[0].severity, Severity::kOk);
  // A profile that asks for more than 8 GiB gets a fix that meets it (rounded up to whole GiB).
  auto big = entry("shm.size", Expected::Kind::kAtLeast, {"12884901889"});  // 12 GiB + 1
  EXPECT_NE(h.run(big)[0].fix->command.find("--shm-size=13g"), std::string::npos);
  const auto host_fix = g.run(entry("shm.size", Expected::Kind::kAtLeast, {"1099511627776000"}));
  ASSERT_TRUE(host_fix[0].fix);
  EXPECT_EQ(host_fix[0].fix->command,
            "mount -o remount,size=1024000G /dev/shm  (and the same size= in /etc/fstab)");
}

TEST(LimitRule, SoftAndHardBothCount) {
  Host h(fixture("gpu8-numa2-cgv2"));  // nofile 1024 / 1048576, memlock unlimited
  auto f = h.run(entry("limits.nofile", Expected::Kind::kAtLeast, {"65536"}));
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_EQ(f[0].actual, "soft 1024, hard 1048576");
  EXPECT_EQ(f[0].evidence[0].path, "/proc/self/limits");
  auto m = h.run(entry("limits.memlock", Expected::Kind::kExact, {"unlimited"}, "critical"));
  EXPECT_EQ(m[0].severity, Severity::kOk);
  Host c(fixture("container-cgv2"));  // memlock 64 KiB
  auto cm = c.run(entry("limits.memlock", Expected::Kind::kExact, {"unlimited"}, "critical"));
  EXPECT_EQ(cm[0].severity, Severity::kCritical);
  EXPECT_EQ(cm[0].fix->command, "docker run --ulimit memlock=-1");
  // Bytes read in units; the numbers stay in actual, for scripts.
  EXPECT_EQ(cm[0].summary,
            "limits.memlock is soft 64 KiB, hard 64 KiB, expected unlimited for both");
  EXPECT_EQ(cm[0].actual, "soft 65536, hard 65536");
  auto atleast = c.run(entry("limits.memlock", Expected::Kind::kAtLeast, {"1073741824"}));
  EXPECT_EQ(atleast[0].summary,
            "limits.memlock is soft 64 KiB, hard 64 KiB, expected >= 1 GiB for both");
  // A count stays a count.
  EXPECT_EQ(h.run(entry("limits.nofile", Expected::Kind::kAtLeast, {"65536"}))[0].summary,
            "limits.nofile is soft 1024, hard 1048576, expected >= 65536 for both");
}

TEST(GovernorRule, MixedGovernorsAndNoCpufreq) {
  Host h(fixture("gpu8-numa2-cgv2"));
  auto f = h.run(entry("cpu.governor", Expected::Kind::kExact, {"performance"}));
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].actual.find("powersave on CPUs 16-31"), std::string::npos);
  Host c(fixture("container-cgv2"));
  auto n = c.run(entry("cpu.governor", Expected::Kind::kExact, {"performance"}));
  EXPECT_FALSE(n[0].applicable);
}

// intel_pstate's preference on four CPUs, two on balance_performance: grouped, with the tune
// command; a preference the driver does not offer is the profile's to change; without the file
// (no such driver) not applicable, naming the driver there is.
TEST(EppRule, GroupedPreferencesWhatTheDriverOffersAndNoDriver) {
  dltune::testing::TempTree t;
  t.write("sys/devices/system/cpu/online", "0-3\n");
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string d = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/";
    t.write(d + "scaling_driver", "intel_pstate\n")
        .write(d + "energy_performance_preference",
               cpu < 2 ? "balance_performance\n" : "performance\n")
        .write(d + "energy_performance_available_preferences",
               "default performance balance_performance balance_power power\n");
  }
  Host h(t.root());
  auto f = h.run(entry("cpu.epp", Expected::Kind::kExact, {"performance"}, "info"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(f[0].actual, "balance_performance on CPUs 0-1, performance on CPUs 2-3");
  EXPECT_EQ(f[0].summary,
            "cpu.epp is balance_performance on CPUs 0-1, performance on CPUs 2-3, expected "
            "performance");
  ASSERT_TRUE(f[0].fix);
  EXPECT_NE(f[0].fix->command.find("dltune tune apply --only cpu.epp"), std::string::npos)
      << f[0].fix->command;
  ASSERT_FALSE(f[0].evidence.empty());
  EXPECT_EQ(f[0].evidence[0].path,
            "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference");
  auto odd = h.run(entry("cpu.epp", Expected::Kind::kExact, {"turbo"}, "info"));
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_NE(odd[0].summary.find("which this host does not offer"), std::string::npos)
      << odd[0].summary;
  ASSERT_TRUE(odd[0].fix);
  EXPECT_NE(odd[0].fix->command.find("in the profile"), std::string::npos);

  dltune::testing::TempTree v;
  v.write("sys/devices/system/cpu/online", "0\n")
      .write("sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", "acpi-cpufreq\n")
      .write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "schedutil\n");
  Host n(v.root());
  auto na = n.run(entry("cpu.epp", Expected::Kind::kExact, {"performance"}, "info"));
  ASSERT_EQ(na.size(), 1u);
  EXPECT_FALSE(na[0].applicable);
  EXPECT_NE(na[0].summary.find("the cpufreq driver is acpi-cpufreq"), std::string::npos)
      << na[0].summary;

  // Intel's energy_perf_bias: evidence beside a preference; without one, a bias that leans to
  // saving power is the finding (info) and one that does not changes nothing.
  v.write("sys/devices/system/cpu/cpu0/power/energy_perf_bias", "15\n");
  Host b(v.root());
  auto bias = b.run(entry("cpu.epp", Expected::Kind::kExact, {"performance"}, "info"));
  ASSERT_EQ(bias.size(), 1u);
  EXPECT_TRUE(bias[0].applicable);
  EXPECT_EQ(bias[0].severity, Severity::kInfo);
  EXPECT_EQ(bias[0].actual, "energy_perf_bias 15 (power) on CPUs 0");
  EXPECT_EQ(bias[0].evidence[0].path, "/sys/devices/system/cpu/cpu0/power/energy_perf_bias");
  ASSERT_FALSE(bias[0].notes.empty());
  EXPECT_NE(bias[0].notes[0].find("intel_epb.rst"), std::string::npos);
  v.write("sys/devices/system/cpu/cpu0/power/energy_perf_bias", "6\n");
  Host normal(v.root());
  EXPECT_FALSE(
      normal.run(entry("cpu.epp", Expected::Kind::kExact, {"performance"}, "info"))[0].applicable);
  t.write("sys/devices/system/cpu/cpu1/power/energy_perf_bias", "8\n");
  Host mixed(t.root());
  auto beside = mixed.run(entry("cpu.epp", Expected::Kind::kExact, {"performance"}, "info"));
  ASSERT_EQ(beside.size(), 1u);
  EXPECT_EQ(beside[0].evidence.back().value, "8 (balance-power) (CPUs 1)");
  ASSERT_FALSE(beside[0].notes.empty());
  EXPECT_NE(beside[0].notes.back().find("8 (balance-power) on CPUs 1"), std::string::npos)
      << beside[0].notes.back();
}

// The storage under the data: an NFS mount with one connection and 64 KiB reads, one with
// nconnect and 1 MiB reads, a hard disk, an SSD mounted with discard, an NVMe drive; then what
// trims the SSDs (nothing, a cron job, fstrim.timer).
namespace {

dltune::testing::TempTree& storage_host(dltune::testing::TempTree& t) {
  t.write("proc/self/mountinfo",
          "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
          "23 22 8:17 / /hdd rw,relatime - ext4 /dev/sdb1 rw\n"
          "24 22 8:33 / /ssd rw,relatime - xfs /dev/sdc1 rw,discard\n"
          "25 22 259:1 / /nvme rw,noatime - ext4 /dev/nvme0n1p1 rw\n"
          "26 22 0:50 / /nfs1 rw,relatime - nfs4 srv:/data rw,vers=4.2,rsize=65536,wsize=65536\n"
          "27 22 0:51 / /nfs2 rw,relatime - nfs4 srv:/data rw,vers=4.2,rsize=1048576,"
          "wsize=1048576,nconnect=8\n"
          "28 22 252:1 / /vm rw,relatime - ext4 /dev/vda1 rw\n");
  for (const auto& [part, disk, rotational] : {std::tuple{"sda1", "sda", "0"},
                                               {"sdb1", "sdb", "1"},
                                               {"sdc1", "sdc", "0"},
                                               {"nvme0n1p1", "nvme0n1", "0"},
                                               {"vda1", "vda", "1"}}) {
    const std::string dir = std::string("sys/devices/pci0/block/") + disk;
    t.link(std::string("sys/class/block/") + part,
           std::string("../../devices/pci0/block/") + disk + "/" + part)
        .write(dir + "/" + part + "/partition", "1\n")
        .link(std::string("sys/block/") + disk, std::string("../devices/pci0/block/") + disk)
        .write(dir + "/queue/rotational", std::string(rotational) + "\n")
        .write(std::string("dev/") + part, "");
  }
  return t;
}

std::map<std::string, const Finding*> by_mount(const std::vector<Finding>& fs) {
  std::map<std::string, const Finding*> out;
  for (const auto& f : fs) out[f.actual.substr(0, f.actual.find_first_of(" :"))] = &f;
  return out;
}

}  // namespace

TEST(StorageRules, WhatHoldsTheDataAndWhatToDoAboutIt) {
  dltune::testing::TempTree t;
  Host h(storage_host(t).root());
  const auto fs = h.run(entry("storage.data_device", Expected::Kind::kExact, {"true"}, "info"),
                        {"/hdd", "/ssd", "/nvme", "/nfs1", "/nfs2", "/vm"});
  ASSERT_EQ(fs.size(), 6u);
  auto m = by_mount(fs);
  ASSERT_TRUE(m.count("/hdd") && m.count("/nfs1") && m.count("/nfs2") && m.count("/nvme"))
      << ::testing::PrintToString(m.size());
  EXPECT_EQ(m["/hdd"]->severity, Severity::kInfo);
  EXPECT_NE(m["/hdd"]->summary.find("rotational disk"), std::string::npos) << m["/hdd"]->summary;
  ASSERT_TRUE(m["/hdd"]->fix);
  EXPECT_NE(m["/hdd"]->fix->command.find("stage the dataset"), std::string::npos);
  EXPECT_EQ(m["/nfs1"]->severity, Severity::kInfo);
  ASSERT_TRUE(m["/nfs1"]->fix);
  EXPECT_NE(m["/nfs1"]->fix->command.find("nconnect=8"), std::string::npos);
  EXPECT_NE(m["/nfs1"]->fix->command.find("rsize=1048576 (reads of 64 KiB now"), std::string::npos)
      << m["/nfs1"]->fix->command;
  EXPECT_EQ(m["/nfs2"]->severity, Severity::kOk) << m["/nfs2"]->summary;
  EXPECT_EQ(m["/nvme"]->severity, Severity::kOk) << m["/nvme"]->summary;
  EXPECT_EQ(m["/ssd"]->severity, Severity::kOk) << m["/ssd"]->summary;
  // A virtio disk reads rotational 1 whatever is under it: not judged a hard disk.
  EXPECT_EQ(m["/vm"]->severity, Severity::kOk) << m["/vm"]->summary;
  EXPECT_NE(m["/vm"]->summary.find("a virtual disk"), std::string::npos);

  // Trim: SSDs only (the hard disk and NFS are not judged).
  const auto trim_entry = entry("storage.trim", Expected::Kind::kExact, {"true"}, "info");
  auto tr = h.run(trim_entry, {"/hdd", "/ssd", "/nvme", "/nfs1"});
  ASSERT_EQ(tr.size(), 2u);
  m = by_mount(tr);
  EXPECT_EQ(m["/ssd"]->severity, Severity::kInfo);
  EXPECT_NE(m["/ssd"]->summary.find("mounted with discard"), std::string::npos);
  EXPECT_EQ(m["/nvme"]->severity, Severity::kInfo);
  EXPECT_NE(m["/nvme"]->summary.find("nothing trims /nvme"), std::string::npos)
      << m["/nvme"]->summary;
  ASSERT_TRUE(m["/nvme"]->fix);
  EXPECT_NE(m["/nvme"]->fix->command.find("fstrim.timer"), std::string::npos);
  // A weekly cron job: /nvme is trimmed; /ssd's discard is still said.
  t.write("etc/cron.weekly/fstrim", "#!/bin/sh\nexec fstrim --all\n");
  Host cron(t.root());
  m = by_mount(tr = cron.run(trim_entry, {"/ssd", "/nvme"}));
  EXPECT_EQ(m["/nvme"]->severity, Severity::kOk) << m["/nvme"]->summary;
  EXPECT_NE(m["/nvme"]->summary.find("/etc/cron.weekly/fstrim"), std::string::npos);
  EXPECT_EQ(m["/ssd"]->severity, Severity::kInfo);
  // Only hard disks under the data: nothing to judge.
  const auto none = cron.run(trim_entry, {"/hdd"});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].applicable);
}

// What building extensions needs, on a tree with the files and facts made by hand: everything
// there; then no ninja and no Python headers (the packages named); then a CUDA toolkit whose
// nvcc accepts GCC up to 12 while g++ is 13 (an older g++ installed: said in the note).
TEST(BuildRules, ToolchainForExtensionsWithTheRightPackages) {
  dltune::testing::TempTree t;
  t.write("usr/lib/gcc/x86_64-linux-gnu/13/cc1plus", "")
      .write("usr/bin/g++-13", "")
      .link("usr/bin/g++", "g++-13")
      .write("usr/include/python3.12/Python.h", "")
      .write("usr/bin/ninja", "");
  auto root = t.root();
  inventory::HostFacts facts;
  inventory::Interpreter py;
  py.path = "/usr/bin/python3";
  py.prefix = "/usr";
  py.source = "PATH";
  py.version = "3.12.3";
  py.torch = inventory::TorchFacts{};
  facts.python.interpreters.push_back(py);
  const auto e = entry("build.toolchain", Expected::Kind::kExact, {"true"}, "info");
  const auto run = [&] {
    settings::SysctlFiles files(root);
    audit::AuditInput in{facts, root, false, {}, &files};
    return audit::rule_for("build.toolchain")(in, e);
  };
  auto f = run();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kOk) << f[0].summary;
  EXPECT_EQ(f[0].actual, "g++ 13, Python.h 3.12, ninja");

  fs::remove(t.dir() / "usr/bin/ninja");
  fs::remove(t.dir() / "usr/include/python3.12/Python.h");
  f = run();
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  ASSERT_TRUE(f[0].fix);
  EXPECT_EQ(f[0].fix->command, "apt-get install ninja-build python3.12-dev");
  EXPECT_NE(f[0].summary.find("the headers of Python 3.12 (/usr/bin/python3)"), std::string::npos)
      << f[0].summary;

  t.write("usr/include/python3.12/Python.h", "").write("usr/bin/ninja", "");
  t.write("usr/local/cuda-12.2/bin/nvcc", "")
      .write("usr/local/cuda-12.2/include/crt/host_config.h",
             "#if defined(__GNUC__)\n#if __GNUC__ < 6\n#error -- old\n#endif\n"
             "#if __GNUC__ > 12\n#error -- unsupported GNU version! gcc versions later than 12 "
             "are not supported!\n#endif\n#endif\n")
      .write("usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", "");
  inventory::Toolkit tk;
  tk.path = "/usr/local/cuda-12.2";
  tk.version = "12.2.140";
  tk.nvcc = "/usr/local/cuda-12.2/bin/nvcc";
  facts.cuda.toolkits.push_back(tk);
  f = run();
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_NE(f[0].summary.find("a g++ that CUDA 12.2.140's nvcc accepts (up to 12; g++ is 13)"),
            std::string::npos)
      << f[0].summary;
  ASSERT_TRUE(f[0].fix);
  EXPECT_EQ(f[0].fix->command, "apt-get install g++-12");
  ASSERT_EQ(f[0].notes.size(), 1u);
  EXPECT_NE(f[0].notes[0].find("an older g++ is installed"), std::string::npos);
  EXPECT_NE(f[0].notes[0].find("CXX=g++-12"), std::string::npos);

  // A conda Python's headers come with its own python package, not apt's.
  inventory::Interpreter conda;
  conda.path = "/opt/conda/bin/python";
  conda.prefix = "/opt/conda";
  conda.source = "conda";
  conda.version = "3.11.9";
  conda.torch = inventory::TorchFacts{};
  facts.python.interpreters.push_back(conda);
  facts.cuda.toolkits.clear();
  f = run();
  ASSERT_TRUE(f[0].fix);
  EXPECT_EQ(f[0].fix->command, "conda install python=3.11 (in /opt/conda)");

  // No Python with torch: nothing to build.
  facts.python.interpreters.clear();
  EXPECT_FALSE(run()[0].applicable);
}

// The system's libblas.so.3: the reference BLAS is info with the package; OpenBLAS installed but
// not selected: update-alternatives; OpenBLAS selected: ok; none: not applicable.
TEST(BuildRules, TheBlasTheSystemsLibblasLeadsTo) {
  dltune::testing::TempTree t;
  auto root = t.root();
  inventory::HostFacts facts;
  const auto e = entry("blas.library", Expected::Kind::kExact, {"true"}, "info");
  const auto run = [&] {
    settings::SysctlFiles files(root);
    audit::AuditInput in{facts, root, false, {}, &files};
    return audit::rule_for("blas.library")(in, e);
  };
  EXPECT_FALSE(run()[0].applicable);
  inventory::BlasFinding ref;
  ref.name = "reference BLAS";
  ref.path = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0";
  ref.selected_as = "/usr/lib/x86_64-linux-gnu/libblas.so.3";
  facts.cuda.blas.push_back(ref);
  auto f = run();
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  ASSERT_TRUE(f[0].fix);
  EXPECT_NE(f[0].fix->command.find("apt-get install libopenblas0-pthread"), std::string::npos);
  inventory::BlasFinding open;
  open.name = "OpenBLAS";
  open.path = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";
  facts.cuda.blas.push_back(open);
  f = run();
  ASSERT_TRUE(f[0].fix);
  EXPECT_NE(f[0].fix->command.find("update-alternatives --config libblas.so.3"), std::string::npos);
  facts.cuda.blas[0].selected_as.reset();
  facts.cuda.blas[1].selected_as = "/usr/lib/x86_64-linux-gnu/libblas.so.3";
  f = run();
  EXPECT_EQ(f[0].severity, Severity::kOk);
  EXPECT_EQ(f[0].actual, "OpenBLAS as /usr/lib/x86_64-linux-gnu/libblas.so.3");
}

// The kernel's own list decides: a value the host's file does not offer is not something tune
// can set, so check says so and points at the profile, not at tune.
TEST(GovernorRule, AGovernorTheCpuDoesNotOfferIsTheProfilesToChange) {
  dltune::testing::TempTree t;
  t.write("sys/devices/system/cpu/online", "0-1\n");
  for (const char* cpu : {"cpu0", "cpu1"}) {
    const std::string d = std::string("sys/devices/system/cpu/") + cpu + "/cpufreq/";
    t.write(d + "scaling_governor", "powersave\n")
        .write(d + "scaling_available_governors", "powersave schedutil\n");
  }
  Host h(t.root());
  ASSERT_EQ(h.facts.cpu.available_governors, (std::vector<std::string>{"powersave", "schedutil"}));
  auto f = h.run(entry("cpu.governor", Expected::Kind::kExact, {"performance"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].summary.find("does not offer"), std::string::npos) << f[0].summary;
  ASSERT_TRUE(f[0].fix);
  EXPECT_FALSE(f[0].fix->by_dltune);
  EXPECT_EQ(f[0].fix->command,
            "choose one of powersave, schedutil for cpu.governor in the profile");
  EXPECT_EQ(f[0].evidence.at(0).path,
            "/sys/devices/system/cpu/cpu*/cpufreq/scaling_available_governors");
  // One of the profile's choices is offered: judged as before, with tune's fix.
  auto ok = h.run(entry("cpu.governor", Expected::Kind::kOneOf, {"performance", "schedutil"}));
  EXPECT_EQ(ok[0].severity, Severity::kWarn);
  EXPECT_TRUE(ok[0].fix->by_dltune);
  // What the host already runs needs nothing, offered or not.
  EXPECT_EQ(h.run(entry("cpu.governor", Expected::Kind::kExact, {"powersave"}))[0].severity,
            Severity::kOk);
}

TEST(ThpRule, AValueMissingFromTheKernelsListIsTheProfilesToChange) {
  dltune::testing::TempTree t;
  t.write("sys/kernel/mm/transparent_hugepage/enabled", "[always] never\n");  // no madvise
  Host h(t.root());
  auto f = h.run(entry("thp.enabled", Expected::Kind::kExact, {"madvise"}));
  EXPECT_EQ(f.at(0).severity, Severity::kWarn);
  EXPECT_EQ(f[0].fix->command, "choose one of always, never for thp.enabled in the profile");
  EXPECT_NE(
      f[0].notes.back().find("/sys/kernel/mm/transparent_hugepage/enabled allows always, never"),
      std::string::npos)
      << f[0].notes.back();
}

TEST(NoatimeRule, OneFindingPerFileSystemHoldingData) {
  Host h(fixture("gpu8-numa2-cgv2"));
  auto e = entry("mount.noatime", Expected::Kind::kExact, {"true"});
  auto f = h.run(e, {"/data/imagenet", "/datasets", "/"});
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].severity, Severity::kOk);  // /data is xfs noatime
  EXPECT_NE(f[0].summary.find("/data"), std::string::npos);
  EXPECT_NE(f[1].summary.find("/datasets"), std::string::npos);
  EXPECT_NE(f[1].severity, Severity::kOk);
  EXPECT_NE(f[2].severity, Severity::kOk);
  // Default paths: / and /home (both on the root file system: one finding), then the data
  // mounts in mount order; /boot, /boot/efi, /dev/shm and /run/user/1000 are not data.
  const auto d = h.run(e);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].evidence.at(0).value.substr(0, 7), "/ ext4 ");
  EXPECT_EQ(d[1].evidence.at(0).value.substr(0, 10), "/data xfs ");
  EXPECT_EQ(d[1].severity, Severity::kOk);
  EXPECT_EQ(d[2].evidence.at(0).value.substr(0, 14), "/archive ext4 ");
  EXPECT_EQ(d[3].evidence.at(0).value.substr(0, 15), "/datasets nfs4 ");
  // tune's own default covers /, so its fix needs no --data; it does not cover /archive.
  ASSERT_TRUE(d[0].fix);
  EXPECT_EQ(d[0].fix->command, "dltune tune apply --only mount.noatime --persist");
  ASSERT_TRUE(d[2].fix);
  EXPECT_EQ(d[2].fix->command, "dltune tune apply --only mount.noatime --data /archive --persist");
  // --data wins over the default.
  EXPECT_EQ(h.run(e, {"/"}).size(), 1u);
}

// The default data paths on the other fixture hosts: a container's bind mount of a project is
// data, its /etc/hosts and /usr/bin/nvidia-smi binds are not; a 4 KiB tmpfs under /mnt is not.
TEST(NoatimeRule, TheDefaultCoversTheDataMountsOfEachFixture) {
  Host c(fixture("container-cgv2"));
  EXPECT_EQ(settings::data_mounts(c.facts.storage), (std::vector<std::string>{"/workspace"}));
  const auto f = c.run(entry("mount.noatime", Expected::Kind::kExact, {"true"}));
  ASSERT_EQ(f.size(), 2u);  // / (overlay) and /workspace
  EXPECT_NE(f[1].summary.find("/workspace (ext4)"), std::string::npos) << f[1].summary;
  ASSERT_TRUE(f[1].fix);
  EXPECT_EQ(f[1].fix->command, "on the host: dltune tune apply --only mount.noatime");
  Host v(fixture("this-vm"));
  EXPECT_TRUE(settings::data_mounts(v.facts.storage).empty());
  EXPECT_EQ(v.run(entry("mount.noatime", Expected::Kind::kExact, {"true"})).size(), 1u);
}

TEST(NoatimeRule, TheFixIsTuneAndNamesTheDataPathWhenGiven) {
  Host h(fixture("gpu8-numa2-cgv2"));
  auto e = entry("mount.noatime", Expected::Kind::kExact, {"true"});
  auto f = h.run(e, {"/datasets"});
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f[0].fix);
  EXPECT_EQ(f[0].fix->command, "dltune tune apply --only mount.noatime --data /datasets --persist");
  EXPECT_TRUE(f[0].fix->by_dltune);
}

// A host tree with / on a partition of sda and /data on a device-mapper volume.
void disks(dltune::testing::TempTree& t, const std::string& sda_kb, const std::string& dm_kb) {
  t.write("proc/self/mountinfo",
          "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
          "23 22 253:0 / /data rw,noatime - xfs /dev/mapper/vg-data rw\n"
          "24 22 0:5 / /scratch rw - tmpfs tmpfs rw,size=1g\n")
      .link("dev/mapper/vg-data", "../dm-0")
      .write("dev/dm-0", "")
      .write("dev/sda1", "")
      .link("sys/class/block/sda1", "../../devices/pci0/block/sda/sda1")
      .write("sys/devices/pci0/block/sda/sda1/partition", "1\n")
      .link("sys/class/block/dm-0", "../../devices/virtual/block/dm-0")
      .mkdir("sys/devices/virtual/block/dm-0")
      .link("sys/block/sda", "../devices/pci0/block/sda")
      .link("sys/block/dm-0", "../devices/virtual/block/dm-0")
      .write("sys/devices/pci0/block/sda/queue/read_ahead_kb", sda_kb + "\n")
      .write("sys/devices/virtual/block/dm-0/queue/read_ahead_kb", dm_kb + "\n");
}

TEST(DataPaths, PartitionsAndMapperVolumesResolveToTheirDisks) {
  dltune::testing::TempTree t;
  disks(t, "128", "4096");
  const auto root = t.root();
  EXPECT_EQ(settings::disk_of(root, "/dev/sda1"), "sda");
  EXPECT_EQ(settings::disk_of(root, "/dev/mapper/vg-data"), "dm-0");
  EXPECT_EQ(settings::disk_of(root, "tmpfs"), std::nullopt);
  EXPECT_EQ(settings::disk_of(root, "/dev/nvme9n1"), std::nullopt);  // not in this tree
  const auto facts = inventory::collect(root, {});
  const auto fs = settings::data_file_systems(root, facts, {"/data/x", "/home", "/", "/scratch"});
  ASSERT_EQ(fs.size(), 3u);  // /home and / share the root file system
  EXPECT_EQ(fs[0].fs->mount_point, "/data");
  EXPECT_EQ(fs[0].disk, "dm-0");
  EXPECT_EQ(fs[1].fs->mount_point, "/");
  EXPECT_EQ(fs[1].path, "/home");
  EXPECT_EQ(fs[1].disk, "sda");
  EXPECT_EQ(fs[2].disk, std::nullopt);
}

TEST(ReadAheadRule, OneFindingPerDiskUnderTheData) {
  dltune::testing::TempTree t;
  disks(t, "16", "4096");
  Host h(t.root());
  auto e = entry("block.read_ahead_kb", Expected::Kind::kAtLeast, {"128"}, "info");
  auto f = h.run(e, {"/data", "/", "/scratch"});
  ASSERT_EQ(f.size(), 2u);  // tmpfs has no disk
  EXPECT_EQ(f[0].severity, Severity::kOk);
  EXPECT_EQ(f[0].actual, "4096");
  EXPECT_EQ(f[0].evidence[0].path, "/sys/block/dm-0/queue/read_ahead_kb");
  EXPECT_EQ(f[1].severity, Severity::kInfo);
  EXPECT_EQ(f[1].actual, "16");
  EXPECT_NE(f[1].summary.find("sda"), std::string::npos);
  ASSERT_TRUE(f[1].fix);
  EXPECT_EQ(f[1].fix->command, "dltune tune apply --only block.read_ahead_kb --data / --persist");
  // Only tmpfs: nothing to judge.
  auto none = h.run(e, {"/scratch"});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].applicable);
}

TEST(SwapRule, ConsistentWithoutSwapAndWithLowSwappiness) {
  Host h(fixture("gpu8-numa2-cgv2"));  // no swap
  auto e = entry("swap.consistency", Expected::Kind::kExact, {"true"});
  EXPECT_EQ(h.run(e)[0].severity, Severity::kOk);
  Host c(fixture("container-cgv2"));  // a swap file, swappiness 60
  auto f = c.run(e);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].summary.find("swappiness 60"), std::string::npos);
}

TEST(IommuRule, PassthroughOnTheGpuHost) {
  Host h(fixture("gpu8-numa2-cgv2"));  // intel_iommu=on iommu=pt
  auto f = h.run(entry("iommu.mode", Expected::Kind::kOneOf, {"pt", "off"}));
  EXPECT_EQ(f[0].actual, "pt");
  EXPECT_EQ(f[0].severity, Severity::kOk);
  dltune::testing::TempTree t;
  t.write("proc/cmdline", "root=/dev/sda1 intel_iommu=on\n");
  Host on(t.root());
  auto g = on.run(entry("iommu.mode", Expected::Kind::kOneOf, {"pt", "off"}));
  EXPECT_EQ(g[0].actual, "on");
  EXPECT_EQ(g[0].severity, Severity::kWarn);
  EXPECT_NE(g[0].fix->command.find("iommu=pt"), std::string::npos);
}

TEST(RdmaRule, EveryPortUpOrNotApplicable) {
  Host h(fixture("gpu8-numa2-cgv2"));
  auto f = h.run(entry("rdma.ports", Expected::Kind::kExact, {"ACTIVE"}));
  EXPECT_EQ(f.size(), 5u);
  for (const auto& x : f) EXPECT_EQ(x.severity, Severity::kOk) << x.summary;
  dltune::testing::TempTree t;
  t.write("sys/class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n")
      .write("sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
  Host d(t.root());
  auto down = d.run(entry("rdma.ports", Expected::Kind::kExact, {"ACTIVE"}));
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].severity, Severity::kWarn);
  EXPECT_NE(down[0].summary.find("mlx5_0 port 1"), std::string::npos);
  Host c(fixture("container-cgv2"));
  EXPECT_FALSE(c.run(entry("rdma.ports", Expected::Kind::kExact, {"ACTIVE"}))[0].applicable);
}

TEST(AcsRule, ParsesTheExtendedCapabilityChain) {
  std::string config(4096, '\0');
  auto put32 = [&](std::size_t off, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
      config[off + static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * i));
  };
  put32(0x100, 0x0001u | (1u << 16) | (0x148u << 20));  // AER, next at 0x148
  put32(0x148, 0x000du | (1u << 16));                   // ACS, last
  config[0x14e] = 0x1d;                                 // SV, RR, CR, UF
  ASSERT_EQ(audit::acs_control(config), 0x1d);
  EXPECT_FALSE(audit::acs_control(std::string(64, '\0')));  // only the legacy header readable
  put32(0x148, 0x000bu | (1u << 16));                       // no ACS in the chain
  EXPECT_FALSE(audit::acs_control(config));
  put32(0x100, 0x0001u | (0x100u << 20));  // a loop ends, not hangs
  EXPECT_FALSE(audit::acs_control(config));

  dltune::testing::TempTree t;
  std::string bridge(4096, '\0');
  for (int i = 0; i < 4; ++i)
    bridge[0x100 + static_cast<std::size_t>(i)] =
        static_cast<char>((0x000du | (1u << 16)) >> (8 * i));
  bridge[0x106] = 0x1c;
  t.write("sys/devices/pci0000:00/0000:00:01.0/class", "0x060400\n")
      .write("sys/devices/pci0000:00/0000:00:01.0/config", bridge)
      .link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  Host h(t.root());
  auto f = h.run(entry("pci.acs", Expected::Kind::kExact, {"disabled"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_EQ(f[0].actual, "enabled");
  EXPECT_NE(f[0].fix->command.find("0000:00:01.0"), std::string::npos);
}

// An Apptainer container on a Slurm node, as dltune sees it from inside: Apptainer's variables
// (its user guide, "Environment and Metadata"), the SIF's squashfs as /, the host's /dev and
// /dev/shm bound in ("Bind Paths and Mounts"), a Lustre scratch, and the limits of the job.
void apptainer_tree(dltune::testing::TempTree& t) {
  t.write("run/dltune/capture/environ.json",
          "{\"APPTAINER_CONTAINER\": \"/scratch/images/pytorch.sif\", "
          "\"APPTAINER_NAME\": \"pytorch.sif\", "
          "\"SINGULARITY_CONTAINER\": \"/scratch/images/pytorch.sif\", "
          "\"SINGULARITY_NAME\": \"pytorch.sif\"}\n")
      .write("proc/self/mountinfo",
             "700 650 7:1 / / ro,nosuid,nodev,relatime - squashfs /dev/loop1 ro,errors=continue\n"
             "701 700 0:5 / /dev rw,nosuid,relatime - devtmpfs udev rw,size=65536k,mode=755\n"
             "702 701 0:26 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,size=65536k,inode64\n"
             "703 700 0:23 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
             "704 700 0:58 / /scratch rw,relatime - lustre 10.1.0.5@o2ib:/scratch rw,flock\n")
      .write("proc/self/limits",
             "Limit                     Soft Limit           Hard Limit           Units     \n"
             "Max open files            65536                65536                files     \n"
             "Max locked memory         65536                65536                bytes     \n")
      .write("proc/sys/net/ipv4/tcp_fastopen", "1\n");
}

TEST(ContainerAdvice, ApptainerFixesAreTheHostsInApptainersTerms) {
  dltune::testing::TempTree t;
  apptainer_tree(t);
  Host h(t.root());
  ASSERT_EQ(h.facts.os.container, "apptainer");
  auto has_note = [](const Finding& f, const std::string& part) {
    return std::any_of(f.notes.begin(), f.notes.end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
  };

  // /dev/shm is the host's: no --shm-size, the host's remount.
  auto shm = h.run(entry("shm.size", Expected::Kind::kAtLeast, {"1073741824"}));
  ASSERT_EQ(shm.size(), 1u);
  ASSERT_NE(shm[0].severity, Severity::kOk);
  ASSERT_TRUE(shm[0].fix);
  EXPECT_EQ(shm[0].fix->command,
            "on the host: mount -o remount,size=8G /dev/shm  (and the same size= in /etc/fstab)");
  EXPECT_FALSE(shm[0].fix->by_dltune);
  EXPECT_TRUE(has_note(shm[0], "Apptainer binds the host's /dev/shm")) << shm[0].notes.back();

  // Limits come from the host or the Slurm job: no --ulimit; tune's command kept whole.
  auto memlock = h.run(entry("limits.memlock", Expected::Kind::kExact, {"unlimited"}, "critical"));
  ASSERT_EQ(memlock.size(), 1u);
  ASSERT_TRUE(memlock[0].fix);
  EXPECT_EQ(memlock[0].fix->command,
            "on the host: dltune tune apply --persist --only limits.memlock");
  EXPECT_EQ(memlock[0].fix->command.find("--ulimit"), std::string::npos);
  EXPECT_TRUE(has_note(memlock[0], "PropagateResourceLimits")) << memlock[0].notes.back();

  // The network namespace is the host's unless --net: no --sysctl.
  auto fo = h.run(entry("net.ipv4.tcp_fastopen", Expected::Kind::kExact, {"3"}));
  ASSERT_EQ(fo.size(), 1u);
  ASSERT_TRUE(fo[0].fix);
  EXPECT_EQ(fo[0].fix->command, "on the host: dltune tune apply --only net.ipv4.tcp_fastopen");
  EXPECT_TRUE(has_note(fo[0], "unless started with --net")) << fo[0].notes.back();

  // The Lustre scratch is a data mount by default; bound in with --bind, it is the host's mount.
  auto noatime = h.run(entry("mount.noatime", Expected::Kind::kExact, {"true"}));
  ASSERT_EQ(noatime.size(), 2u);  // / (the image) and /scratch
  EXPECT_NE(noatime[1].summary.find("/scratch (lustre)"), std::string::npos) << noatime[1].summary;
  ASSERT_TRUE(noatime[1].fix);
  EXPECT_EQ(noatime[1].fix->command,
            "on the host: dltune tune apply --only mount.noatime --data /scratch --persist");
  EXPECT_TRUE(has_note(noatime[1], "--bind")) << noatime[1].notes.back();
}

// Docker's terms stay Docker's: the same tree as Docker makes it (/.dockerenv, an overlay root),
// without Apptainer's variables.
TEST(ContainerAdvice, DockerKeepsItsRuntimeFlags) {
  dltune::testing::TempTree t;
  apptainer_tree(t);
  t.write("run/dltune/capture/environ.json", "{}\n")
      .write(".dockerenv", "")
      .write(
          "proc/self/mountinfo",
          "700 650 0:93 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
          "702 700 0:26 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=65536k,inode64\n");
  Host h(t.root());
  ASSERT_EQ(h.facts.os.container, "docker");
  auto shm = h.run(entry("shm.size", Expected::Kind::kAtLeast, {"1073741824"}));
  ASSERT_TRUE(shm.at(0).fix);
  EXPECT_NE(shm[0].fix->command.find("docker run --shm-size=8g"), std::string::npos);
  auto memlock = h.run(entry("limits.memlock", Expected::Kind::kExact, {"unlimited"}));
  ASSERT_TRUE(memlock.at(0).fix);
  EXPECT_EQ(memlock[0].fix->command, "docker run --ulimit memlock=-1");
}

// cpu.latency_us: the deepest idle state that is not disabled, against the latency `run` holds.
TEST(CpuLatencyRule, TheDeepestEnabledIdleStateAgainstTheProfilesLatency) {
  dltune::testing::TempTree t;
  const std::string d = "sys/devices/system/cpu/cpu0/cpuidle/";
  for (const auto& [i, name, latency, disable] : {std::tuple{0, "POLL", "0", "0"},
                                                  {1, "C1", "2", "0"},
                                                  {2, "C1E", "10", "0"},
                                                  {3, "C6", "133", "0"},
                                                  {4, "C10", "890", "1"}})
    t.write(d + "state" + std::to_string(i) + "/name", std::string(name) + "\n")
        .write(d + "state" + std::to_string(i) + "/latency", std::string(latency) + "\n")
        .write(d + "state" + std::to_string(i) + "/disable", std::string(disable) + "\n");
  Host h(t.root());
  auto f = h.run(entry("cpu.latency_us", Expected::Kind::kExact, {"10"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].area, "cpu");
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(f[0].actual, "133 µs (C6)");  // C10 is disabled
  EXPECT_EQ(f[0].summary,
            "the deepest CPU idle state, C6, takes 133 µs to wake, above cpu.latency_us 10: "
            "dltune run keeps the CPUs out of it while a job runs");
  ASSERT_TRUE(f[0].fix);
  EXPECT_NE(f[0].fix->command.find("dltune run -p PROFILE"), std::string::npos);
  EXPECT_NE(f[0].evidence[0].value.find("C10 890 µs (disabled)"), std::string::npos);
  f = h.run(entry("cpu.latency_us", Expected::Kind::kExact, {"200"}));
  EXPECT_EQ(f[0].severity, Severity::kOk);
  EXPECT_FALSE(f[0].fix);
  // No cpuidle (this VM): not applicable.
  dltune::testing::TempTree none;
  Host vm(none.root());
  f = vm.run(entry("cpu.latency_us", Expected::Kind::kExact, {"10"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].applicable);
}

}  // namespace system_rules_test

namespace system_rules_test {

// The page cache's share of what holds the data: what the file system holds against
// MemAvailable, from the fixture's capture (fs-usage.json) and meminfo.
TEST(StorageDataDevice, SaysHowMuchOfTheDataThePageCacheCanHold) {
  Host h(fixture("gpu8-numa2-cgv2"));
  const auto f =
      h.run(entry("storage.data_device", Expected::Kind::kExact, {"true"}, "info"), {"/data", "/"});
  ASSERT_EQ(f.size(), 2u);
  ASSERT_FALSE(f[0].notes.empty());
  EXPECT_EQ(f[0].notes.back(),
            "/data holds 4.2 TiB; the page cache can keep at most 974 GiB (MemAvailable) of it: a "
            "dataset larger than that is read from the disk again every epoch");
  ASSERT_FALSE(f[1].notes.empty());
  EXPECT_NE(f[1].notes.back().find("after the first epoch a dataset on it can be read from the "
                                   "page cache"),
            std::string::npos)
      << f[1].notes.back();
}

}  // namespace system_rules_test

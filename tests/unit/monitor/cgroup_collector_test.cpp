// CgroupCollector on fixture trees of a v1 host, a hybrid host (this VM: v1 controllers and a
// cgroup2 mount at /sys/fs/cgroup/unified with per-group pressure files) and a v2 host, with
// control-file text as this VM's kernel writes it (6.18; v2 files from cgroup-v2.rst's format).
#include <unistd.h>

#include <gtest/gtest.h>

#include "monitor/sampler.hpp"
#include "support/temp_tree.hpp"

namespace dltune::monitor::cgroup_collector_test {
namespace {

using dltune::testing::TempTree;

constexpr const char* kMountV1 =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n";
constexpr const char* kMountUnified =
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kMountV2 =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

void v1_group(TempTree& t, const std::string& g) {
  const std::string cpu = "sys/fs/cgroup/cpu" + g, acct = "sys/fs/cgroup/cpuacct" + g,
                    mem = "sys/fs/cgroup/memory" + g;
  t.write(cpu + "/cpu.stat",
          "nr_periods 200\nnr_throttled 50\nthrottled_time 1500000000\nnr_bursts 0\n"
          "burst_time 0\n");
  t.write(cpu + "/cpu.cfs_quota_us", "150000\n");
  t.write(cpu + "/cpu.cfs_period_us", "100000\n");
  t.write(cpu + "/cgroup.procs", "");
  t.write(acct + "/cpuacct.usage", "34891912642673\n");
  t.write(acct + "/cpuacct.stat", "user 3174528\nsystem 314662\n");
  t.write(acct + "/cgroup.procs", "");
  t.write(mem + "/memory.usage_in_bytes", "4100096\n");
  t.write(mem + "/memory.limit_in_bytes", "536870912\n");
  t.write(mem + "/memory.max_usage_in_bytes", "5242880\n");
  t.write(mem + "/memory.failcnt", "43\n");
  t.write(mem + "/memory.stat",
          "cache 876544\nrss 1773568\nworkingset_refault_file 26\nswap 0\npgmajfault 0\n"
          "hierarchical_memory_limit 536870912\ntotal_cache 976544\ntotal_rss 1873568\n"
          "total_workingset_refault_anon 3\ntotal_workingset_refault_file 27\ntotal_swap 4096\n"
          "total_pgmajfault 5\n");
  t.write(mem + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  t.write(mem + "/cgroup.procs", "300\n100\n200\n100\n");
  t.write("sys/fs/cgroup/cpuset" + g + "/cpuset.cpus", "0-3,8,10-11\n");
}

TEST(CgroupCollector, V1HostEveryHierarchyWithoutPressure) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  v1_group(t, "/dltune/job");
  auto c = CgroupCollector::open(t.root(), "/dltune/job/");
  ASSERT_TRUE(c) << c.error().message();
  Notices notices;
  std::optional<Cgroup> g;
  ASSERT_TRUE(c->collect(g, notices));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->path, "/dltune/job");
  EXPECT_EQ(g->version, "v1");
  const auto ticks = static_cast<std::uint64_t>(::sysconf(_SC_CLK_TCK));
  EXPECT_EQ(*g->cpu_usage_us, 34891912642u);  // ns / 1000
  EXPECT_EQ(*g->cpu_user_us, std::uint64_t{3174528} * 1000000 / ticks);
  EXPECT_EQ(*g->cpu_system_us, std::uint64_t{314662} * 1000000 / ticks);
  EXPECT_EQ(*g->nr_periods, 200u);
  EXPECT_EQ(*g->nr_throttled, 50u);
  EXPECT_EQ(*g->throttled_us, 1'500'000u);
  EXPECT_DOUBLE_EQ(*g->cpu_quota_cpus, 1.5);
  EXPECT_EQ(*g->cpuset_cpus, 7u);  // the cpuset hierarchy's cpuset.cpus
  EXPECT_EQ(*g->memory_bytes, 4100096u);
  EXPECT_EQ(*g->memory_limit_bytes, 536870912u);
  EXPECT_EQ(*g->memory_peak_bytes, 5242880u);
  EXPECT_EQ(*g->failcnt, 43u);
  EXPECT_EQ(*g->anon_bytes, 1873568u);  // total_ (hierarchical), not the group's own
  EXPECT_EQ(*g->file_bytes, 976544u);
  EXPECT_EQ(*g->swap_bytes, 4096u);
  EXPECT_EQ(*g->workingset_refault_file, 27u);
  EXPECT_EQ(*g->workingset_refault_anon, 3u);
  EXPECT_EQ(*g->pgmajfault, 5u);
  EXPECT_EQ(*g->events_oom_kill, 2u);
  EXPECT_EQ(*g->pids, 4u);  // lines of cgroup.procs
  EXPECT_FALSE(g->pressure.cpu);
  const auto said = notices.take();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("no pressure figures"), std::string::npos);
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{100, 200, 300}));  // sorted, repeats dropped

  // No quota and no limit: empty, not a huge number.
  t.write("sys/fs/cgroup/cpu/dltune/job/cpu.cfs_quota_us", "-1\n");
  t.write("sys/fs/cgroup/memory/dltune/job/memory.limit_in_bytes", "9223372036854771712\n");
  t.write("sys/fs/cgroup/cpuset/dltune/job/cpuset.cpus", "\n");  // not set: no cpuset of its own
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_FALSE(g->cpu_quota_cpus);
  EXPECT_FALSE(g->cpuset_cpus);
  EXPECT_FALSE(g->memory_limit_bytes);
  EXPECT_TRUE(notices.take().empty());
}

TEST(CgroupCollector, HybridHostReadsPressureFromTheUnifiedGroup) {
  TempTree t;
  t.write("proc/self/mountinfo", std::string(kMountV1) + kMountUnified);
  v1_group(t, "/dltune/job");
  const std::string u = "sys/fs/cgroup/unified/dltune/job";
  t.write(u + "/cpu.pressure",
          "some avg10=96.05 avg60=47.96 avg300=13.02 total=6939765815\n"
          "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  t.write(u + "/memory.pressure",
          "some avg10=0.00 avg60=0.00 avg300=0.12 total=76118475\n"
          "full avg10=0.00 avg60=0.00 avg300=0.09 total=43348502\n");
  t.write(u + "/io.pressure",
          "some avg10=0.00 avg60=0.00 avg300=0.00 total=24311\n"
          "full avg10=0.00 avg60=0.00 avg300=0.00 total=8908\n");
  t.write(u + "/cgroup.procs", "100\n");
  auto c = CgroupCollector::open(t.root(), "/dltune/job");
  ASSERT_TRUE(c) << c.error().message();
  Notices notices;
  std::optional<Cgroup> g;
  ASSERT_TRUE(c->collect(g, notices));
  ASSERT_TRUE(g && g->pressure.cpu && g->pressure.memory && g->pressure.io);
  EXPECT_EQ(g->pressure.cpu->some.total_us, 6939765815u);
  EXPECT_EQ(g->pressure.io->full->total_us, 8908u);
  EXPECT_EQ(*g->memory_bytes, 4100096u);
  EXPECT_TRUE(notices.take().empty());
}

TEST(CgroupCollector, V2Host) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  const std::string d = "sys/fs/cgroup/dltune/job";
  t.write(d + "/cpu.stat",
          "usage_usec 34852688331\nuser_usec 31709603874\nsystem_usec 3143084457\n"
          "nice_usec 0\nnr_periods 10\nnr_throttled 4\nthrottled_usec 2500\n"
          "nr_bursts 0\nburst_usec 0\n");
  t.write(d + "/cpu.max", "200000 100000\n");
  t.write(d + "/memory.current", "1048576\n");
  t.write(d + "/memory.max", "max\n");
  t.write(d + "/memory.peak", "2097152\n");
  t.write(d + "/memory.swap.current", "0\n");
  t.write(d + "/memory.stat",
          "anon 1773568\nfile 876544\nkernel 0\nworkingset_refault_anon 1\n"
          "workingset_refault_file 26\npgfault 46622\npgmajfault 7\n");
  t.write(d + "/memory.events", "low 0\nhigh 3\nmax 9\noom 1\noom_kill 1\noom_group_kill 0\n");
  t.write(d + "/cpu.pressure",
          "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"
          "full avg10=0.00 avg60=0.00 avg300=0.00 total=2\n");
  t.write(d + "/cgroup.procs", "42\n43\n");
  t.write(d + "/cpuset.cpus.effective", "0-95\n");
  auto c = CgroupCollector::open(t.root(), "/dltune/job");
  ASSERT_TRUE(c) << c.error().message();
  Notices notices;
  std::optional<Cgroup> g;
  ASSERT_TRUE(c->collect(g, notices));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->version, "v2");
  EXPECT_EQ(*g->cpu_usage_us, 34852688331u);
  EXPECT_EQ(*g->cpu_user_us, 31709603874u);
  EXPECT_EQ(*g->cpu_system_us, 3143084457u);
  EXPECT_EQ(*g->nr_periods, 10u);
  EXPECT_EQ(*g->nr_throttled, 4u);
  EXPECT_EQ(*g->throttled_us, 2500u);
  EXPECT_DOUBLE_EQ(*g->cpu_quota_cpus, 2.0);
  EXPECT_EQ(*g->cpuset_cpus, 96u);  // cpuset.cpus.effective
  EXPECT_EQ(*g->memory_bytes, 1048576u);
  EXPECT_FALSE(g->memory_limit_bytes);  // "max"
  EXPECT_EQ(*g->memory_peak_bytes, 2097152u);
  EXPECT_EQ(*g->swap_bytes, 0u);
  EXPECT_EQ(*g->anon_bytes, 1773568u);
  EXPECT_EQ(*g->file_bytes, 876544u);
  EXPECT_EQ(*g->workingset_refault_file, 26u);
  EXPECT_EQ(*g->workingset_refault_anon, 1u);
  EXPECT_EQ(*g->pgmajfault, 7u);
  EXPECT_EQ(*g->failcnt, 9u);  // memory.events max
  EXPECT_EQ(*g->events_high, 3u);
  EXPECT_EQ(*g->events_oom, 1u);
  EXPECT_EQ(*g->events_oom_kill, 1u);
  ASSERT_TRUE(g->pressure.cpu);
  EXPECT_EQ(g->pressure.cpu->full->total_us, 2u);
  EXPECT_FALSE(g->pressure.io);  // no io.pressure file
  EXPECT_EQ(*g->pids, 2u);
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{42, 43}));

  t.write(d + "/cpu.max", "max 100000\n");
  t.write(d + "/memory.max", "536870912\n");
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_FALSE(g->cpu_quota_cpus);
  EXPECT_EQ(*g->memory_limit_bytes, 536870912u);

  t.write(d + "/memory.events", "max lots\n");
  auto bad = c->collect(g, notices);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/sys/fs/cgroup/dltune/job/memory.events line 1: 'lots'");
  t.write(d + "/memory.events", "max 9\n");
  for (const char* list : {"3-1\n", "0-\n", "x\n", "0,,2\n", "0-1048576\n"}) {
    t.write(d + "/cpuset.cpus.effective", list);
    bad = c->collect(g, notices);
    ASSERT_FALSE(bad) << list;
    EXPECT_NE(bad.error().message().find("not a CPU list"), std::string::npos)
        << bad.error().message();
  }
}

// A Slurm job's group holds no process itself: its members are those of the groups below it
// (steps, tasks). collect counts them and pids() right after gives the same members without
// reading or walking again: what one sample saw, even if the groups changed in between.
TEST(CgroupCollector, AGroupThatHoldsNoneHasTheMembersOfTheGroupsBelowItOnceASample) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  const std::string d = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_7";
  t.write(d + "/memory.current", "1048576\n");
  t.write(d + "/cgroup.procs", "");
  t.write(d + "/step_0/cgroup.procs", "");
  t.write(d + "/step_0/user/task_0/cgroup.procs", "300\n100\n");
  t.write(d + "/step_batch/cgroup.procs", "200\n");
  auto c = CgroupCollector::open(t.root(), "/system.slice/slurmstepd.scope/job_7");
  ASSERT_TRUE(c) << c.error().message();
  Notices notices;
  std::optional<Cgroup> g;
  ASSERT_TRUE(c->collect(g, notices));
  ASSERT_TRUE(g);
  EXPECT_EQ(*g->pids, 3u);
  // A task that starts between the collect and the members: the sample's own view.
  t.write(d + "/step_0/user/task_0/cgroup.procs", "300\n100\n400\n");
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{100, 200, 300}));
  // Asked again without a collect: read now.
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{100, 200, 300, 400}));
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 4u);
  // A group that holds its processes itself: the members of its own list, read once.
  t.write(d + "/cgroup.procs", "500\n");
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 1u);
  t.write(d + "/cgroup.procs", "500\n600\n");
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{500}));
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{500, 600}));
}

std::string pid_lines(int from, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += std::to_string(from + i) + "\n";
  return out;
}

// count_every (a tree's group, shared with other processes): a large group is counted every
// n-th collect and its count carried between; a small one every collect; the other files are
// read every collect all the same. pids() still reads the list itself.
TEST(CgroupCollector, ALargeGroupIsCountedEveryNthCollectASmallOneEveryCollect) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  const std::string d = "sys/fs/cgroup/user.slice";
  t.write(d + "/memory.current", "1\n");
  t.write(d + "/cgroup.procs", pid_lines(100, 3));
  auto c = CgroupCollector::open(t.root(), "/user.slice");
  ASSERT_TRUE(c) << c.error().message();
  c->count_every(4);
  Notices notices;
  std::optional<Cgroup> g;
  // Small: every collect.
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 3u);
  t.write(d + "/cgroup.procs", pid_lines(100, 200));
  ASSERT_TRUE(c->collect(g, notices));  // read: the last count was small
  EXPECT_EQ(*g->pids, 200u);
  // Large now: carried until the 4th collect's turn (collects 0, 4, 8, ... read).
  t.write(d + "/cgroup.procs", pid_lines(100, 201));
  t.write(d + "/memory.current", "2\n");
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 200u);
  EXPECT_EQ(*g->memory_bytes, 2u);    // the other files every collect
  EXPECT_EQ(c->pids().size(), 201u);  // read now, not carried
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 200u);
  ASSERT_TRUE(c->collect(g, notices));  // the 4th collect's turn
  EXPECT_EQ(*g->pids, 201u);
  // Small again: every collect from its next reading.
  t.write(d + "/cgroup.procs", pid_lines(100, 2));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 201u);
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 2u);
  t.write(d + "/cgroup.procs", pid_lines(100, 1));
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_EQ(*g->pids, 1u);

  // Without count_every (a kCgroup scope's members): a large group every collect.
  auto every = CgroupCollector::open(t.root(), "/user.slice");
  ASSERT_TRUE(every);
  t.write(d + "/cgroup.procs", pid_lines(100, 300));
  ASSERT_TRUE(every->collect(g, notices));
  t.write(d + "/cgroup.procs", pid_lines(100, 301));
  ASSERT_TRUE(every->collect(g, notices));
  EXPECT_EQ(*g->pids, 301u);
}

// The Sampler counts a large group every group_count_every samples unless the group's processes
// are the scope's members (kCgroup): those it needs every sample.
TEST(CgroupCollector, TheSamplerCarriesALargeGroupsCountUnlessItsProcessesAreTheScope) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  t.write("proc/stat", "cpu  10 0 10 10 0 0 0 0\ncpu0 10 0 10 10 0 0 0 0\nctxt 5\n");
  t.write("proc/meminfo", "MemTotal: 100 kB\nMemAvailable: 50 kB\n");
  const std::string d = "sys/fs/cgroup/user.slice";
  t.write(d + "/memory.current", "1\n");
  t.write(d + "/cgroup.procs", pid_lines(100, 100));
  for (const auto kind : {Scope::Kind::kNone, Scope::Kind::kCgroup}) {
    SCOPED_TRACE(kind == Scope::Kind::kNone ? "not the scope" : "the scope");
    SamplerOptions o;
    o.gpus = false;
    o.scope.kind = kind;
    o.scope.cgroup = "/user.slice";
    o.cgroup = "/user.slice";
    o.group_count_every = 10;
    auto sampler = Sampler::open(t.root(), o);
    ASSERT_TRUE(sampler) << sampler.error().message();
    t.write(d + "/cgroup.procs", pid_lines(100, 100));
    Sample sample;
    ASSERT_TRUE((*sampler)->sample(sample));
    ASSERT_TRUE(sample.cgroup);
    EXPECT_EQ(*sample.cgroup->pids, 100u);
    t.write(d + "/cgroup.procs", pid_lines(100, 101));
    ASSERT_TRUE((*sampler)->sample(sample));
    EXPECT_EQ(*sample.cgroup->pids, kind == Scope::Kind::kNone ? 100u : 101u);
  }
}

TEST(CgroupCollector, AGroupInNoHierarchyIsAnErrorAndARemovedOneIsEmpty) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  auto none = CgroupCollector::open(t.root(), "/dltune/nothing");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().input, "/dltune/nothing");
  EXPECT_FALSE(CgroupCollector::open(t.root(), "relative"));

  t.write("sys/fs/cgroup/dltune/job/memory.current", "1\n");
  auto root = t.root();
  // The fault table must exist before the files are opened: they share it.
  root.inject_fault({host::FaultOp::kRead, "/nowhere", EIO});
  auto c = CgroupCollector::open(root, "/dltune/job");
  ASSERT_TRUE(c);
  Notices notices;
  std::optional<Cgroup> g;
  ASSERT_TRUE(c->collect(g, notices));
  ASSERT_TRUE(g);
  // The kernel answers ENODEV for a removed group's files (kernfs).
  root.inject_fault({host::FaultOp::kRead, "/sys/fs/cgroup/dltune/job/*", ENODEV});
  ASSERT_TRUE(c->collect(g, notices));
  EXPECT_FALSE(g);
}

TEST(CgroupCollector, GroupOfAProcess) {
  TempTree t;
  t.write("proc/self/mountinfo", std::string(kMountV1) + kMountUnified);
  // This VM's /proc/self/cgroup.
  t.write("proc/1234/cgroup",
          "9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n5:devices:/\n"
          "4:memory:/process_api/f1789b25e4a97d5b6d4121949b6c5f87\n3:cpuset:/\n2:cpuacct:/\n"
          "1:cpu:/\n0::/\n");
  auto g = CgroupCollector::group_of(t.root(), 1234);
  ASSERT_TRUE(g) << g.error().message();
  EXPECT_EQ(*g, "/process_api/f1789b25e4a97d5b6d4121949b6c5f87");

  t.write("proc/self/mountinfo", kMountV2);
  t.write("proc/1234/cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n");
  g = CgroupCollector::group_of(t.root(), 1234);
  ASSERT_TRUE(g);
  EXPECT_EQ(*g, "/user.slice/user-1000.slice/session-2.scope");

  auto gone = CgroupCollector::group_of(t.root(), 99999);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().errno_, ESRCH);
  t.write("proc/1234/cgroup", "garbage\n");
  EXPECT_FALSE(CgroupCollector::group_of(t.root(), 1234));
}

}  // namespace
}  // namespace dltune::monitor::cgroup_collector_test

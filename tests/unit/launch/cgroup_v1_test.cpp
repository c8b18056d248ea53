// The job's groups on a cgroup-v1 host, in a fixture tree shaped like this VM (v1 with cpu and
// cpuacct apart, plus a cgroup2 mount without controllers): one group per hierarchy, the files
// written and their values, the cpuset parent filled first, read-back mismatches, statistics.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "launch/cgroup.hpp"
#include "support/temp_tree.hpp"

namespace cgroup_v1_test {

namespace fs = std::filesystem;
using dltune::host::CgroupLayout;
using dltune::launch::CgroupLimits;
using dltune::launch::create_job_cgroup;
using dltune::testing::TempTree;

namespace {

const std::vector<std::string> kHierarchies = {"cpu",    "cpuacct", "cpuset",
                                               "memory", "blkio",   "unified"};

// Each hierarchy's root with the control files its children get (the tree's make_directory
// gives a new group its parent's file names, as the kernel gives it its control files).
class CgroupV1 : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::map<std::string, std::vector<std::string>> files = {
        {"cpu", {"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.shares", "cpu.stat"}},
        {"cpuacct", {"cpuacct.usage", "cpuacct.stat"}},
        {"cpuset", {"cpuset.cpus", "cpuset.mems"}},
        {"memory",
         {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.max_usage_in_bytes",
          "memory.oom_control", "memory.failcnt"}},
        {"blkio", {"blkio.bfq.weight"}},
        {"unified", {"cgroup.kill", "cpu.pressure", "io.pressure", "memory.pressure", "cpu.stat"}},
    };
    for (const auto& [h, names] : files) {
      tree_.write(cg(h) + "/cgroup.procs", "1\n");
      for (const auto& n : names) tree_.write(cg(h) + "/" + n, "");
    }
    tree_.write(cg("cpuset") + "/cpuset.cpus", "0-1\n");
    tree_.write(cg("cpuset") + "/cpuset.mems", "0\n");
    layout_.version = "v1";
    layout_.unified = "/sys/fs/cgroup/unified";
    for (const auto& h : kHierarchies)
      if (h != "unified") layout_.v1.emplace_back(h, "/sys/fs/cgroup/" + h);
  }
  static std::string cg(const std::string& rel) { return "sys/fs/cgroup/" + rel; }
  std::string file(const std::string& rel) const {
    std::ifstream in(tree_.dir() / cg(rel));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  bool there(const std::string& rel) const { return fs::exists(tree_.dir() / cg(rel)); }
  // No group of that name in any hierarchy.
  void expect_gone(const std::string& name) const {
    for (const auto& h : kHierarchies) EXPECT_FALSE(there(h + "/dltune/" + name)) << h;
  }

  TempTree tree_;
  CgroupLayout layout_;
};

}  // namespace

TEST_F(CgroupV1, OneGroupPerHierarchyWithEveryLimit) {
  CgroupLimits l;
  l.cpu_quota_cpus = 0.5;
  l.cpu_weight = 200;
  l.memory_bytes = 100 << 20;
  l.memory_swap_bytes = 50 << 20;
  l.cpus = "1";
  l.io_weight = 300;
  auto root = tree_.root();
  auto job = create_job_cgroup(root, layout_, "job", l);
  ASSERT_TRUE(job) << job.error().message();
  EXPECT_EQ(file("cpu/dltune/job/cpu.cfs_period_us"), "100000\n");
  EXPECT_EQ(file("cpu/dltune/job/cpu.cfs_quota_us"), "50000\n");
  EXPECT_EQ(file("cpu/dltune/job/cpu.shares"), "2048\n");
  EXPECT_EQ(file("memory/dltune/job/memory.limit_in_bytes"), "104857600\n");
  EXPECT_EQ(file("memory/dltune/job/memory.memsw.limit_in_bytes"), "157286400\n");
  // cpusets.rst: the parent needs CPUs and nodes first; the job's nodes come from it.
  EXPECT_EQ(file("cpuset/dltune/cpuset.cpus"), "0-1\n");
  EXPECT_EQ(file("cpuset/dltune/cpuset.mems"), "0\n");
  EXPECT_EQ(file("cpuset/dltune/job/cpuset.cpus"), "1\n");
  EXPECT_EQ(file("cpuset/dltune/job/cpuset.mems"), "0\n");
  EXPECT_EQ(file("blkio/dltune/job/blkio.bfq.weight"), "300\n");
  EXPECT_EQ(file("cpuacct/dltune/job/cpuacct.usage"), "");  // created for its statistics only
  const std::vector<std::string> dirs = {
      "/sys/fs/cgroup/memory/dltune/job",  "/sys/fs/cgroup/cpu/dltune/job",
      "/sys/fs/cgroup/cpuacct/dltune/job", "/sys/fs/cgroup/cpuset/dltune/job",
      "/sys/fs/cgroup/blkio/dltune/job",   "/sys/fs/cgroup/unified/dltune/job"};
  EXPECT_EQ((*job)->directories(), dirs);
  std::vector<std::string> procs;
  for (const auto& d : dirs) procs.push_back(d + "/cgroup.procs");
  EXPECT_EQ((*job)->procs_files(), procs);
  EXPECT_EQ((*job)->pressure_dir(), "/sys/fs/cgroup/unified/dltune/job");
  EXPECT_TRUE((*job)->notes().empty());

  auto back = (*job)->read_back();
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->cpu_quota_cpus.value_or(0), 0.5);
  EXPECT_EQ(back->cpu_weight, 200u);
  EXPECT_EQ(back->memory_bytes, 100u << 20);
  EXPECT_EQ(back->memory_swap_bytes, 50u << 20);
  EXPECT_EQ(back->cpus, "1");
  EXPECT_EQ(back->mems, "0");
  EXPECT_EQ(back->io_weight, 300u);

  ASSERT_TRUE((*job)->remove());
  expect_gone("job");
  for (const auto& h : kHierarchies) EXPECT_TRUE(there(h + "/dltune")) << h;
  EXPECT_TRUE((*job)->remove());
}

TEST_F(CgroupV1, WithoutLimitsMemoryCpuAndCpuacctGroupsForStatistics) {
  auto root = tree_.root();
  auto job = create_job_cgroup(root, layout_, "plain", CgroupLimits{});
  ASSERT_TRUE(job) << job.error().message();
  EXPECT_EQ((*job)->directories(),
            (std::vector<std::string>{
                "/sys/fs/cgroup/memory/dltune/plain", "/sys/fs/cgroup/cpu/dltune/plain",
                "/sys/fs/cgroup/cpuacct/dltune/plain", "/sys/fs/cgroup/unified/dltune/plain"}));
  EXPECT_FALSE(there("cpuset/dltune"));
  EXPECT_FALSE(there("blkio/dltune"));
  EXPECT_EQ(file("cpu/dltune/plain/cpu.cfs_quota_us"), "");
  EXPECT_EQ(file("memory/dltune/plain/memory.limit_in_bytes"), "");

  // What the kernel would show after the job (memory.rst 5, sched-bwc.rst "Statistics").
  tree_.write(cg("cpuacct/dltune/plain/cpuacct.usage"), "2500000000\n");
  tree_.write(cg("cpu/dltune/plain/cpu.stat"),
              "nr_periods 21\nnr_throttled 21\nthrottled_time 1627146048\nnr_bursts 0\n"
              "burst_time 0\n");
  tree_.write(cg("memory/dltune/plain/memory.max_usage_in_bytes"), "52428800\n");
  tree_.write(cg("memory/dltune/plain/memory.oom_control"),
              "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  tree_.write(cg("memory/dltune/plain/memory.failcnt"), "43\n");
  const auto s = (*job)->stats();
  EXPECT_DOUBLE_EQ(s.cpu_seconds.value_or(0), 2.5);
  EXPECT_DOUBLE_EQ(s.throttled_seconds.value_or(0), 1.627146048);
  EXPECT_EQ(s.nr_throttled, 21u);
  EXPECT_EQ(s.memory_peak_bytes, 52428800u);
  EXPECT_EQ(s.oom_kills, 1u);
  EXPECT_EQ(s.memory_limit_hits, 43u);
  ASSERT_TRUE((*job)->remove());
  expect_gone("plain");
}

TEST_F(CgroupV1, CpuAndCpuacctJoinedAreOneGroup) {
  CgroupLayout joined;
  joined.version = "v1";
  joined.v1 = {{"cpu", "/sys/fs/cgroup/cpu,cpuacct"},
               {"cpuacct", "/sys/fs/cgroup/cpu,cpuacct"},
               {"memory", "/sys/fs/cgroup/memory"}};
  tree_.write(cg("cpu,cpuacct/cpu.cfs_period_us"), "");
  tree_.write(cg("cpu,cpuacct/cpu.cfs_quota_us"), "");
  tree_.write(cg("cpu,cpuacct/cpuacct.usage"), "");
  CgroupLimits l;
  l.cpu_quota_cpus = 2;
  auto root = tree_.root();
  auto job = create_job_cgroup(root, joined, "job", l);
  ASSERT_TRUE(job) << job.error().message();
  EXPECT_EQ((*job)->directories(),
            (std::vector<std::string>{"/sys/fs/cgroup/memory/dltune/job",
                                      "/sys/fs/cgroup/cpu,cpuacct/dltune/job"}));
  EXPECT_EQ(file("cpu,cpuacct/dltune/job/cpu.cfs_quota_us"), "200000\n");
  EXPECT_FALSE((*job)->pressure_dir());  // no cgroup2 mount
  ASSERT_TRUE((*job)->remove());
}

TEST_F(CgroupV1, AClampedValueIsAnErrorNamingItAndEveryGroupIsRemoved) {
  auto root = tree_.root();
  // A kernel that keeps its old cpu.shares without an error (it clamps silently to 2..262144:
  // kernel/sched MIN_SHARES, MAX_SHARES).
  auto kernel = [&root](const std::string& path,
                        const std::string& value) -> dltune::Result<std::string> {
    auto back = root.write_virtual(path, value);
    if (back && path.ends_with("/cpu.shares")) return std::string("1024\n");
    return back;
  };
  CgroupLimits l;
  l.cpu_weight = 10000;
  l.memory_bytes = 1 << 30;
  l.cpus = "0";
  auto job = create_job_cgroup(root, layout_, "job", l, kernel);
  ASSERT_FALSE(job);
  const auto m = job.error().message();
  EXPECT_NE(m.find("/sys/fs/cgroup/cpu/dltune/job/cpu.shares"), std::string::npos) << m;
  EXPECT_NE(m.find("wrote '102400'"), std::string::npos) << m;
  EXPECT_NE(m.find("read back '1024'"), std::string::npos) << m;
  expect_gone("job");
}

TEST_F(CgroupV1, NoWeightFileForBlkioIsAnError) {
  fs::remove(tree_.dir() / cg("blkio/blkio.bfq.weight"));
  CgroupLimits l;
  l.io_weight = 500;
  auto root = tree_.root();
  auto job = create_job_cgroup(root, layout_, "job", l);
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().message().find("blkio.bfq.weight"), std::string::npos)
      << job.error().message();
  expect_gone("job");
}

TEST_F(CgroupV1, AControllerNotMountedIsAnErrorForALimitAndANoteOtherwise) {
  layout_.v1.erase(
      std::remove_if(layout_.v1.begin(), layout_.v1.end(),
                     [](const auto& p) { return p.first == "cpuacct" || p.first == "cpuset"; }),
      layout_.v1.end());
  auto root = tree_.root();
  CgroupLimits l;
  l.cpus = "0";
  auto refused = create_job_cgroup(root, layout_, "job", l);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("cpuset controller"), std::string::npos);
  expect_gone("job");
  auto job = create_job_cgroup(root, layout_, "job", CgroupLimits{});
  ASSERT_TRUE(job) << job.error().message();
  ASSERT_EQ((*job)->notes().size(), 1u);
  EXPECT_NE((*job)->notes()[0].find("cpuacct"), std::string::npos);
  ASSERT_TRUE((*job)->remove());
}

TEST_F(CgroupV1, AnExistingGroupInAnyHierarchyIsAnError) {
  tree_.write(cg("unified/dltune/taken/cgroup.procs"), "");
  auto root = tree_.root();
  auto job = create_job_cgroup(root, layout_, "taken", CgroupLimits{});
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().errno_, EEXIST);
  EXPECT_NE(job.error().message().find("/sys/fs/cgroup/unified/dltune/taken"), std::string::npos);
  EXPECT_FALSE(there("memory/dltune/taken"));
  EXPECT_TRUE(there("unified/dltune/taken/cgroup.procs"));
}

TEST_F(CgroupV1, SwapNeedsAMemoryLimit) {
  CgroupLimits l;
  l.memory_swap_bytes = 1 << 20;
  auto root = tree_.root();
  EXPECT_FALSE(create_job_cgroup(root, layout_, "job", l));
  expect_gone("job");
}

// A rank's group inside the job's (`run --nproc N`): in every hierarchy the job has, its own CPUs
// and nodes in its cpuset, its own procs files and pressure; removed before the job's.
TEST_F(CgroupV1, ARanksGroupIsInsideTheJobsInEveryHierarchyWithItsOwnCpus) {
  CgroupLimits l;
  l.memory_bytes = 100 << 20;
  l.cpus = "0-1";
  auto root = tree_.root();
  auto job = create_job_cgroup(root, layout_, "job", l);
  ASSERT_TRUE(job) << job.error().message();
  CgroupLimits own;
  own.cpus = "1";
  auto rank = (*job)->create_child("rank-1", own, {});
  ASSERT_TRUE(rank) << rank.error().message();
  EXPECT_EQ(file("cpuset/dltune/job/rank-1/cpuset.cpus"), "1\n");
  EXPECT_EQ(file("cpuset/dltune/job/rank-1/cpuset.mems"), "0\n") << "its job's nodes";
  EXPECT_EQ(file("memory/dltune/job/rank-1/memory.limit_in_bytes"), "")
      << "the job's limit binds it from above";
  std::vector<std::string> procs;
  for (const auto& p : (*job)->procs_files())
    procs.push_back(p.substr(0, p.rfind('/')) + "/rank-1/cgroup.procs");
  EXPECT_EQ((*rank)->procs_files(), procs);
  EXPECT_EQ((*rank)->pressure_dir(), "/sys/fs/cgroup/unified/dltune/job/rank-1");
  auto back = (*rank)->read_back();
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cpus, "1");
  // Only CPUs and nodes of its own; a name that is not one is refused, nothing made.
  CgroupLimits more = own;
  more.memory_bytes = 1 << 20;
  EXPECT_FALSE((*job)->create_child("rank-2", more, {}));
  EXPECT_FALSE((*job)->create_child("../x", own, {}));
  EXPECT_FALSE(there("memory/dltune/job/rank-2"));
  ASSERT_TRUE((*rank)->remove());
  EXPECT_FALSE(there("cpuset/dltune/job/rank-1"));
  EXPECT_FALSE(there("unified/dltune/job/rank-1"));
  EXPECT_TRUE(there("cpuset/dltune/job"));
  ASSERT_TRUE((*job)->remove());
  expect_gone("job");
}

}  // namespace cgroup_v1_test

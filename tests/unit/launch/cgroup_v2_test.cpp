// The job's group on a cgroup-v2 host, in a fixture tree: the files written and their values,
// controllers enabled, read-back mismatches, refusals, statistics and removal.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "launch/cgroup.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"

namespace cgroup_v2_test {

namespace fs = std::filesystem;
using dltune::host::CgroupLayout;
using dltune::launch::CgroupLimits;
using dltune::launch::create_job_cgroup;
using dltune::testing::TempTree;

namespace {

constexpr const char* kCg = "sys/fs/cgroup";

// The fixture host's cgroup2 root (tests/fixtures/roots/gpu8-numa2-cgv2), with the control
// files a child group has: the tree's make_directory gives a new group its parent's file names,
// as the kernel gives it its control files.
class CgroupV2 : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path fixture = fs::path(DLTUNE_FIXTURES) / "roots/gpu8-numa2-cgv2/sys/fs/cgroup";
    for (const char* f : {"cgroup.controllers", "cpuset.cpus.effective", "cpuset.mems.effective"})
      tree_.write(std::string(kCg) + "/" + f, slurp(fixture / f));
    tree_.write(std::string(kCg) + "/cgroup.subtree_control", "");  // nothing enabled yet
    for (const char* f : {"cgroup.procs", "cgroup.kill", "cpu.max", "cpu.weight", "cpu.stat",
                          "cpu.pressure", "memory.max", "memory.swap.max", "memory.peak",
                          "memory.events", "cpuset.cpus", "cpuset.mems", "io.weight"})
      tree_.write(std::string(kCg) + "/" + f, "");
    layout_.version = "v2";
    layout_.unified = "/sys/fs/cgroup";
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string file(const std::string& rel) const { return slurp(tree_.dir() / kCg / rel); }
  bool there(const std::string& rel) const { return fs::exists(tree_.dir() / kCg / rel); }

  TempTree tree_;
  CgroupLayout layout_;
};

}  // namespace

TEST_F(CgroupV2, WritesEveryLimitAndEnablesTheControllers) {
  CgroupLimits l;
  l.cpu_quota_cpus = 2.5;
  l.cpu_weight = 500;
  l.memory_bytes = 64ull << 30;
  l.memory_swap_bytes = 1ull << 30;
  l.cpus = "0-7";
  l.mems = "0";
  l.io_weight = 200;
  auto root = tree_.root();
  auto cg = create_job_cgroup(root, layout_, "train1", l);
  ASSERT_TRUE(cg) << cg.error().message();
  EXPECT_EQ(file("cgroup.subtree_control"), "+cpu +memory +cpuset +io\n");
  EXPECT_EQ(file("dltune/cgroup.subtree_control"), "+cpu +memory +cpuset +io\n");
  EXPECT_EQ(file("dltune/train1/cpu.max"), "250000 100000\n");
  EXPECT_EQ(file("dltune/train1/cpu.weight"), "500\n");
  EXPECT_EQ(file("dltune/train1/memory.max"), "68719476736\n");
  EXPECT_EQ(file("dltune/train1/memory.swap.max"), "1073741824\n");
  EXPECT_EQ(file("dltune/train1/cpuset.cpus"), "0-7\n");
  EXPECT_EQ(file("dltune/train1/cpuset.mems"), "0\n");
  EXPECT_EQ(file("dltune/train1/io.weight"), "default 200\n");
  EXPECT_EQ(file("dltune/train1/cgroup.procs"), "");  // the child writes itself (attach_self)
  EXPECT_EQ((*cg)->directories(), std::vector<std::string>{"/sys/fs/cgroup/dltune/train1"});
  EXPECT_EQ((*cg)->procs_files(),
            std::vector<std::string>{"/sys/fs/cgroup/dltune/train1/cgroup.procs"});
  EXPECT_EQ((*cg)->pressure_dir(), "/sys/fs/cgroup/dltune/train1");
  EXPECT_TRUE((*cg)->notes().empty());

  auto back = (*cg)->read_back();
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->cpu_quota_cpus.value_or(0), 2.5);
  EXPECT_EQ(back->cpu_weight, 500u);
  EXPECT_EQ(back->memory_bytes, 64ull << 30);
  EXPECT_EQ(back->memory_swap_bytes, 1ull << 30);
  EXPECT_EQ(back->cpus, "0-7");
  EXPECT_EQ(back->mems, "0");
  EXPECT_EQ(back->io_weight, 200u);

  ASSERT_TRUE((*cg)->remove());
  EXPECT_FALSE(there("dltune/train1"));
  EXPECT_TRUE(there("dltune"));  // shared with other jobs
  EXPECT_TRUE((*cg)->remove());  // twice is fine
}

TEST_F(CgroupV2, WritesOnlyControllersNotEnabledYetAndNoLimitsUnasked) {
  tree_.write(std::string(kCg) + "/cgroup.subtree_control", "cpuset cpu io memory pids\n");
  auto root = tree_.root();
  auto cg = create_job_cgroup(root, layout_, "plain", CgroupLimits{});
  ASSERT_TRUE(cg) << cg.error().message();
  EXPECT_EQ(file("cgroup.subtree_control"), "cpuset cpu io memory pids\n");  // untouched
  EXPECT_EQ(file("dltune/cgroup.subtree_control"), "+cpu +memory\n");
  EXPECT_EQ(file("dltune/plain/cpu.max"), "");
  EXPECT_EQ(file("dltune/plain/memory.max"), "");
  EXPECT_EQ(file("dltune/plain/cpuset.cpus"), "");
  ASSERT_TRUE((*cg)->remove());
}

TEST_F(CgroupV2, StatisticsFromCpuStatAndMemoryEvents) {
  auto root = tree_.root();
  auto cg = create_job_cgroup(root, layout_, "stats", CgroupLimits{});
  ASSERT_TRUE(cg) << cg.error().message();
  // What the kernel would show after the job (cgroup-v2.rst: cpu.stat, memory.events).
  tree_.write(std::string(kCg) + "/dltune/stats/cpu.stat",
              "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\nnr_periods 20\n"
              "nr_throttled 12\nthrottled_usec 250000\n");
  tree_.write(std::string(kCg) + "/dltune/stats/memory.events",
              "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n");
  tree_.write(std::string(kCg) + "/dltune/stats/memory.peak", "52428800\n");
  const auto s = (*cg)->stats();
  EXPECT_DOUBLE_EQ(s.cpu_seconds.value_or(0), 1.5);
  EXPECT_DOUBLE_EQ(s.throttled_seconds.value_or(0), 0.25);
  EXPECT_EQ(s.nr_throttled, 12u);
  EXPECT_EQ(s.memory_peak_bytes, 52428800u);
  EXPECT_EQ(s.oom_kills, 1u);
  EXPECT_EQ(s.memory_limit_hits, 7u);
  ASSERT_TRUE((*cg)->remove());
}

TEST_F(CgroupV2, AValueTheKernelDidNotTakeIsAnErrorAndNothingIsLeft) {
  CgroupLimits l;
  l.memory_bytes = 100 << 20;
  l.cpu_quota_cpus = 1;
  auto root = tree_.root();
  // A kernel that keeps memory.max at "max": what a refusal without errno would look like.
  auto kernel = [&root](const std::string& path,
                        const std::string& value) -> dltune::Result<std::string> {
    auto back = root.write_virtual(path, value);
    if (back && path.ends_with("/memory.max")) return std::string("max");
    return back;
  };
  auto cg = create_job_cgroup(root, layout_, "job", l, kernel);
  ASSERT_FALSE(cg);
  const auto m = cg.error().message();
  EXPECT_NE(m.find("/sys/fs/cgroup/dltune/job/memory.max"), std::string::npos) << m;
  EXPECT_NE(m.find("wrote '104857600'"), std::string::npos) << m;
  EXPECT_NE(m.find("read back 'max'"), std::string::npos) << m;
  EXPECT_FALSE(there("dltune/job"));
}

TEST_F(CgroupV2, MemoryIsComparedWithinAPage) {
  auto root = tree_.root();
  // The kernel rounds memory.max down to a page: 100 MiB + 1 reads back as 100 MiB.
  auto kernel = [&root](const std::string& path,
                        const std::string& value) -> dltune::Result<std::string> {
    auto back = root.write_virtual(path, value);
    if (back && path.ends_with("/memory.max")) return std::string("104857600");
    return back;
  };
  CgroupLimits l;
  l.memory_bytes = (100 << 20) + 1;
  auto cg = create_job_cgroup(root, layout_, "rounded", l, kernel);
  ASSERT_TRUE(cg) << cg.error().message();
  ASSERT_TRUE((*cg)->remove());
}

TEST_F(CgroupV2, AControllerThatIsNotAvailableIsNamed) {
  tree_.write(std::string(kCg) + "/cgroup.controllers", "cpu memory pids\n");
  auto root = tree_.root();
  CgroupLimits l;
  l.io_weight = 200;
  auto cg = create_job_cgroup(root, layout_, "job", l);
  ASSERT_FALSE(cg);
  EXPECT_NE(cg.error().message().find("the io controller"), std::string::npos)
      << cg.error().message();
  EXPECT_NE(cg.error().message().find("/sys/fs/cgroup/cgroup.controllers"), std::string::npos);
  EXPECT_FALSE(there("dltune/job"));

  // Not needed for a limit: the job runs, and the notes say what is missing.
  tree_.write(std::string(kCg) + "/cgroup.controllers", "memory pids\n");
  auto plain = create_job_cgroup(root, layout_, "job", CgroupLimits{});
  ASSERT_TRUE(plain) << plain.error().message();
  ASSERT_EQ((*plain)->notes().size(), 1u);
  EXPECT_NE((*plain)->notes()[0].find("cpu controller"), std::string::npos);
  EXPECT_EQ(file("dltune/cgroup.subtree_control"), "+memory\n");
  ASSERT_TRUE((*plain)->remove());
}

TEST_F(CgroupV2, SwapWithoutSwapAccountingIsAnError) {
  fs::remove(tree_.dir() / kCg / "memory.swap.max");
  auto root = tree_.root();
  CgroupLimits l;
  l.memory_swap_bytes = 1 << 30;
  auto cg = create_job_cgroup(root, layout_, "job", l);
  ASSERT_FALSE(cg);
  EXPECT_NE(cg.error().message().find("memory.swap.max"), std::string::npos);
  EXPECT_FALSE(there("dltune/job"));
}

TEST_F(CgroupV2, AnExistingGroupIsAnErrorAndIsLeftAlone) {
  tree_.write(std::string(kCg) + "/dltune/busy/cgroup.procs", "4242\n");
  auto root = tree_.root();
  auto cg = create_job_cgroup(root, layout_, "busy", CgroupLimits{});
  ASSERT_FALSE(cg);
  EXPECT_EQ(cg.error().errno_, EEXIST);
  EXPECT_NE(cg.error().message().find("/sys/fs/cgroup/dltune/busy"), std::string::npos);
  EXPECT_EQ(file("dltune/busy/cgroup.procs"), "4242\n");
}

TEST_F(CgroupV2, BadNamesAndLimitsAreRefusedBeforeAnythingIsCreated) {
  auto root = tree_.root();
  for (const std::string& name :
       std::vector<std::string>{"", "..", "a/b", "../../etc", std::string(65, 'x')}) {
    auto cg = create_job_cgroup(root, layout_, name, CgroupLimits{});
    EXPECT_FALSE(cg) << name;
  }
  CgroupLimits tiny;
  tiny.cpu_quota_cpus = 0.001;  // below the kernel's 1 ms per period
  CgroupLimits weight;
  weight.cpu_weight = 0;
  CgroupLimits cpus;
  cpus.cpus = "3-1";
  CgroupLimits memory;
  memory.memory_bytes = 0;
  for (const auto& l : {tiny, weight, cpus, memory}) {
    auto cg = create_job_cgroup(root, layout_, "job", l);
    EXPECT_FALSE(cg);
  }
  EXPECT_FALSE(there("dltune"));
}

// A rank's group inside the job's: cpuset, cpu and memory enabled for the job's children (the job
// holds no process yet), its own CPUs and nodes.
TEST_F(CgroupV2, ARanksGroupGetsItsOwnCpusWithTheControllersEnabledInTheJobsGroup) {
  CgroupLimits l;
  l.cpus = "0-15";
  l.mems = "0-1";
  auto root = tree_.root();
  auto job = create_job_cgroup(root, layout_, "train1", l);
  ASSERT_TRUE(job) << job.error().message();
  // The job's group offers what its parent enabled (the kernel lists it; the tree copies it).
  tree_.write(std::string(kCg) + "/dltune/train1/cgroup.controllers", "cpuset cpu io memory\n");
  tree_.write(std::string(kCg) + "/dltune/train1/cgroup.subtree_control", "");
  CgroupLimits own;
  own.cpus = "8-15";
  own.mems = "1";
  auto rank = (*job)->create_child("rank-1", own, {});
  ASSERT_TRUE(rank) << rank.error().message();
  EXPECT_EQ(file("dltune/train1/cgroup.subtree_control"), "+cpuset +cpu +memory\n");
  EXPECT_EQ(file("dltune/train1/rank-1/cpuset.cpus"), "8-15\n");
  EXPECT_EQ(file("dltune/train1/rank-1/cpuset.mems"), "1\n");
  EXPECT_EQ((*rank)->procs_files(),
            std::vector<std::string>{"/sys/fs/cgroup/dltune/train1/rank-1/cgroup.procs"});
  // Without cpuset offered, CPUs of its own cannot be had: named, nothing made.
  tree_.write(std::string(kCg) + "/dltune/train1/cgroup.controllers", "cpu memory\n");
  const auto no = (*job)->create_child("rank-2", own, {});
  ASSERT_FALSE(no);
  EXPECT_NE(no.error().message().find("cpuset"), std::string::npos) << no.error().message();
  EXPECT_FALSE(there("dltune/train1/rank-2"));
  ASSERT_TRUE((*rank)->remove());
  ASSERT_TRUE((*job)->remove());
  EXPECT_FALSE(there("dltune/train1"));
}

}  // namespace cgroup_v2_test

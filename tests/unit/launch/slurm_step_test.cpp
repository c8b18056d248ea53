// `dltune run` inside a Slurm job: the step found from the process's own groups, and the job's
// groups made inside the step's (v1 as Slurm 22.05 makes them on this VM, v2 as its cgroup/v2
// plugin does), in fixture trees; the parent made inside the step goes with the job.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "launch/cgroup.hpp"
#include "launch/slurm_step.hpp"
#include "support/temp_tree.hpp"

namespace slurm_step_test {

namespace fs = std::filesystem;
using dltune::host::CgroupLayout;
using dltune::launch::CgroupLimits;
using dltune::launch::create_job_cgroup;
using dltune::launch::find_slurm_step;
using dltune::testing::TempTree;

namespace {

constexpr const char* kTask = "/slurm_vm/uid_0/job_5/step_0/task_0";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CgroupLayout v1_layout() {
  CgroupLayout l;
  l.version = "v1";
  l.unified = "/sys/fs/cgroup/unified";
  for (const char* h : {"cpu", "cpuacct", "cpuset", "memory", "freezer"})
    l.v1.emplace_back(h, std::string("/sys/fs/cgroup/") + h);
  return l;
}

// This VM's hierarchies with a Slurm task's groups in memory, cpuset and cpuacct (task/cgroup
// with jobacct_gather/cgroup), and the process's /proc/self/cgroup naming them.
void slurm_v1_tree(TempTree& t) {
  const std::map<std::string, std::vector<std::string>> files = {
      {"cpu", {"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.shares", "cpu.stat"}},
      {"cpuacct", {"cpuacct.usage"}},
      {"cpuset", {"cpuset.cpus", "cpuset.mems"}},
      {"memory", {"memory.limit_in_bytes", "memory.max_usage_in_bytes", "memory.oom_control"}},
      {"unified", {"cgroup.kill", "cpu.pressure"}},
  };
  for (const auto& [h, names] : files) {
    for (const auto& n : names) t.write("sys/fs/cgroup/" + h + "/" + n, "");
    if (h == "cpuset" || h == "memory" || h == "cpuacct")
      for (const auto& n : names) t.write("sys/fs/cgroup/" + h + kTask + "/" + n, "");
  }
  t.write("sys/fs/cgroup/cpuset/cpuset.cpus", "0-3\n");
  t.write("sys/fs/cgroup/cpuset/cpuset.mems", "0\n");
  t.write(std::string("sys/fs/cgroup/cpuset") + kTask + "/cpuset.cpus", "2-3\n");
  t.write(std::string("sys/fs/cgroup/cpuset") + kTask + "/cpuset.mems", "0\n");
  t.write("proc/self/cgroup", std::string("9:name=systemd:/\n6:freezer:/slurm_vm/uid_0/job_5/"
                                          "step_0\n4:memory:") +
                                  kTask + "\n3:cpuset:" + kTask + "\n2:cpuacct:" + kTask +
                                  "\n1:cpu:/\n0::/\n");
}

}  // namespace

TEST(SlurmStep, OnV1TheTasksOwnGroupInEachHierarchySlurmUses) {
  TempTree t;
  slurm_v1_tree(t);
  const auto step = find_slurm_step(t.root(), v1_layout());
  ASSERT_TRUE(step) << step.error().message();
  ASSERT_TRUE(*step);
  EXPECT_EQ((*step)->job_id, "5");
  EXPECT_EQ((*step)->step, "0");
  const std::map<std::string, std::string> want = {
      {"/sys/fs/cgroup/cpuacct", std::string("/sys/fs/cgroup/cpuacct") + kTask},
      {"/sys/fs/cgroup/cpuset", std::string("/sys/fs/cgroup/cpuset") + kTask},
      {"/sys/fs/cgroup/memory", std::string("/sys/fs/cgroup/memory") + kTask}};
  EXPECT_EQ((*step)->place.nest, want)
      << "cpu and the cgroup2 mount are not Slurm's here; freezer is none of a job's";
}

TEST(SlurmStep, OnV2BesideTheTaskInTheStepsUserGroup) {
  TempTree t;
  t.write("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_12/step_batch/user/task_0\n");
  CgroupLayout l;
  l.version = "v2";
  l.unified = "/sys/fs/cgroup";
  const auto step = find_slurm_step(t.root(), l);
  ASSERT_TRUE(step && *step);
  EXPECT_EQ((*step)->job_id, "12");
  EXPECT_EQ((*step)->step, "batch");
  EXPECT_EQ((*step)->place.nest.at("/sys/fs/cgroup"),
            "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_12/step_batch/user");
}

TEST(SlurmStep, NoneOutsideAJobAndAnErrorForTwoJobsOrAGarbledFile) {
  TempTree outside;
  outside.write("proc/self/cgroup", "4:memory:/process_api/6d41\n3:cpuset:/\n0::/user.slice\n");
  const auto none = find_slurm_step(outside.root(), v1_layout());
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_FALSE(*none);
  TempTree no_file;  // a tree without /proc/self/cgroup: no process there, no step
  EXPECT_FALSE(*find_slurm_step(no_file.root(), v1_layout()));
  TempTree two;
  two.write("proc/self/cgroup",
            "4:memory:/slurm/uid_0/job_5/step_0/task_0\n3:cpuset:/slurm/uid_0/job_6/step_0\n");
  const auto both = find_slurm_step(two.root(), v1_layout());
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message().find("two Slurm steps"), std::string::npos);
  EXPECT_NE(both.error().message().find("/proc/self/cgroup"), std::string::npos);
  TempTree garbled;
  garbled.write("proc/self/cgroup", "not a cgroup line\n");
  const auto bad = find_slurm_step(garbled.root(), v1_layout());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("/proc/self/cgroup"), std::string::npos);
}

// The job's groups inside the task's where Slurm has one, dltune's own parent elsewhere; the
// cpuset parent takes the step's CPUs (a child's are a subset of its parent's); removal takes
// the parents made inside the step and leaves dltune's own.
TEST(SlurmStep, TheJobsGroupsGoInsideTheStepsAndTheirParentGoesWithThem) {
  TempTree t;
  slurm_v1_tree(t);
  auto root = t.root();
  const auto layout = v1_layout();
  const auto step = find_slurm_step(root, layout);
  ASSERT_TRUE(step && *step);
  CgroupLimits l;
  l.memory_bytes = 100 << 20;
  l.cpu_quota_cpus = 1;
  l.cpus = "3";
  auto cg = create_job_cgroup(root, layout, "run-1", l, (*step)->place);
  ASSERT_TRUE(cg) << cg.error().message();
  const fs::path cgfs = t.dir() / "sys/fs/cgroup";
  const std::string in = std::string(kTask) + "/dltune/run-1";
  EXPECT_EQ(slurp(cgfs / ("memory" + in) / "memory.limit_in_bytes"), "104857600\n");
  EXPECT_EQ(slurp(cgfs / ("cpuset" + std::string(kTask)) / "dltune/cpuset.cpus"), "2-3\n")
      << "the step's CPUs, not the machine's 0-3";
  EXPECT_EQ(slurp(cgfs / ("cpuset" + in) / "cpuset.cpus"), "3\n");
  EXPECT_TRUE(fs::exists(cgfs / ("cpuacct" + in)));
  EXPECT_EQ(slurp(cgfs / "cpu/dltune/run-1/cpu.cfs_quota_us"), "100000\n")
      << "Slurm has no cpu group: dltune's own parent";
  EXPECT_TRUE(fs::exists(cgfs / "unified/dltune/run-1"));
  const auto procs = (*cg)->procs_files();
  EXPECT_NE(std::find(procs.begin(), procs.end(), "/sys/fs/cgroup/memory" + in + "/cgroup.procs"),
            procs.end());
  ASSERT_TRUE((*cg)->remove());
  for (const char* h : {"memory", "cpuset", "cpuacct"}) {
    EXPECT_FALSE(fs::exists(cgfs / (h + std::string(kTask)) / "dltune")) << h;
    EXPECT_TRUE(fs::exists(cgfs / (h + std::string(kTask)))) << h << ": Slurm's own stays";
  }
  EXPECT_FALSE(fs::exists(cgfs / "cpu/dltune/run-1"));
  EXPECT_TRUE(fs::exists(cgfs / "cpu/dltune")) << "dltune's own parent stays for the next job";
}

// A second job in the same task keeps the parent while the first one's group goes; the last
// one to leave removes it, whichever made it.
TEST(SlurmStep, AParentAnotherJobIsInStays) {
  TempTree t;
  slurm_v1_tree(t);
  auto root = t.root();
  const auto layout = v1_layout();
  const auto step = find_slurm_step(root, layout);
  ASSERT_TRUE(step && *step);
  auto a = create_job_cgroup(root, layout, "a", CgroupLimits{}, (*step)->place);
  auto b = create_job_cgroup(root, layout, "b", CgroupLimits{}, (*step)->place);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE((*a)->remove());
  const fs::path mem = t.dir() / ("sys/fs/cgroup/memory" + std::string(kTask)) / "dltune";
  EXPECT_TRUE(fs::exists(mem / "b"));
  ASSERT_TRUE((*b)->remove());
  EXPECT_FALSE(fs::exists(mem)) << "else Slurm could not remove the task's group";
}

// v2: the step's "user" group offers and enables the controllers for dltune's parent there.
TEST(SlurmStep, OnV2TheControllersAreEnabledInTheStepsUserGroup) {
  TempTree t;
  const std::string user = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_12/step_0/user";
  // The tree gives a new group its parent's file names (as the kernel its control files).
  for (const char* f : {"cgroup.procs", "cpu.max", "cpu.stat", "memory.max", "memory.events"})
    t.write(user + "/" + f, "");
  t.write(user + "/cgroup.controllers", "cpuset cpu io memory pids\n");
  t.write(user + "/cgroup.subtree_control", "memory\n");
  t.write(user + "/task_0/cgroup.procs", "");
  t.write("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_12/step_0/user/task_0\n");
  CgroupLayout l;
  l.version = "v2";
  l.unified = "/sys/fs/cgroup";
  auto root = t.root();
  const auto step = find_slurm_step(root, l);
  ASSERT_TRUE(step && *step);
  CgroupLimits lim;
  lim.memory_bytes = 1 << 30;
  lim.cpu_quota_cpus = 2;
  auto cg = create_job_cgroup(root, l, "train", lim, (*step)->place);
  ASSERT_TRUE(cg) << cg.error().message();
  EXPECT_EQ(slurp(t.dir() / user / "cgroup.subtree_control"), "+cpu\n")
      << "only what the step had not enabled";
  EXPECT_EQ(slurp(t.dir() / user / "dltune/train/memory.max"), "1073741824\n");
  EXPECT_EQ(slurp(t.dir() / user / "dltune/train/cpu.max"), "200000 100000\n");
  ASSERT_TRUE((*cg)->remove());
  EXPECT_FALSE(fs::exists(t.dir() / user / "dltune"));
  EXPECT_FALSE(fs::exists(t.dir() / "sys/fs/cgroup/dltune")) << "nothing outside the step";
}

}  // namespace slurm_step_test

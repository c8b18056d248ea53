// Where the cgroups are (from /proc/self/mountinfo) and which names a job's group may have.
#include <gtest/gtest.h>

#include "host/cgroup.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"

namespace cgroup_layout_test {

using dltune::host::cgroup_layout;
using dltune::host::CgroupLayout;
using dltune::host::check_cgroup_name;
using dltune::testing::TempTree;

namespace {

// The development VM (CONTRIBUTING.md, "Debian 12 stack"): v1 with cpu and cpuacct mounted apart,
// plus a cgroup2 mount without controllers at /sys/fs/cgroup/unified.
constexpr const char* kHybrid =
    "24 1 253:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

// A typical systemd v1 host: cpu and cpuacct joined, net_cls and net_prio joined, no cgroup2.
constexpr const char* kJoined =
    "25 24 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
    "27 25 0:24 / /sys/fs/cgroup/systemd rw,nosuid shared:10 - cgroup cgroup "
    "rw,xattr,name=systemd\n"
    "30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:13 - cgroup cgroup rw,cpu,cpuacct\n"
    "31 25 0:28 / /sys/fs/cgroup/net_cls,net_prio rw shared:14 - cgroup cgroup "
    "rw,net_cls,net_prio\n"
    "32 25 0:29 / /sys/fs/cgroup/memory rw,nosuid shared:15 - cgroup cgroup rw,memory\n";

constexpr const char* kV2 =
    "24 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
    "33 24 0:28 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

std::string mount_of(const CgroupLayout& l, const std::string& controller) {
  for (const auto& [c, m] : l.v1)
    if (c == controller) return m;
  return "";
}

CgroupLayout layout_of(const std::string& mountinfo) {
  TempTree t;
  t.write("proc/self/mountinfo", mountinfo);
  auto l = cgroup_layout(t.root());
  EXPECT_TRUE(l) << l.error().message();
  return l ? *l : CgroupLayout{};
}

}  // namespace

TEST(CgroupLayout, V2) {
  const auto l = layout_of(kV2);
  EXPECT_EQ(l.version, "v2");
  EXPECT_EQ(l.unified, "/sys/fs/cgroup");
  EXPECT_TRUE(l.v1.empty());
}

TEST(CgroupLayout, HybridWithCpuAndCpuacctApart) {
  const auto l = layout_of(kHybrid);
  EXPECT_EQ(l.version, "v1");
  EXPECT_EQ(l.unified, "/sys/fs/cgroup/unified");
  EXPECT_EQ(mount_of(l, "cpu"), "/sys/fs/cgroup/cpu");
  EXPECT_EQ(mount_of(l, "cpuacct"), "/sys/fs/cgroup/cpuacct");
  EXPECT_EQ(mount_of(l, "cpuset"), "/sys/fs/cgroup/cpuset");
  EXPECT_EQ(mount_of(l, "memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(mount_of(l, "blkio"), "/sys/fs/cgroup/blkio");
  EXPECT_EQ(mount_of(l, "devices"), "/sys/fs/cgroup/devices");
  // "name=systemd" names a hierarchy without a controller.
  EXPECT_EQ(mount_of(l, "name=systemd"), "");
  EXPECT_EQ(l.v1.size(), 6u);
}

TEST(CgroupLayout, V1WithCpuAndCpuacctJoined) {
  const auto l = layout_of(kJoined);
  EXPECT_EQ(l.version, "v1");
  EXPECT_FALSE(l.unified);
  EXPECT_EQ(mount_of(l, "cpu"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(mount_of(l, "cpuacct"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(mount_of(l, "net_prio"), "/sys/fs/cgroup/net_cls,net_prio");
  EXPECT_EQ(mount_of(l, "memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(mount_of(l, "cpuset"), "");
}

TEST(CgroupLayout, TheFixtureHostIsV2) {
  auto root = dltune::host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2");
  ASSERT_TRUE(root);
  auto l = cgroup_layout(*root);
  ASSERT_TRUE(l) << l.error().message();
  EXPECT_EQ(l->version, "v2");
  EXPECT_EQ(l->unified, "/sys/fs/cgroup");
}

TEST(CgroupLayout, NoCgroupsOrNoMountinfoIsAnError) {
  TempTree t;
  t.write("proc/self/mountinfo", "24 1 253:0 / / rw,relatime - ext4 /dev/vda rw\n");
  auto none = cgroup_layout(t.root());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("no cgroup"), std::string::npos);
  TempTree empty;
  auto missing = cgroup_layout(empty.root());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/proc/self/mountinfo"), std::string::npos);
  TempTree garbled;
  garbled.write("proc/self/mountinfo", "not a mount line\n");
  auto bad = cgroup_layout(garbled.root());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("/proc/self/mountinfo"), std::string::npos);
}

TEST(CgroupName, OnlyPlainNamesOfAtMost64Characters) {
  for (const std::string& ok :
       std::vector<std::string>{"job", "train-1", "a.b_c", "X", std::string(64, 'a'), "..."})
    EXPECT_TRUE(check_cgroup_name(ok)) << ok;
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "a/b", "../x", "a b",
                                                         "job\n", "ä", "$x", std::string(65, 'a')})
    EXPECT_FALSE(check_cgroup_name(bad)) << bad;
}

// The Slurm step of a process's group, as Slurm 22.05's cgroup plugins name them on v1 (this VM's
// job groups: /slurm_vm/uid_0/job_3/step_batch/task_0) and v2; any other path is none.
TEST(SlurmStepOf, TheJobStepAndWhatIsBelowFromSlurmsNames) {
  using dltune::host::slurm_step_of;
  const auto v1 = slurm_step_of("/slurm_vm/uid_0/job_3/step_batch/task_0");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->job_id, "3");
  EXPECT_EQ(v1->step, "batch");
  EXPECT_EQ(v1->step_group, "/slurm_vm/uid_0/job_3/step_batch");
  EXPECT_EQ(v1->below, "task_0");
  const auto v2 = slurm_step_of("/system.slice/node1_slurmstepd.scope/job_4711/step_0/user/task_2");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->job_id, "4711");
  EXPECT_EQ(v2->step, "0");
  EXPECT_EQ(v2->step_group, "/system.slice/node1_slurmstepd.scope/job_4711/step_0");
  EXPECT_EQ(v2->below, "user/task_2");
  const auto at_step = slurm_step_of("/slurm/uid_1000/job_9/step_extern");
  ASSERT_TRUE(at_step);
  EXPECT_EQ(at_step->step, "extern");
  EXPECT_EQ(at_step->below, "");
  for (const char* none :
       {"/", "", "slurm/uid_0/job_3/step_0", "/slurm/uid_0/job_3",  // no step
        "/user.slice/job_3/step_0",                                 // nothing of Slurm's above
        "/job_3/step_0/task_0", "/slurm/uid_0/job_x/step_0", "/slurm/uid_0/job_99999999999/step_0",
        "/slurm/uid_0/job_3/step_", "/slurm/uid_0/job_3/step_0/../../x",
        "/slurm/uid_0/job_3/step_0/a b", "/process_api/6d41582f3bbe8396e2af50c9329a72bb"})
    EXPECT_FALSE(slurm_step_of(none)) << none;
}

}  // namespace cgroup_layout_test

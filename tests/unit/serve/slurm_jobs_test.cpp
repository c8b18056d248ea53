// Slurm's job cgroups on fixture hosts, as Slurm 22.05's cgroup plugins lay them out (v1: the
// slurm root per node, uid_U, job_J, step_S, task_T; v2: slurmstepd.scope's job_J): found with
// their job id, user and steps; their processes counted from the groups below them; serve
// labels their series with slurm_job_id and user; top and record find a job's group by its id.
#include <sys/stat.h>
#include <cstdint>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/cgroup.hpp"
#include "monitor/sampler.hpp"
#include "monitor/scope.hpp"
#include "serve/exposition.hpp"
#include "serve/job_groups.hpp"
#include "support/temp_tree.hpp"
#include "unit/serve/exposition_parser.hpp"

namespace dltune::serve::slurm_jobs_test {
namespace {

using dltune::testing::TempTree;
namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kMountV1 =
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n";
constexpr const char* kMountV2 =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

// A v1 Slurm job as slurmd makes it here: the memory hierarchy has the tasks' groups (where the
// processes are), cpuset and freezer the steps'; `root` is slurm or slurm_NODE.
void v1_job(TempTree& t, const std::string& root, unsigned uid, const std::string& job,
            const std::vector<std::pair<std::string, std::string>>& step_pids) {
  const std::string j = "/" + root + "/uid_" + std::to_string(uid) + "/job_" + job;
  t.write("sys/fs/cgroup/memory" + j + "/memory.usage_in_bytes", "1048576\n");
  t.write("sys/fs/cgroup/memory" + j + "/memory.limit_in_bytes", "2097152\n");
  t.write("sys/fs/cgroup/memory" + j + "/cgroup.procs", "");
  for (const auto& [step, pids] : step_pids) {
    t.write("sys/fs/cgroup/memory" + j + "/step_" + step + "/cgroup.procs", "");
    t.write("sys/fs/cgroup/memory" + j + "/step_" + step + "/task_0/cgroup.procs", pids);
    t.write("sys/fs/cgroup/cpuset" + j + "/step_" + step + "/cgroup.procs", pids);
    t.write("sys/fs/cgroup/freezer" + j + "/step_" + step + "/cgroup.procs", pids);
  }
}

// st_ino of a directory in the tree, by its path in the root ("/sys/...").
std::uint64_t inode_of(const TempTree& t, const std::string& dir) {
  struct stat st {};
  return ::stat((t.dir() / dir.substr(1)).c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(SlurmJobs, FoundOnV1WithTheirIdUserAndStepsInJobOrder) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  v1_job(t, "slurm_node7", 1000, "12", {{"batch", "101\n102\n"}, {"extern", "100\n"}});
  v1_job(t, "slurm_node7", 0, "9", {{"0", "200\n"}});
  t.write("sys/fs/cgroup/memory/slurm_node7/uid_1000/memory.usage_in_bytes", "1\n");
  t.mkdir("sys/fs/cgroup/memory/slurm_node7/uid_1000/not_a_job");
  // Numbers past 32 bits are no uid or job id (and no crash).
  t.mkdir("sys/fs/cgroup/memory/slurm_node7/uid_99999999999999999999999/job_1");
  t.mkdir("sys/fs/cgroup/memory/slurm_node7/uid_1000/job_4294967296");
  t.mkdir("sys/fs/cgroup/memory/dltune/run-1");  // dltune's own: not Slurm's
  const auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout) << layout.error().message();
  const auto jobs = host::discover_slurm_jobs(t.root(), *layout);
  ASSERT_TRUE(jobs) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job_id, "9") << "by number, not by text";
  EXPECT_EQ((*jobs)[0].path, "/slurm_node7/uid_0/job_9");
  EXPECT_EQ((*jobs)[0].uid, 0u);
  EXPECT_EQ((*jobs)[1].path, "/slurm_node7/uid_1000/job_12");
  EXPECT_EQ((*jobs)[1].uid, 1000u);
  EXPECT_EQ((*jobs)[1].steps, (std::vector<std::string>{"batch", "extern"}));
  // The directory the inode is of (the watcher stats it after each sample): the job's own.
  EXPECT_EQ((*jobs)[1].dir, "/sys/fs/cgroup/memory/slurm_node7/uid_1000/job_12");
  EXPECT_EQ((*jobs)[1].inode, inode_of(t, (*jobs)[1].dir));
  EXPECT_NE((*jobs)[0].inode, (*jobs)[1].inode);
}

TEST(SlurmJobs, FoundOnV2BelowSlurmstepdsScopeWithTheOwnerOfAProcess) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  const std::string j = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_77";
  t.write(j + "/memory.current", "4096\n");
  t.write(j + "/cgroup.procs", "");
  t.write(j + "/step_0/user/task_0/cgroup.procs", "4242\n");
  t.write(j + "/step_extern/slurm_processes/cgroup.procs", "");
  t.write("sys/fs/cgroup/system.slice/slurmstepd.scope/system/cgroup.procs", "1\n");
  t.write("proc/4242/status", "Name:\tpython3\nUid:\t1001\t1001\t1001\t1001\n");
  const auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout);
  const auto jobs = host::discover_slurm_jobs(t.root(), *layout);
  ASSERT_TRUE(jobs) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].path, "/system.slice/slurmstepd.scope/job_77");
  EXPECT_EQ((*jobs)[0].job_id, "77");
  EXPECT_EQ((*jobs)[0].uid, 1001u);
  EXPECT_EQ((*jobs)[0].steps, (std::vector<std::string>{"0", "extern"}));
  EXPECT_EQ((*jobs)[0].dir, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_77");
  EXPECT_EQ((*jobs)[0].inode, inode_of(t, (*jobs)[0].dir));
}

TEST(SlurmJobs, NoneWithoutSlurmAndAJobIdIsLookedUpOrRefusedWithTheJobsHere) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  t.mkdir("sys/fs/cgroup/memory/dltune");
  const auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout);
  auto jobs = host::discover_slurm_jobs(t.root(), *layout);
  ASSERT_TRUE(jobs);
  EXPECT_TRUE(jobs->empty());
  auto none = monitor::slurm_job_cgroup(t.root(), "5");
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message(), HasSubstr("--slurm-job 5"));
  EXPECT_THAT(none.error().message(), HasSubstr("no Slurm job has a cgroup here"));

  v1_job(t, "slurm", 1000, "5", {{"0", "300\n"}});
  v1_job(t, "slurm", 1000, "6", {{"0", "301\n"}});
  const auto five = monitor::slurm_job_cgroup(t.root(), "5");
  ASSERT_TRUE(five) << five.error().message();
  EXPECT_EQ(*five, "/slurm/uid_1000/job_5");
  const auto seven = monitor::slurm_job_cgroup(t.root(), "7");
  ASSERT_FALSE(seven);
  EXPECT_THAT(seven.error().message(), HasSubstr("its Slurm jobs: 5, 6"));
  for (const char* bad : {"", "abc", "5;rm", "-1", "1234567890123456789"}) {
    const auto r = monitor::slurm_job_cgroup(t.root(), bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_THAT(r.error().message(), HasSubstr("expected a job id")) << bad;
  }
}

TEST(SlurmJobs, AJobsProcessesAreThoseOfTheGroupsBelowIt) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  v1_job(t, "slurm", 1000, "12", {{"batch", "101\n102\n"}, {"extern", "100\n"}});
  auto c = monitor::CgroupCollector::open(t.root(), "/slurm/uid_1000/job_12");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{100, 101, 102}));
  std::optional<monitor::Cgroup> out;
  monitor::Notices notices;
  ASSERT_TRUE(c->collect(out, notices));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->pids, 3u);
  EXPECT_EQ(out->memory_bytes, 1048576u);
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{100, 101, 102}));  // what that collect read
  // A step that ends takes its processes with it; a new one brings its own: the next sample.
  fs::remove_all(t.dir() / "sys/fs/cgroup/memory/slurm/uid_1000/job_12/step_batch");
  t.write("sys/fs/cgroup/memory/slurm/uid_1000/job_12/step_1/task_0/cgroup.procs", "103\n");
  ASSERT_TRUE(c->collect(out, notices));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->pids, 2u);
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{100, 103}));
}

TEST(SlurmJobs, AGroupsProcessesIncludeThoseOfChildrenWithADotInTheirName) {
  // systemd's units are groups with dots (v2): user.slice/session-1.scope holds the processes.
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  t.write("sys/fs/cgroup/user.slice/memory.current", "1\n");
  t.write("sys/fs/cgroup/user.slice/cgroup.procs", "");
  t.write("sys/fs/cgroup/user.slice/session-1.scope/cgroup.procs", "501\n502\n");
  t.write("sys/fs/cgroup/user.slice/user@0.service/app.slice/cgroup.procs", "600\n");
  auto c = monitor::CgroupCollector::open(t.root(), "/user.slice");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->pids(), (std::vector<pid_t>{501, 502, 600}));
}

TEST(SlurmJobs, ServeLabelsEachJobsSeriesWithItsIdAndUser) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  v1_job(t, "slurm", 4000000, "12", {{"0", "101\n"}});
  t.write("sys/fs/cgroup/memory/dltune/run-1/memory.usage_in_bytes", "7\n");
  t.write("sys/fs/cgroup/memory/dltune/run-1/cgroup.procs", "");
  const auto root = t.root();
  JobGroups groups(root, {}, true);
  std::vector<monitor::Cgroup> out;
  monitor::Notices notices;
  groups.collect(out, notices);
  ASSERT_EQ(out.size(), 3u) << "the job, its step, dltune's own; "
                            << ::testing::PrintToString(notices.take());
  std::string text;
  TextSink sink(text);
  render_jobs(out, &groups.slurm_jobs(), sink);
  const auto e = testing::parse_exposition(text);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  // A uid a tree's host has no name for is its number.
  const auto* slurm = e.find(
      "dltune_job_memory_limit_bytes",
      {{"cgroup", "/slurm/uid_4000000/job_12"}, {"slurm_job_id", "12"}, {"user", "4000000"}});
  ASSERT_NE(slurm, nullptr) << text;
  EXPECT_EQ(slurm->value_text, "2097152");
  const auto* own = e.find("dltune_job_memory_bytes", {{"cgroup", "/dltune/run-1"}});
  ASSERT_NE(own, nullptr) << text;
  EXPECT_EQ(own->labels.count("slurm_job_id"), 0u) << "dltune's own jobs carry no Slurm labels";
  EXPECT_EQ(slurm->labels.count("step"), 0u) << "the job's own group: all its steps";
  const auto procs = e.all("dltune_job_processes", {{"slurm_job_id", "12"}});
  ASSERT_EQ(procs.size(), 2u) << text;
  for (const auto* p : procs) EXPECT_EQ(p->value_text, "1") << "the task's process, below";
  // The step's own series, labelled with it.
  const auto* step = e.find("dltune_job_processes", {{"cgroup", "/slurm/uid_4000000/job_12/step_0"},
                                                     {"slurm_job_id", "12"},
                                                     {"user", "4000000"},
                                                     {"step", "0"}});
  ASSERT_NE(step, nullptr) << text;
  EXPECT_EQ(step->value_text, "1");
}

// A job with a batch step and an srun step: one series set for the job and one per step; a step
// that ends is dropped at the next sample, one that starts is found.
TEST(SlurmJobs, ServeFollowsEachStepOfAJob) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  v1_job(t, "slurm", 1000, "12", {{"batch", "101\n"}, {"0", "102\n103\n"}});
  const auto root = t.root();
  JobGroups groups(root, {}, true);
  std::vector<monitor::Cgroup> out;
  monitor::Notices notices;
  const auto steps_of = [&] {
    groups.collect(out, notices);
    std::string text;
    TextSink sink(text);
    render_jobs(out, &groups.slurm_jobs(), sink);
    const auto e = testing::parse_exposition(text);
    std::map<std::string, std::string> procs;  // step -> processes
    for (const auto* p : e.all("dltune_job_processes", {{"slurm_job_id", "12"}}))
      procs[p->labels.count("step") ? p->labels.at("step") : "(job)"] = p->value_text;
    return procs;
  };
  EXPECT_EQ(steps_of(),
            (std::map<std::string, std::string>{{"(job)", "3"}, {"0", "2"}, {"batch", "1"}}));
  fs::remove_all(t.dir() / "sys/fs/cgroup/memory/slurm/uid_1000/job_12/step_0");
  fs::remove_all(t.dir() / "sys/fs/cgroup/cpuset/slurm/uid_1000/job_12/step_0");
  fs::remove_all(t.dir() / "sys/fs/cgroup/freezer/slurm/uid_1000/job_12/step_0");
  t.write("sys/fs/cgroup/memory/slurm/uid_1000/job_12/step_1/cgroup.procs", "");
  t.write("sys/fs/cgroup/memory/slurm/uid_1000/job_12/step_1/task_0/cgroup.procs", "104\n");
  EXPECT_EQ(steps_of(),
            (std::map<std::string, std::string>{{"(job)", "2"}, {"1", "1"}, {"batch", "1"}}));
}

}  // namespace
}  // namespace dltune::serve::slurm_jobs_test

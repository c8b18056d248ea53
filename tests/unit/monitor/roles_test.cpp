// Who is who in a job's process tree: the main process, its DataLoader workers, other children.
#include <gtest/gtest.h>

#include "monitor/roles.hpp"

namespace roles_test {

using namespace dltune::monitor;

namespace {

Process proc(pid_t pid, pid_t ppid, std::string comm, std::string cmd) {
  Process p;
  p.pid = pid;
  p.ppid = ppid;
  p.comm = std::move(comm);
  p.cmdline = std::move(cmd);
  return p;
}

}  // namespace

TEST(Roles, DescendantRole) {
  const std::string_view main = "python train.py --epochs 3";
  EXPECT_EQ(descendant_role("pt_data_worker", "python train.py", "x"), Role::kWorker);
  EXPECT_EQ(descendant_role("python", main, main), Role::kWorker);
  EXPECT_EQ(descendant_role("python3",
                            "/usr/bin/python3 -c from multiprocessing.spawn import spawn_main; "
                            "spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork",
                            main),
            Role::kWorker);
  EXPECT_EQ(descendant_role("python3",
                            "/usr/bin/python3 -c from multiprocessing.forkserver import main; "
                            "main(8, 9, ['__main__'], **{'sys_path': []})",
                            main),
            Role::kWorker);
  EXPECT_EQ(descendant_role("sh", "/bin/sh -c nvidia-smi", main), Role::kChild);
  // pyenv's shim (a bash script) forks subshells with its own command line before it execs
  // python: they are not DataLoader workers.
  const std::string shim = "bash /home/u/.pyenv/shims/python train.py";
  EXPECT_EQ(descendant_role("bash", shim, shim), Role::kChild);
  EXPECT_EQ(descendant_role("pyenv", shim, shim), Role::kChild);
  EXPECT_EQ(descendant_role("python3", "python3 train.py", "python3 train.py"), Role::kWorker);
  EXPECT_EQ(descendant_role("kworker", "", ""), Role::kChild);  // empty never matches empty
}

TEST(Roles, AssignTreeCgroupAll) {
  std::vector<Process> ps = {proc(100, 1, "python", "python t.py"),
                             proc(101, 100, "pt_data_worker", "python t.py"),
                             proc(102, 100, "python", "python t.py"),
                             proc(103, 100, "sh", "sh -c ls"), proc(104, 103, "ls", "ls")};
  assign_roles(ps, Scope::Kind::kTree, 100);
  EXPECT_EQ(ps[0].role, Role::kMain);
  EXPECT_EQ(ps[1].role, Role::kWorker);
  EXPECT_EQ(ps[2].role, Role::kWorker);
  EXPECT_EQ(ps[3].role, Role::kChild);
  EXPECT_EQ(ps[4].role, Role::kChild);

  // In a cgroup the main is the member whose parent is outside: 100 (parent 1).
  assign_roles(ps, Scope::Kind::kCgroup, 0);
  EXPECT_EQ(ps[0].role, Role::kMain);
  EXPECT_EQ(ps[2].role, Role::kWorker);
  EXPECT_EQ(ps[3].role, Role::kChild);

  assign_roles(ps, Scope::Kind::kAll, 0);
  for (const auto& p : ps) EXPECT_EQ(p.role, Role::kOther);
}

TEST(Roles, InASlurmJobsGroupSlurmstepdIsNeverTheMain) {
  // slurmstepd [7.batch] (parent slurmd, outside) runs the batch script, which exec'd python.
  std::vector<Process> ps = {proc(50, 1, "slurmstepd", "slurmstepd: [7.batch]"),
                             proc(60, 50, "python3", "python3 train.py"),
                             proc(61, 60, "pt_data_worker", "python3 train.py")};
  assign_roles(ps, Scope::Kind::kCgroup, 0);
  EXPECT_EQ(ps[0].role, Role::kChild);
  EXPECT_EQ(ps[1].role, Role::kMain);
  EXPECT_EQ(ps[2].role, Role::kWorker);
  // A group of slurmstepd alone (a job between its steps) has no main.
  std::vector<Process> only = {proc(50, 1, "slurmstepd", "slurmstepd: [7.extern]")};
  assign_roles(only, Scope::Kind::kCgroup, 0);
  EXPECT_EQ(only[0].role, Role::kChild);
}

// A launcher's children are ranks, each with its own workers; in a group started from outside,
// the main process's siblings of its command line are ranks too.
TEST(Roles, RanksOfALauncherAndSiblingRanksInAGroup) {
  std::vector<Process> tree = {
      proc(100, 1, "dltune", "/usr/bin/dltune run --nproc 2 -- python t.py"),
      proc(200, 100, "python", "python t.py"),
      proc(201, 200, "pt_data_worker", "python t.py"),
      proc(300, 100, "python", "python t.py"),
      proc(301, 300, "python", "python t.py"),
      proc(302, 300, "gcc", "gcc -c x.c")};
  assign_roles(tree, Scope::Kind::kTree, 100);
  const std::vector<Role> want = {Role::kMain, Role::kRank,   Role::kWorker,
                                  Role::kRank, Role::kWorker, Role::kChild};
  for (std::size_t i = 0; i < tree.size(); ++i) EXPECT_EQ(tree[i].role, want[i]) << tree[i].pid;
  EXPECT_STREQ(role_name(Role::kRank), "rank");
  // Not a launcher: its children are what they were.
  auto plain = tree;
  plain[0].cmdline = "/usr/bin/dltune run -- python t.py --nproc 2";
  assign_roles(plain, Scope::Kind::kTree, 100);
  EXPECT_EQ(plain[1].role, Role::kChild);
  // The job's group: the ranks' parent (dltune) is outside it.
  std::vector<Process> group(tree.begin() + 1, tree.end());
  assign_roles(group, Scope::Kind::kCgroup, 0);
  EXPECT_EQ(group[0].role, Role::kMain);
  EXPECT_EQ(group[1].role, Role::kWorker);
  EXPECT_EQ(group[2].role, Role::kRank);
  EXPECT_EQ(group[3].role, Role::kWorker);
}

}  // namespace roles_test

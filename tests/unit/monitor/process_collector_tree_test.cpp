// ProcessCollector on a fixture tree: a kernel without /proc/PID/task/TID/children (the scan by
// ppid), a pid taken by a new process, a process gone, and files that are absent.
#include <gtest/gtest.h>

#include "monitor/sampler.hpp"
#include "support/temp_tree.hpp"

using dltune::monitor::Notices;
using dltune::monitor::Process;
using dltune::monitor::ProcessCollector;
using dltune::monitor::Role;
using dltune::monitor::Scope;
using dltune::testing::TempTree;

namespace {

// A /proc/PID/stat line in this VM's format (copied from /proc/self/stat, fields changed).
std::string stat_line(int pid, const std::string& comm, int ppid, unsigned start) {
  return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) +
         " 100 100 0 -1 4194304 500 0 3 0 120 30 0 0 20 0 4 0 " + std::to_string(start) +
         " 3133440 410 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 "
         "0 0\n";
}

void add(TempTree& t, int pid, const std::string& comm, int ppid, unsigned start,
         const std::string& cmdline) {
  const std::string d = "proc/" + std::to_string(pid);
  t.write(d + "/stat", stat_line(pid, comm, ppid, start))
      .write(d + "/cmdline", cmdline)
      .write(d + "/schedstat", "1000 200 3\n")
      .mkdir(d + "/task/" + std::to_string(pid));
}

const Process* find(const std::vector<Process>& ps, pid_t pid) {
  for (const auto& p : ps)
    if (p.pid == pid) return &p;
  return nullptr;
}

}  // namespace

TEST(ProcessCollectorTree, NoChildrenFilesReusedPidAndExit) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 100, "python", 1, 500, "python\0train.py\0"s);
  add(t, 101, "pt_data_worker", 100, 600, "python\0train.py\0"s);
  add(t, 102, "sh", 101, 700, "sh\0-c\0ls\0"s);
  add(t, 103, "sshd", 1, 50, "sshd\0"s);  // not in the tree
  t.write("proc/100/status",
          "Name:\tpython\nvoluntary_ctxt_switches:\t7\n"
          "nonvoluntary_ctxt_switches:\t2\n");
  ProcessCollector c(t.root(), Scope{Scope::Kind::kTree, 100, {}});
  Notices notices;
  std::vector<Process> out;
  auto ok = c.collect(out, notices);
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].pid, 100);
  EXPECT_EQ(out[0].role, Role::kMain);
  EXPECT_EQ(out[0].cmdline, "python train.py");
  EXPECT_EQ(out[0].voluntary_switches, 7u);
  EXPECT_EQ(out[0].involuntary_switches, 2u);
  EXPECT_FALSE(out[0].rchar);  // no io file: empty, not an error
  EXPECT_EQ(out[0].run_ns, 1000u);
  EXPECT_EQ(out[0].rss_bytes, 410u * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(out[1].role, Role::kWorker);
  EXPECT_EQ(out[2].role, Role::kChild);
  EXPECT_FALSE(out[2].voluntary_switches);  // no status file
  auto said = notices.take();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("children"), std::string::npos) << said[0];

  // 102 is now another process (started later, exec'd ls) and 101 has exited.
  std::filesystem::remove_all(t.dir() / "proc/101");
  t.write("proc/102/stat", stat_line(102, "ls", 100, 900)).write("proc/102/cmdline", "ls\0-l\0"s);
  ok = c.collect(out, notices);
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(find(out, 101), nullptr);
  const auto* p = find(out, 102);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->start_ticks, 900u);
  EXPECT_EQ(p->comm, "ls");
  EXPECT_EQ(p->cmdline, "ls -l");  // read again for the new process
  EXPECT_EQ(p->ppid, 100);
  EXPECT_TRUE(notices.take().empty());  // said once
}

TEST(ProcessCollectorTree, GarbledStatIsAnErrorNamingTheField) {
  TempTree t;
  t.write("proc/100/stat", "100 (python) S 1 100 100 0 -1 4194304 5x0\n").mkdir("proc/100/task");
  ProcessCollector c(t.root(), Scope{Scope::Kind::kCgroup, 0, {}});
  Notices notices;
  std::vector<Process> out;
  const auto ok = c.collect(out, notices, {100});
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().message().find("minflt"), std::string::npos) << ok.error().message();
}

TEST(ProcessCollectorTree, NoScopeNoProcesses) {
  TempTree t;
  add(t, 100, "python", 1, 500, "python");
  ProcessCollector c(t.root(), Scope{});
  Notices notices;
  std::vector<Process> out(3);
  ASSERT_TRUE(c.collect(out, notices));
  EXPECT_TRUE(out.empty());
}

// Under a launcher each rank's number comes from the RANK its launcher put in its environment:
// read for the ranks (and the main process), not for their workers; a process without it, or
// with a value that is not a rank, has none; an exec reads the new environment.
TEST(ProcessCollectorTree, RanksCarryTheRankOfTheirEnvironment) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 200, "dltune", 1, 500, "dltune\0run\0--nproc\0003\0--\0python\0train.py\0"s);
  add(t, 201, "python", 200, 510, "python\0train.py\0"s);
  add(t, 202, "python", 200, 520, "python\0train.py\0"s);
  add(t, 203, "python", 200, 530, "python\0train.py\0"s);
  add(t, 204, "pt_data_worker", 202, 600, "python\0train.py\0"s);
  t.write("proc/201/environ", "PATH=/usr/bin\0LOCAL_RANK=0\0RANK=2\0"s)
      .write("proc/202/environ", "RANK=0\0WORLD_SIZE=3\0"s)
      .write("proc/203/environ", "RANK=-1\0SLURM_PROCID=4\0"s)  // RANK set, not a rank
      .write("proc/204/environ", "RANK=0\0"s);                  // a worker inherits it: not read
  ProcessCollector c(t.root(), Scope{Scope::Kind::kTree, 200, {}});
  Notices notices;
  std::vector<Process> out;
  ASSERT_TRUE(c.collect(out, notices));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].role, Role::kMain);
  EXPECT_FALSE(out[0].rank);  // no environ file
  EXPECT_EQ(out[1].role, Role::kRank);
  EXPECT_EQ(out[1].rank, 2);
  EXPECT_EQ(out[2].rank, 0);
  EXPECT_FALSE(out[3].rank);
  EXPECT_EQ(out[4].role, Role::kWorker);
  EXPECT_FALSE(out[4].rank);
  // srun's and mpirun's tasks carry their rank under their own names.
  {
    TempTree u;
    add(u, 300, "python", 1, 500, "python\0train.py\0"s);
    add(u, 301, "python", 1, 510, "python\0train.py\0"s);
    u.write("proc/300/environ", "SLURM_PROCID=1\0PMI_RANK=9\0"s)
        .write("proc/301/environ", "OMPI_COMM_WORLD_RANK=2\0"s);
    for (const pid_t pid : {300, 301}) {
      ProcessCollector one(u.root(), Scope{Scope::Kind::kTree, pid, {}});
      std::vector<Process> got;
      ASSERT_TRUE(one.collect(got, notices));
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].rank, pid == 300 ? 1 : 2);
    }
  }
  // Read once: a changed file is not read again for the same process ...
  t.write("proc/201/environ", "RANK=5\0"s);
  ASSERT_TRUE(c.collect(out, notices));
  EXPECT_EQ(out[1].rank, 2);
  // ... but an exec (a new name) has a new environment.
  t.write("proc/201/stat", stat_line(201, "python3.11", 200, 510));
  ASSERT_TRUE(c.collect(out, notices));
  EXPECT_EQ(out[1].rank, 5);
}

// ProcessCollector on a fixture tree: a kernel without /proc/PID/task/TID/children (the scan by
// ppid), a pid taken by a new process, a process gone, and files that are absent.
#include <cerrno>
#include <filesystem>

#include <gtest/gtest.h>

#include "monitor/sampler.hpp"
#include "support/temp_tree.hpp"

namespace process_collector_tree_test {

using dltune::monitor::Notices;
using dltune::monitor::Process;
using dltune::monitor::ProcessCollector;
using dltune::monitor::ProcessDetail;
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

// stat_line with its state, utime and number of threads given.
std::string stat_with(int pid, const std::string& comm, int ppid, unsigned start, char state,
                      unsigned utime, unsigned threads) {
  std::string line = stat_line(pid, comm, ppid, start);
  line.replace(line.find(") S "), 4, std::string(") ") + state + " ");
  line.replace(line.find(" 120 30 "), 8, " " + std::to_string(utime) + " 30 ");
  line.replace(line.find(" 20 0 4 0 "), 10, " 20 0 " + std::to_string(threads) + " 0 ");
  return line;
}

void add(TempTree& t, int pid, const std::string& comm, int ppid, unsigned start,
         const std::string& cmdline) {
  const std::string d = "proc/" + std::to_string(pid);
  t.write(d + "/stat", stat_line(pid, comm, ppid, start))
      .write(d + "/cmdline", cmdline)
      .write(d + "/schedstat", "1000 200 3\n")
      .mkdir(d + "/task/" + std::to_string(pid));
}

std::vector<pid_t> pids_of(const std::vector<Process>& ps) {
  std::vector<pid_t> v;
  for (const auto& p : ps) v.push_back(p.pid);
  return v;
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

// The same processes as the sample before are sampled where they are kept; one gone mid-sample
// is closed up over, and the others keep their own files and readings; a new one is merged in.
TEST(ProcessCollectorTree, TheSameProcessesAgainWithOneGoneMidSample) {
  using namespace std::string_literals;
  TempTree t;
  for (int pid : {100, 101, 102, 103}) add(t, pid, "p" + std::to_string(pid), 1, 500, "p\0"s);
  auto root = t.root();
  root.inject_fault(
      {dltune::host::FaultOp::kRead, "/nowhere", EIO});  // the table, shared by the files
  ProcessCollector c(root, Scope{Scope::Kind::kCgroup, 0, {}});
  Notices notices;
  std::vector<Process> out;
  ASSERT_TRUE(c.collect(out, notices, {100, 101, 102, 103}));
  ASSERT_EQ(out.size(), 4u);
  // 101 exited: its stat answers ESRCH, through its kept descriptor and opened again; the
  // others ran.
  root.inject_fault({dltune::host::FaultOp::kRead, "/proc/101/stat", ESRCH});
  for (int pid : {100, 102, 103})
    t.write("proc/" + std::to_string(pid) + "/stat",
            stat_with(pid, "p" + std::to_string(pid), 1, 500, 'S', 200 + pid, 4));
  ASSERT_TRUE(c.collect(out, notices, {100, 101, 102, 103}));
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const int pid = i == 0 ? 100 : static_cast<int>(i) + 101;
    EXPECT_EQ(out[i].pid, pid);
    EXPECT_EQ(out[i].comm, "p" + std::to_string(pid));
    EXPECT_EQ(out[i].utime, 200u + static_cast<unsigned>(pid));
  }
  // The three again (the same as kept), then with a new one merged in among them.
  t.write("proc/103/stat", stat_with(103, "p103", 1, 500, 'S', 999, 4));
  ASSERT_TRUE(c.collect(out, notices, {100, 102, 103}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].pid, 103);
  EXPECT_EQ(out[2].utime, 999u);
  add(t, 99, "new", 1, 700, "new\0"s);
  ASSERT_TRUE(c.collect(out, notices, {99, 100, 102, 103}));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].comm, "new");
  EXPECT_EQ(out[1].utime, 300u);
  EXPECT_EQ(out[3].utime, 999u);
  EXPECT_TRUE(notices.take().empty());
}

// A kernel thread (PF_KTHREAD in stat's flags) has no command line: none is read, also when
// its name changes with its work as a kworker's does.
TEST(ProcessCollectorTree, AKernelThreadsCommandLineIsNeverRead) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 100, "python", 1, 500, "python\0train.py\0"s);
  const auto kworker = [](const std::string& comm) {
    std::string line = stat_line(43, comm, 2, 40);
    line.replace(line.find(" -1 4194304 "), 12, " -1 69238880 ");  // a kworker's, on this VM
    return line;
  };
  add(t, 43, "kworker/1:1-events", 2, 40, "a file a kernel thread never has\0"s);
  t.write("proc/43/stat", kworker("kworker/1:1-events"));
  ProcessCollector c(t.root(), Scope{Scope::Kind::kAll, 0, {}});
  Notices notices;
  std::vector<Process> out;
  ASSERT_TRUE(c.collect(out, notices));
  ASSERT_TRUE(find(out, 43) && find(out, 100));
  EXPECT_EQ(find(out, 43)->comm, "kworker/1:1-events");
  EXPECT_EQ(find(out, 43)->cmdline, "");
  EXPECT_EQ(find(out, 100)->cmdline, "python train.py");
  t.write("proc/43/stat", kworker("kworker/1:1-mm_percpu_wq"));
  ASSERT_TRUE(c.collect(out, notices));
  EXPECT_EQ(find(out, 43)->comm, "kworker/1:1-mm_percpu_wq");
  EXPECT_EQ(find(out, 43)->cmdline, "");
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

// torchrun's python3 starts each rank's python3: between its fork and its exec a rank is a copy
// of the launcher (its command line, no RANK), and the exec keeps the name. The stack's new
// place (stat's startstack, moved by every exec) says it exec'd: its command line and RANK are
// read again. The same place: read once, as before.
TEST(ProcessCollectorTree, AnExecThatKeepsTheNameIsSeenByItsNewStack) {
  using namespace std::string_literals;
  const auto with_stack = [](std::string line, unsigned long stack) {
    line.replace(line.find(" 18446744073709551615 1 1 0 "), 28,
                 " 18446744073709551615 1 1 " + std::to_string(stack) + " ");
    return line;
  };
  TempTree t;
  add(t, 300, "python3", 1, 500, "python3\0torchrun\0--nproc\0002\0train.py\0"s);
  add(t, 301, "python3", 300, 510, "python3\0torchrun\0--nproc\0002\0train.py\0"s);
  t.write("proc/300/stat", with_stack(stat_line(300, "python3", 1, 500), 140731000000000))
      .write("proc/301/stat", with_stack(stat_line(301, "python3", 300, 510), 140731000000000));
  ProcessCollector c(t.root(), Scope{Scope::Kind::kTree, 300, {}});
  Notices notices;
  std::vector<Process> out;
  ASSERT_TRUE(c.collect(out, notices));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].cmdline, "python3 torchrun --nproc 2 train.py");
  EXPECT_FALSE(out[1].rank);
  // Its exec: the rank's command line and environment, the same name.
  t.write("proc/301/cmdline", "python3\0-u\0train.py\0"s)
      .write("proc/301/environ", "RANK=1\0WORLD_SIZE=2\0"s);
  // Not yet: the same stack is the same program, whose command line was read.
  ASSERT_TRUE(c.collect(out, notices));
  EXPECT_EQ(out[1].cmdline, "python3 torchrun --nproc 2 train.py");
  t.write("proc/301/stat", with_stack(stat_line(301, "python3", 300, 510), 140735555555000));
  ASSERT_TRUE(c.collect(out, notices));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].cmdline, "python3 -u train.py");
  EXPECT_EQ(out[1].role, Role::kRank);
  EXPECT_EQ(out[1].rank, 1);
  // A process the reader may not trace shows 0 there: no exec seen from it, nothing read again.
  t.write("proc/301/cmdline", "python3\0other.py\0"s)
      .write("proc/301/stat", with_stack(stat_line(301, "python3", 300, 510), 0));
  ASSERT_TRUE(c.collect(out, notices));
  EXPECT_EQ(out[1].cmdline, "python3 -u train.py");
}

namespace {

bool opened(const dltune::host::Root& r, const std::string& path) {
  for (const auto& a : r.recorded())
    if (a.path == path) return true;
  return false;
}

}  // namespace

// ProcessDetail::switches_of_main_and_ranks_only: status is read (and kept open) for the main
// process and the ranks only; the others' switches are empty although their file is there. The
// default reads every process's.
TEST(ProcessCollectorTree, StatusOnlyForTheMainProcessAndTheRanks) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 100, "python", 1, 500, "python\0train.py\0"s);
  add(t, 101, "pt_data_worker", 100, 600, "python\0train.py\0"s);
  for (const int pid : {100, 101})
    t.write("proc/" + std::to_string(pid) + "/status", "Name:\tx\nvoluntary_ctxt_switches:\t" +
                                                           std::to_string(pid) +
                                                           "\nnonvoluntary_ctxt_switches:\t4\n");
  t.write("proc/101/io", "rchar: 5\nwchar: 6\nread_bytes: 7\nwrite_bytes: 8\n");
  Notices notices;
  {
    auto root = t.root();
    root.start_recording();
    ProcessDetail d;
    d.switches_of_main_and_ranks_only = true;
    ProcessCollector c(root, Scope{Scope::Kind::kTree, 100, {}}, d);
    std::vector<Process> out;
    for (int i = 0; i < 2; ++i) {  // the second through the descriptors kept
      auto ok = c.collect(out, notices);
      ASSERT_TRUE(ok) << ok.error().message();
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].role, Role::kMain);
      EXPECT_EQ(out[0].voluntary_switches, 100u);
      EXPECT_EQ(out[0].involuntary_switches, 4u);
      EXPECT_EQ(out[1].role, Role::kWorker);
      EXPECT_FALSE(out[1].voluntary_switches);
      EXPECT_FALSE(out[1].involuntary_switches);
      EXPECT_EQ(out[1].rchar, 5u);  // io and schedstat as before
      EXPECT_EQ(out[1].run_ns, 1000u);
    }
    EXPECT_TRUE(opened(root, "/proc/100/status"));
    EXPECT_FALSE(opened(root, "/proc/101/status"));
    EXPECT_TRUE(opened(root, "/proc/101/io"));
    // Back to the default: the worker's switches are read again.
    c.set_detail({});
    ASSERT_TRUE(c.collect(out, notices));
    EXPECT_EQ(out[0].voluntary_switches, 100u);
    EXPECT_EQ(out[1].voluntary_switches, 101u);
  }
  ProcessCollector all(t.root(), Scope{Scope::Kind::kTree, 100, {}});
  std::vector<Process> out;
  ASSERT_TRUE(all.collect(out, notices));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].voluntary_switches, 101u);
}

// ProcessDetail::pids (top's rows on screen): the others carry stat's fields (and cmdline) only;
// a process that enters the set has its files read from then on.
TEST(ProcessCollectorTree, FilesBeyondStatOnlyForTheDetailPids) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 100, "python", 1, 500, "python\0train.py\0"s);
  add(t, 101, "pt_data_worker", 100, 600, "python\0train.py\0"s);
  add(t, 103, "sshd", 1, 50, "sshd\0"s);
  t.write("proc/101/status", "voluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t4\n")
      .write("proc/101/io", "rchar: 5\nwchar: 6\nread_bytes: 7\nwrite_bytes: 8\n");
  Notices notices;
  std::vector<Process> out;

  ProcessDetail d;
  d.pids = std::vector<pid_t>{103, 100, 103};  // any order, repeats
  ProcessCollector top(t.root(), Scope{Scope::Kind::kAll, 0, {}}, d);
  ASSERT_TRUE(top.collect(out, notices));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].run_ns, 1000u);
  EXPECT_FALSE(out[1].run_ns);  // 101: not on screen
  EXPECT_FALSE(out[1].timeslices);
  EXPECT_EQ(out[1].utime, 120u);  // stat's fields all there
  EXPECT_EQ(out[1].rss_bytes, 410u * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(out[1].cmdline, "python train.py");
  EXPECT_EQ(out[2].run_ns, 1000u);
  // The view scrolled: 101 on screen, 100 not.
  d.pids = std::vector<pid_t>{101};
  top.set_detail(d);
  ASSERT_TRUE(top.collect(out, notices));
  EXPECT_FALSE(out[0].run_ns);
  EXPECT_EQ(out[1].run_ns, 1000u);
  EXPECT_FALSE(out[1].voluntary_switches);  // kAll: never status or io
  EXPECT_FALSE(out[2].run_ns);
  // An empty set: stat alone.
  d.pids = std::vector<pid_t>{};
  top.set_detail(d);
  ASSERT_TRUE(top.collect(out, notices));
  for (const auto& p : out) EXPECT_FALSE(p.run_ns) << p.pid;

  // A job tree: status, io and schedstat of the set only.
  d.pids = std::vector<pid_t>{100};
  ProcessCollector tree(t.root(), Scope{Scope::Kind::kTree, 100, {}}, d);
  ASSERT_TRUE(tree.collect(out, notices));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].run_ns, 1000u);
  EXPECT_FALSE(out[1].run_ns);
  EXPECT_FALSE(out[1].voluntary_switches);
  EXPECT_FALSE(out[1].rchar);
  EXPECT_EQ(out[1].role, Role::kWorker);  // roles need stat and cmdline only
  tree.set_detail({});
  ASSERT_TRUE(tree.collect(out, notices));
  EXPECT_EQ(out[1].voluntary_switches, 3u);
  EXPECT_EQ(out[1].rchar, 5u);
}

// A kept descriptor whose process has gone (the kernel's ESRCH on pread) while the pid already
// names a new process: the new process's files are opened afresh, and nothing of the old one
// (name, command line, switches, schedstat) is carried over, although the old files, replaced
// here by new ones, could still be read through the old descriptors.
TEST(ProcessCollectorTree, KeptDescriptorsOfAnExitedProcessAreNotReadForItsSuccessor) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 100, "python", 1, 500, "python\0train.py\0"s);
  add(t, 102, "sh", 100, 700, "sh\0-c\0ls\0"s);
  t.write("proc/102/status", "voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2\n");
  auto root = t.root();
  // The fault table, shared by the collector's copy of the root: faults added later reach it.
  root.inject_fault({dltune::host::FaultOp::kRead, "/proc/none", EIO, 0});
  ProcessCollector c(root, Scope{Scope::Kind::kCgroup, 0, "/job"});
  Notices notices;
  std::vector<Process> out;
  const std::vector<pid_t> members{100, 102};
  ASSERT_TRUE(c.collect(out, notices, members));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].voluntary_switches, 1u);

  // 102 exits; a new process gets its pid: new files (new inodes), the old descriptors see
  // ESRCH.
  std::filesystem::remove_all(t.dir() / "proc/102");
  add(t, 102, "ls", 100, 900, "ls\0-l\0"s);
  t.write("proc/102/status", "voluntary_ctxt_switches:\t30\nnonvoluntary_ctxt_switches:\t40\n")
      .write("proc/102/schedstat", "5 6 7\n");
  root.inject_fault({dltune::host::FaultOp::kRead, "/proc/102/stat", ESRCH, 1});
  auto ok = c.collect(out, notices, members);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(root.faults_fired(), 1);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].pid, 102);
  EXPECT_EQ(out[1].start_ticks, 900u);
  EXPECT_EQ(out[1].comm, "ls");
  EXPECT_EQ(out[1].cmdline, "ls -l");
  EXPECT_EQ(out[1].voluntary_switches, 30u);
  EXPECT_EQ(out[1].involuntary_switches, 40u);
  EXPECT_EQ(out[1].run_ns, 5u);
  EXPECT_EQ(out[1].timeslices, 7u);

  // The same when the stat descriptor still reads (the new process's text, another start time):
  // the other kept files are reopened.
  t.write("proc/102/stat", stat_line(102, "ls", 100, 950));
  std::filesystem::remove(t.dir() / "proc/102/status");
  std::filesystem::remove(t.dir() / "proc/102/schedstat");
  t.write("proc/102/status", "voluntary_ctxt_switches:\t8\nnonvoluntary_ctxt_switches:\t9\n")
      .write("proc/102/schedstat", "11 12 13\n");
  ASSERT_TRUE(c.collect(out, notices, members));
  EXPECT_EQ(out[1].start_ticks, 950u);
  EXPECT_EQ(out[1].voluntary_switches, 8u);
  EXPECT_EQ(out[1].run_ns, 11u);

  // Gone for good, its pid still listed (cgroup.procs lags): not there, not an error.
  std::filesystem::remove_all(t.dir() / "proc/102");
  root.inject_fault({dltune::host::FaultOp::kRead, "/proc/102/*", ESRCH, 0});
  ok = c.collect(out, notices, members);
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].pid, 100);
  EXPECT_TRUE(notices.take().empty());
}

// ProcessDetail::every_sample and others_every (top's rows on screen): the others' stat is read
// every fourth sample, a share of them each time (by pid), and carried between with the time of
// its reading; /proc is listed as often, so a new process appears at the next listing and one
// that exited stays until its turn or that listing.
TEST(ProcessCollectorTree, OffScreenProcessesAreReadInTurnAndCarriedBetween) {
  using namespace std::string_literals;
  TempTree t;
  for (int pid = 100; pid < 110; ++pid) add(t, pid, "p" + std::to_string(pid), 1, 500, "p\0"s);
  const auto set_utime = [&t](int pid, unsigned utime) {
    t.write("proc/" + std::to_string(pid) + "/stat",
            stat_with(pid, "p" + std::to_string(pid), 1, 500, 'S', utime, 4));
  };
  ProcessDetail d;
  d.pids = std::vector<pid_t>{100};
  d.every_sample = std::vector<pid_t>{100};
  d.others_every = 4;
  ProcessCollector top(t.root(), Scope{Scope::Kind::kAll, 0, {}}, d);
  Notices notices;
  std::vector<Process> out;
  // Turn 0: each process is new, so read.
  ASSERT_TRUE(top.collect(out, notices, {}, 1000));
  ASSERT_EQ(out.size(), 10u);
  for (const auto& p : out) {
    EXPECT_EQ(p.stat_ns, 1000) << p.pid;
    EXPECT_EQ(p.utime, 120u) << p.pid;
  }
  for (int pid = 100; pid < 110; ++pid) set_utime(pid, 220);
  add(t, 110, "new", 1, 900, "new\0"s);

  // Turn 1: 100 (on screen) and the pids whose turn it is, (pid + 1) % 4 == 0: 103 and 107.
  ASSERT_TRUE(top.collect(out, notices, {}, 2000));
  ASSERT_EQ(out.size(), 10u);  // 110 waits for the next listing
  for (const auto& p : out) {
    const bool read = p.pid == 100 || p.pid == 103 || p.pid == 107;
    EXPECT_EQ(p.stat_ns, read ? 2000 : 1000) << p.pid;
    EXPECT_EQ(p.utime, read ? 220u : 120u) << p.pid;
    EXPECT_EQ(p.comm, "p" + std::to_string(p.pid));          // carried with its name
    EXPECT_EQ(p.run_ns.has_value(), p.pid == 100) << p.pid;  // nothing beyond stat if carried
  }
  // 105 exits: carried until its turn, (105 + 3) % 4 == 0.
  std::filesystem::remove_all(t.dir() / "proc/105");
  ASSERT_TRUE(top.collect(out, notices, {}, 3000));  // turn 2: 102, 106 read
  EXPECT_TRUE(find(out, 105));
  EXPECT_EQ(find(out, 102)->stat_ns, 3000);
  EXPECT_EQ(find(out, 101)->stat_ns, 1000);
  // Turn 3: 101, 105 and 109. (On /proc, 105's kept descriptor now reads nothing and it goes;
  // a fixture's file, removed, is still read through it, so here the listing drops it.)
  ASSERT_TRUE(top.collect(out, notices, {}, 4000));
  EXPECT_EQ(find(out, 101)->utime, 220u);
  EXPECT_FALSE(find(out, 110));
  ASSERT_TRUE(top.collect(out, notices, {}, 5000));  // turn 4: a listing; 110 is new: read
  EXPECT_FALSE(find(out, 105));
  ASSERT_TRUE(find(out, 110));
  EXPECT_EQ(find(out, 110)->stat_ns, 5000);
  // Over four turns every process was read once.
  for (int pid : {100, 101, 102, 103, 104, 106, 107, 108, 109})
    EXPECT_GE(find(out, pid)->stat_ns, 2000) << pid;

  // Without the set (a sort by the run queue), every process every sample again.
  top.set_detail({});
  ASSERT_TRUE(top.collect(out, notices, {}, 6000));
  for (const auto& p : out) EXPECT_EQ(p.stat_ns, 6000) << p.pid;
}

// ProcessDetail::threads_every (every CLI sampler): a member's task directory is listed in its
// turn; between, the main process's known threads' children files are read, so its child is
// found at once and one forked by a new thread at the next listing; a worker's children files
// are read in its turn.
TEST(ProcessCollectorTree, ThreadsAreListedInTurnAndKnownThreadsChildrenEverySample) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 99, "python", 1, 500, "python\0train.py\0"s);
  add(t, 100, "pt_data_worker", 99, 600, "python\0train.py\0"s);
  t.write("proc/99/task/99/children", "100 ").write("proc/100/task/100/children", "");
  ProcessDetail d;
  d.threads_every = 3;
  ProcessCollector tree(t.root(), Scope{Scope::Kind::kTree, 99, {}}, d);
  Notices notices;
  std::vector<Process> out;
  const auto pids = [&out] { return pids_of(out); };
  ASSERT_TRUE(tree.collect(out, notices));  // turn 0: every member new, listed
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100}));
  // A child of a worker's known thread: found in the worker's turn ((100 + 2) % 3 == 0: turn 2).
  add(t, 101, "sh", 100, 700, "sh\0"s);
  t.write("proc/100/task/100/children", "101 ");
  // A new thread of 99 (not its turn until (99 + turn) % 3 == 0, turn 3) with a child.
  add(t, 102, "sh", 99, 800, "sh\0"s);
  t.mkdir("proc/99/task/98").write("proc/99/task/98/children", "102 ");
  ASSERT_TRUE(tree.collect(out, notices));  // turn 1
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100}));
  ASSERT_TRUE(tree.collect(out, notices));  // turn 2
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100, 101}));
  ASSERT_TRUE(tree.collect(out, notices));  // turn 3: 99's task directory listed again
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100, 101, 102}));

  // A worker's (100's) children file is read in its turn only ((100 + turn) % 3 == 0: turn 5),
  // its children carried between; the main process's (99's) every sample.
  add(t, 103, "sh", 100, 900, "sh\0"s);
  t.write("proc/100/task/100/children", "101 103 ");
  add(t, 104, "sh", 99, 950, "sh\0"s);
  t.write("proc/99/task/99/children", "100 104 ");
  ASSERT_TRUE(tree.collect(out, notices));  // turn 4
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100, 101, 102, 104}));
  ASSERT_TRUE(tree.collect(out, notices));  // turn 5
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100, 101, 102, 103, 104}));
}

// A member whose stat counted one thread, listed as that thread alone, is not listed again: a
// thread it starts is seen once its stat counts it, and listed at the sample after.
TEST(ProcessCollectorTree, ASingleThreadedMembersTaskDirectoryIsNotListedAgain) {
  using namespace std::string_literals;
  TempTree t;
  add(t, 99, "python", 1, 500, "python\0train.py\0"s);
  t.write("proc/99/stat", stat_with(99, "python", 1, 500, 'S', 120, 1));
  add(t, 100, "sh", 99, 600, "sh\0"s);
  t.write("proc/99/task/99/children", "100 ").write("proc/100/task/100/children", "");
  ProcessCollector tree(t.root(), Scope{Scope::Kind::kTree, 99, {}});  // threads_every 1
  Notices notices;
  std::vector<Process> out;
  const auto pids = [&out] { return pids_of(out); };
  ASSERT_TRUE(tree.collect(out, notices));
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100}));
  // A second thread with a child, its stat not yet saying so: the directory is not listed.
  add(t, 102, "sh", 99, 800, "sh\0"s);
  t.mkdir("proc/99/task/98").write("proc/99/task/98/children", "102 ");
  ASSERT_TRUE(tree.collect(out, notices));
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100}));
  // Its stat counts two threads (read in this sample, after the members were found) ...
  t.write("proc/99/stat", stat_with(99, "python", 1, 500, 'R', 130, 2));
  ASSERT_TRUE(tree.collect(out, notices));
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100}));
  ASSERT_NE(find(out, 99), nullptr);
  EXPECT_EQ(find(out, 99)->threads, 2u);
  // ... so the next sample lists the directory and finds the new thread's child.
  ASSERT_TRUE(tree.collect(out, notices));
  EXPECT_EQ(pids(), (std::vector<pid_t>{99, 100, 102}));
}

// ProcessDetail::unchanged_every (every CLI sampler): a single-threaded process that was not
// running at its last reading and whose schedstat shows the same run time and timeslices keeps
// its reading as of now (stat, io and status not read: changes to them here stay unseen); a
// process with threads, one that was running, one whose schedstat moved, and one whose turn it
// is are read in full.
TEST(ProcessCollectorTree, AProcessThatHasNotRunKeepsItsReadingAsOfNow) {
  TempTree t;
  const auto put = [&t](int pid, char state, int threads, unsigned utime, unsigned rchar,
                        unsigned switches) {
    const std::string d = "proc/" + std::to_string(pid);
    t.write(d + "/stat", stat_with(pid, pid == 100 ? "bash" : "sleep", pid == 100 ? 1 : 100, 500,
                                   state, utime, static_cast<unsigned>(threads)))
        .write(d + "/io",
               "rchar: " + std::to_string(rchar) + "\nwchar: 6\nread_bytes: 7\nwrite_bytes: 8\n")
        .write(d + "/status", "voluntary_ctxt_switches:\t" + std::to_string(switches) +
                                  "\nnonvoluntary_ctxt_switches:\t1\n");
  };
  const auto every = [&put](unsigned utime, unsigned rchar, unsigned switches) {
    put(100, 'S', 1, utime, rchar, switches);  // the main process (a shell)
    put(101, 'S', 1, utime, rchar, switches);  // asleep
    put(102, 'S', 3, utime, rchar, switches);  // threads: its schedstat is its main thread's
    put(103, 'R', 1, utime, rchar, switches);  // running at its reading
  };
  for (int pid = 100; pid <= 103; ++pid) {
    add(t, pid, "x", 1, 500, "x");
    t.write("proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children", "");
  }
  t.write("proc/100/task/100/children", "101 102 103 ");
  every(120, 10, 5);
  ProcessDetail d;
  d.switches_of_main_and_ranks_only = true;
  d.unchanged_every = 4;
  ProcessCollector c(t.root(), Scope{Scope::Kind::kTree, 100, {}}, d);
  Notices notices;
  std::vector<Process> out;
  // Turn 0: each is new, and its schedstat read after its stat: read in full at turn 1 too.
  ASSERT_TRUE(c.collect(out, notices, {}, 1000));
  ASSERT_EQ(out.size(), 4u);
  every(220, 11, 6);
  ASSERT_TRUE(c.collect(out, notices, {}, 2000));
  for (const auto& p : out) {
    EXPECT_EQ(p.utime, 220u) << p.pid;
    EXPECT_EQ(p.rchar, 11u) << p.pid;
  }
  EXPECT_EQ(out[0].voluntary_switches, 6u);

  // Turn 2: schedstat unchanged, stat/io/status changed. 100 and 101 keep turn 1's reading as
  // of now; 102 (threads) and 103 (was running) are read. (102 + 2) % 4 == 0: its turn too.
  every(320, 12, 7);
  ASSERT_TRUE(c.collect(out, notices, {}, 3000));
  for (const auto& p : out) {
    const bool kept = p.pid == 100 || p.pid == 101;
    EXPECT_EQ(p.utime, kept ? 220u : 320u) << p.pid;
    EXPECT_EQ(p.rchar, kept ? 11u : 12u) << p.pid;
    EXPECT_EQ(p.wchar, 6u) << p.pid;
    EXPECT_EQ(p.stat_ns, 3000) << p.pid;  // as of now: a process that did not run, 0% CPU
    EXPECT_EQ(p.run_ns, 1000u) << p.pid;  // schedstat read every sample
    EXPECT_EQ(p.comm, p.pid == 100 ? "bash" : "sleep") << p.pid;
  }
  EXPECT_EQ(out[0].voluntary_switches, 6u);  // the main process's status, kept too
  EXPECT_EQ(out[0].role, Role::kMain);

  // Turn 3: 100 was switched in (timeslices moved, run time the same): read. (101 + 3) % 4 == 0:
  // 101's turn to be read in full, whatever its schedstat says.
  t.write("proc/100/schedstat", "1000 200 4\n");
  ASSERT_TRUE(c.collect(out, notices, {}, 4000));
  EXPECT_EQ(out[0].utime, 320u);
  EXPECT_EQ(out[0].voluntary_switches, 7u);
  EXPECT_EQ(out[0].timeslices, 4u);
  EXPECT_EQ(out[1].utime, 320u);
  EXPECT_EQ(out[1].rchar, 12u);

  // Turn 4: a change of run time alone is read; (100 + 4) % 4 == 0: 100's turn. Without
  // unchanged_every, every process is read every sample.
  every(420, 13, 8);
  t.write("proc/101/schedstat", "2000 200 3\n");
  ASSERT_TRUE(c.collect(out, notices, {}, 5000));
  EXPECT_EQ(out[0].utime, 420u);
  EXPECT_EQ(out[1].utime, 420u);
  EXPECT_EQ(out[1].run_ns, 2000u);
  every(520, 14, 9);
  ASSERT_TRUE(c.collect(out, notices, {}, 6000));  // turn 5: 100 and 101 unchanged
  EXPECT_EQ(out[0].utime, 420u);
  EXPECT_EQ(out[1].utime, 420u);
  c.set_detail({});
  ASSERT_TRUE(c.collect(out, notices, {}, 7000));
  for (const auto& p : out) EXPECT_EQ(p.utime, 520u) << p.pid;
}

// ProcessDetail::quiet_every (top's rows): a row kept unchanged for unchanged_every samples in a
// row (a forced full reading that finds it has not run counts too) is asked only every
// quiet_every samples, its reading and schedstat carried with their time between; once it has
// run it is asked every sample again.
TEST(ProcessCollectorTree, AQuietRowIsAskedInTurnsUntilItRuns) {
  TempTree t;
  add(t, 101, "sleep", 1, 500, "sleep");
  const auto threads_one = [&t](unsigned utime) {
    t.write("proc/101/stat", stat_with(101, "sleep", 1, 500, 'S', utime, 1));
  };
  threads_one(120);
  ProcessDetail d;
  d.pids = std::vector<pid_t>{101};
  d.every_sample = std::vector<pid_t>{101};
  d.others_every = 4;
  d.unchanged_every = 4;
  d.quiet_every = 2;
  ProcessCollector top(t.root(), Scope{Scope::Kind::kAll, 0, {}}, d);
  Notices notices;
  std::vector<Process> out;
  // Turns 0 and 1 read it in full; 2 keeps it (quiet 1); at 3, (101 + 3) % 4 == 0, a full
  // reading finds it has not run (quiet 2); 4 and 5 keep it (quiet 3, 4).
  for (int turn = 0; turn <= 5; ++turn) {
    ASSERT_TRUE(top.collect(out, notices, {}, (turn + 1) * 1000));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].stat_ns, (turn + 1) * 1000) << turn;
    EXPECT_EQ(out[0].run_ns, 1000u) << turn;
  }
  // Turn 6: (101 + 6) % 2 != 0: not asked. It ran meanwhile: its change is not seen yet, its
  // reading carried with turn 5's time.
  t.write("proc/101/schedstat", "5000 300 4\n");
  threads_one(125);
  ASSERT_TRUE(top.collect(out, notices, {}, 7000));
  EXPECT_EQ(out[0].stat_ns, 6000);
  EXPECT_EQ(out[0].run_ns, 1000u);
  EXPECT_EQ(out[0].wait_ns, 200u);
  EXPECT_EQ(out[0].utime, 120u);
  // Turn 7: asked, read in full; then asked every sample again.
  ASSERT_TRUE(top.collect(out, notices, {}, 8000));
  EXPECT_EQ(out[0].stat_ns, 8000);
  EXPECT_EQ(out[0].run_ns, 5000u);
  EXPECT_EQ(out[0].utime, 125u);
  ASSERT_TRUE(top.collect(out, notices, {}, 9000));  // turn 8: kept (quiet 1), asked
  EXPECT_EQ(out[0].stat_ns, 9000);
  t.write("proc/101/schedstat", "6000 300 5\n");
  ASSERT_TRUE(top.collect(out, notices, {}, 10000));  // turn 9: (101 + 9) % 2 == 0, asked
  EXPECT_EQ(out[0].run_ns, 6000u);
  t.write("proc/101/schedstat", "7000 300 6\n");
  ASSERT_TRUE(top.collect(out, notices, {}, 11000));  // turn 10: odd, yet asked: not quiet
  EXPECT_EQ(out[0].run_ns, 7000u);
}

}  // namespace process_collector_tree_test

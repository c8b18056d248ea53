#include "host/root.hpp"
#include "support/build_paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/temp_tree.hpp"

namespace root_test {

namespace fs = std::filesystem;
using dltune::host::Access;
using dltune::host::Root;

namespace {

// A throw-away host tree (tests/support/temp_tree.hpp) with the test's own helpers.
class TreeTest : public ::testing::Test {
 protected:
  void write(const std::string& rel, const std::string& content) { tree_.write(rel, content); }
  void link(const std::string& rel, const std::string& target) { tree_.link(rel, target); }
  Root root() { return tree_.root(); }
  dltune::testing::TempTree tree_;
  const fs::path& dir_ = tree_.dir();
};

}  // namespace

TEST(RootPaths, RefusesPathsThatAreNotNormalised) {
  struct Case {
    const char* path;
    bool ok;
  };
  const Case cases[] = {
      {"/proc/meminfo", true},
      {"/sys/class/net/eth0/mtu", true},
      {"/etc/os-release", true},
      {"/.dockerenv", true},
      {"proc/meminfo", false},         // relative
      {"", false},                     // empty
      {"/proc//meminfo", false},       // empty component
      {"/proc/./meminfo", false},      // '.'
      {"/proc/../etc/passwd", false},  // '..'
      {"/proc/meminfo/", false},       // trailing slash
      {"/tmp/x", false},               // outside the known locations
      {"/procfoo/x", false},           // a prefix that is not a component
      {"/var/tmp/x", false},           // /var is only known for log and lib
      {"/var/log/kern.log", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Root::check_path(c.path).has_value(), c.ok) << c.path;
  }
  EXPECT_FALSE(Root::check_path(std::string("/proc/a\0b", 9)).has_value());
}

TEST(RootPaths, RefusalNamesThePath) {
  const auto r = Root().read("/tmp/secret");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("/tmp/secret"), std::string::npos);
  EXPECT_NE(r.error().message().find("outside the known locations"), std::string::npos);
}

TEST(RootAt, RejectsMissingAndNonHostDirectories) {
  EXPECT_FALSE(Root::at("/nonexistent/dltune/root").has_value());
  const auto tmp = fs::path(::testing::TempDir()) / ("empty_root_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const auto r = Root::at(tmp);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("not a host tree"), std::string::npos);
  fs::remove_all(tmp);
}

// A tree is this kernel's only when its proc/ is a procfs: never a capture's or fixture's
// directory, nor a link to the real /proc (which a tree could hold to pass for the host).
TEST(RootAt, ThisKernelOnlyWhereProcIsAProcfs) {
  EXPECT_TRUE(Root().this_kernel());
  const auto fixture = Root::at(std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2");
  ASSERT_TRUE(fixture);
  EXPECT_FALSE(fixture->this_kernel());
  const auto tmp = fs::path(::testing::TempDir()) / ("linked_root_" + std::to_string(::getpid()));
  fs::create_directories(tmp / "etc");
  fs::create_directory_symlink("/proc", tmp / "proc");
  const auto linked = Root::at(tmp);
  ASSERT_TRUE(linked);
  EXPECT_FALSE(linked->this_kernel());
  fs::remove_all(tmp);
  // The live root named by path is the live root.
  const auto slash = Root::at("/");
  ASSERT_TRUE(slash);
  EXPECT_TRUE(slash->live());
}

TEST_F(TreeTest, ReadsFilesAndReportsAbsence) {
  write("proc/meminfo", "MemTotal: 1 kB\n");
  auto r = root();
  auto got = r.read("/proc/meminfo");
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, "MemTotal: 1 kB\n");
  auto missing = r.read("/proc/nothing");
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->has_value());
  auto through_file = r.read("/proc/meminfo/x");  // ENOTDIR is absence too
  ASSERT_TRUE(through_file.has_value());
  EXPECT_FALSE(through_file->has_value());
}

TEST_F(TreeTest, ReadHonoursMaxBytes) {
  write("etc/big", std::string(10000, 'x'));
  auto got = root().read("/etc/big", 100);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->size(), 100u);
}

TEST_F(TreeTest, LinesListExistsStat) {
  write("etc/a", "one\ntwo\n");
  write("etc/d/z", "");
  write("etc/d/b", "");
  auto r = root();
  auto ls = r.lines("/etc/a");
  ASSERT_TRUE(ls && *ls);
  EXPECT_EQ(**ls, (std::vector<std::string>{"one", "two"}));
  auto names = r.list("/etc/d");
  ASSERT_TRUE(names && *names);
  EXPECT_EQ(**names, (std::vector<std::string>{"b", "z"}));
  EXPECT_TRUE(r.exists("/etc/d"));
  EXPECT_FALSE(r.exists("/etc/nope"));
  auto st = r.stat("/etc/d");
  ASSERT_TRUE(st && *st);
  EXPECT_EQ((*st)->kind, dltune::host::Kind::kDirectory);
}

TEST_F(TreeTest, AbsoluteLinksStayInsideTheRoot) {
  // An absolute link in a captured tree points into the tree, never at this machine's files.
  write("usr/local/cuda-13.0/version.txt", "CUDA Version 13.0.0\n");
  link("usr/local/cuda", "/usr/local/cuda-13.0");
  auto r = root();
  auto got = r.read("/usr/local/cuda/version.txt");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(**got, "CUDA Version 13.0.0\n");
  auto target = r.readlink("/usr/local/cuda");
  ASSERT_TRUE(target && *target);
  EXPECT_EQ(**target, "/usr/local/cuda-13.0");
  auto real = r.resolve("/usr/local/cuda/version.txt");
  ASSERT_TRUE(real && *real);
  EXPECT_EQ(**real, "/usr/local/cuda-13.0/version.txt");
}

TEST_F(TreeTest, RelativeLinksWithDotDotAreClampedAtTheRoot) {
  write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n");
  link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  link("etc/escape", "../../../../../../etc/hostname-not-here");
  auto r = root();
  auto got = r.read("/sys/bus/pci/devices/0000:00:01.0/vendor");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(**got, "0x10de\n");
  // ../ past the top stays at the top: /etc/hostname-not-here inside the tree, which is absent.
  auto esc = r.read("/etc/escape");
  ASSERT_TRUE(esc.has_value());
  EXPECT_FALSE(esc->has_value());
}

TEST_F(TreeTest, LinkOutOfTheKnownLocationsIsRefused) {
  write("tmp/x", "secret");
  link("etc/x", "/tmp/x");
  auto r = root().read("/etc/x");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("outside the known locations"), std::string::npos);
}

TEST_F(TreeTest, LinkLoopsEndWithAnError) {
  link("etc/a", "/etc/b");
  link("etc/b", "/etc/a");
  auto r = root().read("/etc/a");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().errno_, ELOOP);
}

TEST_F(TreeTest, UnreadableFileIsAnErrorWithErrno) {
  // A FIFO is neither a file nor a device: reading it is refused (EINVAL), not waited on.
  ASSERT_EQ(::mkfifo((dir_ / "etc/fifo").c_str(), 0600), 0);
  auto r = root().read("/etc/fifo");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().errno_, EINVAL);
  EXPECT_NE(r.error().message().find("/etc/fifo"), std::string::npos);
}

TEST_F(TreeTest, ReadingADirectoryIsAnError) {
  fs::create_directories(dir_ / "etc/dir");
  auto r = root().read("/etc/dir");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().errno_, EISDIR);
}

TEST_F(TreeTest, RecordsWhatWasRead) {
  write("usr/local/cuda-13.0/version.txt", "v");
  link("usr/local/cuda", "/usr/local/cuda-13.0");
  write("etc/d/f1", "1");
  fs::create_directories(dir_ / "etc/d/sub");
  auto r = root();
  r.start_recording();
  (void)r.read("/usr/local/cuda/version.txt", 64);
  (void)r.list("/etc/d");
  (void)r.read("/etc/missing");
  const auto rec = r.recorded();
  auto has = [&](Access::Type t, const std::string& p) {
    for (const auto& a : rec)
      if (a.type == t && a.path == p) return true;
    return false;
  };
  EXPECT_TRUE(has(Access::Type::kSymlink, "/usr/local/cuda"));
  EXPECT_TRUE(has(Access::Type::kFile, "/usr/local/cuda-13.0/version.txt"));
  EXPECT_TRUE(has(Access::Type::kDirectory, "/etc/d"));
  EXPECT_TRUE(has(Access::Type::kFile, "/etc/d/f1"));
  EXPECT_TRUE(has(Access::Type::kDirectory, "/etc/d/sub"));
  EXPECT_FALSE(has(Access::Type::kFile, "/etc/missing"));
  for (const auto& a : rec)
    if (a.path == "/usr/local/cuda") {
      EXPECT_EQ(a.target, "/usr/local/cuda-13.0");
    }
}

TEST(RootLive, ReadsTheRealKernel) {
  Root r;
  EXPECT_TRUE(r.live());
  auto got = r.read("/proc/sys/kernel/ostype");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(**got, "Linux\n");
  auto self = r.resolve("/proc/self/stat");
  ASSERT_TRUE(self && *self);
  EXPECT_EQ(**self, "/proc/" + std::to_string(::getpid()) + "/stat");
}

TEST(RootLive, AFileTheKernelRefusesIsAnErrorNotAbsence) {
  // sysfs write-only attributes refuse reads even to root (kernfs: no show method -> EACCES).
  auto r = Root().read("/sys/bus/pci/rescan");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().errno_, EACCES);
  EXPECT_EQ(r.error().message(), "cannot read /sys/bus/pci/rescan: Permission denied");
}

TEST_F(TreeTest, RecordsWhatResolveLeadsTo) {
  write("usr/lib/blas/libblas.so.3.11.0", "");
  link("etc/alternatives/libblas.so.3", "/usr/lib/blas/libblas.so.3.11.0");
  link("usr/lib/libblas.so.3", "/etc/alternatives/libblas.so.3");
  auto r = root();
  r.start_recording();
  auto real = r.resolve("/usr/lib/libblas.so.3");
  ASSERT_TRUE(real && *real);
  EXPECT_EQ(**real, "/usr/lib/blas/libblas.so.3.11.0");
  bool links = false, target = false;
  for (const auto& a : r.recorded()) {
    if (a.type == Access::Type::kSymlink && a.path == "/etc/alternatives/libblas.so.3")
      links = true;
    if (a.type == Access::Type::kFile && a.path == "/usr/lib/blas/libblas.so.3.11.0") target = true;
  }
  EXPECT_TRUE(links);
  EXPECT_TRUE(target);
}

TEST(RootWrites, OnlyKnownSettingsAndFilesAreWritable) {
  for (const char* p :
       {"/proc/sys/vm/swappiness", "/proc/sys/net/ipv4/tcp_rmem",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/devices/system/cpu/cpu12/cpufreq/scaling_governor",
        "/sys/devices/system/cpu/cpu3/cpufreq/energy_performance_preference",
        "/sys/block/nvme0n1/queue/read_ahead_kb", "/sys/block/nvme0n1/queue/scheduler",
        "/sys/block/sda/queue/nr_requests", "/sys/fs/cgroup/memory/jobs/memory.swappiness",
        "/sys/fs/cgroup/memory/system.slice/ssh.service/memory.swappiness"})
    EXPECT_TRUE(Root::is_writable_setting(p)) << p;
  for (const char* p :
       {"/proc/meminfo", "/proc/sys/../../etc/shadow", "/sys/kernel/mm/ksm/run",
        "/sys/block/nvme0n1/queue/max_sectors_kb", "/sys/block/../queue/scheduler", "/etc/passwd",
        "/tmp/x", "/sys/devices/system/cpu/cpu0/online",
        "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_available_preferences",
        // the root memory cgroup's swappiness is vm.swappiness in disguise
        "/sys/fs/cgroup/memory/memory.swappiness",
        "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/../../../etc/x/memory.swappiness"})
    EXPECT_FALSE(Root::is_writable_setting(p)) << p;
  for (const char* p : {"/etc/sysctl.d/90-dltune.conf", "/etc/security/limits.d/90-dltune.conf",
                        "/etc/fstab", "/etc/tmpfiles.d/90-dltune.conf", "/var/lib/dltune/state.db"})
    EXPECT_TRUE(Root::is_writable_file(p)) << p;
  for (const char* p : {"/etc/sysctl.conf", "/etc/security/limits.conf", "/etc/shadow",
                        "/var/lib/dltune/../../etc/shadow", "/etc/sysctl.d/99-other.conf",
                        "/etc/tmpfiles.d/other.conf"})
    EXPECT_FALSE(Root::is_writable_file(p)) << p;
}

// The cgroups of dltune's own jobs: a "dltune" group right below a hierarchy's mount
// point, the groups right below it, their files, and the v2 root's cgroup.subtree_control.
TEST(RootWrites, OnlyDltuneJobCgroupsAreWritable) {
  for (const char* p :
       {"/sys/fs/cgroup/dltune", "/sys/fs/cgroup/dltune/job-1", "/sys/fs/cgroup/memory/dltune",
        "/sys/fs/cgroup/memory/dltune/x", "/sys/fs/cgroup/cpu,cpuacct/dltune/x",
        "/sys/fs/cgroup/unified/dltune/x", "/sys/fs/cgroup/cpuset/dltune/a.b_c",
        "/sys/fs/cgroup/dltune/job-1/rank-0", "/sys/fs/cgroup/cpuset/dltune/x/rank-15"})
    EXPECT_TRUE(Root::is_dltune_cgroup(p)) << p;
  for (const char* p : {"/sys/fs/cgroup",
                        "/sys/fs/cgroup/memory",
                        "/sys/fs/cgroup/unified",
                        "/sys/fs/cgroup/memory/other/x",
                        "/sys/fs/cgroup/memory/other/dltune/x",
                        "/sys/fs/cgroup/user.slice/dltune/x",
                        "/sys/fs/cgroup/dltune/x/y",
                        "/sys/fs/cgroup/memory/dltune/x/y",
                        "/sys/fs/cgroup/dltune/dltune/x",
                        "/sys/fs/cgroup/dltune/x/rank-",
                        "/sys/fs/cgroup/dltune/x/rank-1a",
                        "/sys/fs/cgroup/dltune/x/rank-0/rank-1",
                        "/sys/fs/cgroup/dltune/rank-0/..",
                        "/sys/fs/cgroup/memory/dltune/..",
                        "/sys/fs/cgroup/memory/dltune/../../../../etc",
                        "/sys/fs/cgroup/dltune/",
                        "/sys/fs/cgroup/devices/dltune/x",
                        "/sys/fs/cgroupx/dltune",
                        "/sys/kernel/dltune/x",
                        "/tmp/dltune/x"})
    EXPECT_FALSE(Root::is_dltune_cgroup(p)) << p;
  for (const char* p :
       {"/sys/fs/cgroup/cgroup.subtree_control", "/sys/fs/cgroup/dltune/cgroup.subtree_control",
        "/sys/fs/cgroup/dltune/job/cpu.max", "/sys/fs/cgroup/dltune/job/cgroup.procs",
        "/sys/fs/cgroup/memory/dltune/job/memory.limit_in_bytes",
        "/sys/fs/cgroup/cpuset/dltune/cpuset.cpus", "/sys/fs/cgroup/unified/dltune/job/cgroup.kill",
        "/sys/fs/cgroup/cpuset/dltune/job/rank-1/cpuset.cpus"})
    EXPECT_TRUE(Root::is_writable_setting(p)) << p;
  for (const char* p :
       {"/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/other/x/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/cgroup.subtree_control",
        "/sys/fs/cgroup/unified/cgroup.subtree_control",
        "/sys/fs/cgroup/user.slice/cgroup.subtree_control",
        "/sys/fs/cgroup/dltune/job/sub/cgroup.procs",
        "/sys/fs/cgroup/memory/dltune/../other/memory.limit_in_bytes",
        "/sys/fs/cgroup/dltune/job/../../cgroup.procs"})
    EXPECT_FALSE(Root::is_writable_setting(p)) << p;
}

// Inside a Slurm step (`dltune run` in a job) dltune's parent may be in the step's group: the
// step's own, a v1 task's or a v2 step's "user"; nowhere else in Slurm's tree, and nowhere in a
// tree that is not Slurm's.
TEST(RootWrites, DltuneGroupsInsideASlurmStepOnly) {
  for (const char* p : {"/sys/fs/cgroup/memory/slurm_vm/uid_0/job_5/step_0/task_0/dltune",
                        "/sys/fs/cgroup/memory/slurm_vm/uid_0/job_5/step_0/task_0/dltune/run-1",
                        "/sys/fs/cgroup/cpuset/slurm/uid_1000/job_5/step_batch/dltune/x",
                        "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_5/step_0/user/dltune/x",
                        "/sys/fs/cgroup/unified/slurm/uid_0/job_5/step_0/user/dltune/x"})
    EXPECT_TRUE(Root::is_dltune_cgroup(p)) << p;
  for (const char* p :
       {"/sys/fs/cgroup/memory/slurm_vm/uid_0/job_5/dltune/x",  // the job's, not a step's
        "/sys/fs/cgroup/memory/slurm_vm/uid_0/job_5/step_0/task_0/other/dltune/x",
        "/sys/fs/cgroup/memory/slurm_vm/uid_0/job_5/step_0/task_0/dltune/x/y",
        "/sys/fs/cgroup/memory/other/uid_0/job_5/step_0/task_0/dltune/x",  // not Slurm's
        "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_5/step_0/user/task_0/dltune/x",
        "/sys/fs/cgroup/memory/slurm/uid_0/job_5/step_0/task_0/../../../../dltune/x",
        "/sys/fs/cgroup/devices/slurm/uid_0/job_5/step_0/task_0/dltune/x",
        "/sys/fs/cgroup/unified/slurm/uid_0/job_5/step_0/task_1/dltune/x",  // v2: beside tasks
        "/sys/fs/cgroup/memory/slurm/uid_0/job_5/step_0/user/dltune/x"})
    EXPECT_FALSE(Root::is_dltune_cgroup(p)) << p;
  for (const char* p :
       {"/sys/fs/cgroup/system.slice/slurmstepd.scope/job_5/step_0/user/cgroup.subtree_control",
        "/sys/fs/cgroup/memory/slurm/uid_0/job_5/step_0/task_0/dltune/x/memory.limit_in_bytes",
        "/sys/fs/cgroup/cpuset/slurm/uid_0/job_5/step_0/task_0/dltune/cpuset.cpus"})
    EXPECT_TRUE(Root::is_writable_setting(p)) << p;
  for (const char* p :
       {"/sys/fs/cgroup/system.slice/slurmstepd.scope/job_5/step_0/cgroup.subtree_control",
        "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_5/step_0/user/task_0/"
        "cgroup.subtree_control",
        "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_5/step_0/user/memory.max",
        "/sys/fs/cgroup/memory/slurm/uid_0/job_5/step_0/task_0/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/slurm/uid_0/job_5/step_0/task_0/cgroup.subtree_control"})
    EXPECT_FALSE(Root::is_writable_setting(p)) << p;
}

TEST_F(TreeTest, CgroupDirectoriesOfDltuneJobsOnly) {
  write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  write("sys/fs/cgroup/memory/cgroup.procs", "1\n");
  auto r = root();
  ASSERT_TRUE(r.make_directory("/sys/fs/cgroup/memory/dltune"));
  ASSERT_TRUE(r.make_directory("/sys/fs/cgroup/memory/dltune/job"));
  // A tree stands in for cgroupfs: the new group has its parent's file names, empty.
  EXPECT_EQ(**r.list("/sys/fs/cgroup/memory/dltune/job"),
            (std::vector<std::string>{"cgroup.procs", "memory.limit_in_bytes"}));
  EXPECT_EQ(**r.read("/sys/fs/cgroup/memory/dltune/job/memory.limit_in_bytes"), "");
  auto again = r.make_directory("/sys/fs/cgroup/memory/dltune/job");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().errno_, EEXIST);
  EXPECT_TRUE(r.write_virtual("/sys/fs/cgroup/memory/dltune/job/memory.limit_in_bytes", "1"));
  EXPECT_TRUE(r.write_control("/sys/fs/cgroup/memory/dltune/job/cgroup.procs", "1"));
  for (const char* p :
       {"/sys/fs/cgroup/memory/other", "/sys/fs/cgroup/memory",
        "/sys/fs/cgroup/memory/dltune/../other", "/sys/fs/cgroup/memory/dltune/a/b"}) {
    EXPECT_FALSE(r.make_directory(p)) << p;
    EXPECT_FALSE(r.remove_directory(p)) << p;
  }
  EXPECT_FALSE(r.write_control("/sys/fs/cgroup/memory/cgroup.procs", "1"));
  EXPECT_FALSE(fs::exists(dir_ / "sys/fs/cgroup/memory/other"));
  ASSERT_TRUE(r.remove_directory("/sys/fs/cgroup/memory/dltune/job"));
  EXPECT_FALSE(fs::exists(dir_ / "sys/fs/cgroup/memory/dltune/job"));
  EXPECT_EQ(r.remove_directory("/sys/fs/cgroup/memory/dltune/job").error().errno_, ENOENT);
  EXPECT_TRUE(fs::exists(dir_ / "sys/fs/cgroup/memory/memory.limit_in_bytes"));
}

TEST_F(TreeTest, WriteVirtualWritesAndReadsBack) {
  write("proc/sys/vm/swappiness", "60\n");
  auto r = root();
  auto got = r.write_virtual("/proc/sys/vm/swappiness", "10");
  ASSERT_TRUE(got) << got.error().message();
  EXPECT_EQ(*got, "10");
  EXPECT_EQ(**r.read("/proc/sys/vm/swappiness"), "10\n");
  auto refused = r.write_virtual("/etc/passwd", "x");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("/etc/passwd"), std::string::npos);
  auto missing = r.write_virtual("/proc/sys/vm/nope", "1");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().errno_, ENOENT);
}

TEST_F(TreeTest, WriteAtomicReplacesWholeAndLeavesNoTemporaryFile) {
  write("etc/sysctl.d/90-dltune.conf", "old\n");
  auto r = root();
  ASSERT_TRUE(r.write_atomic("/etc/sysctl.d/90-dltune.conf", "vm.swappiness = 10\n"));
  EXPECT_EQ(**r.read("/etc/sysctl.d/90-dltune.conf"), "vm.swappiness = 10\n");
  EXPECT_EQ(**r.list("/etc/sysctl.d"), std::vector<std::string>{"90-dltune.conf"});
  auto st = r.stat("/etc/sysctl.d/90-dltune.conf");
  EXPECT_EQ((*st)->mode, 0644u);
  EXPECT_FALSE(r.write_atomic("/etc/sysctl.conf", "x"));
  // A directory that does not exist: a clear error naming the file, nothing left behind.
  auto e = r.write_atomic("/etc/security/limits.d/90-dltune.conf", "x");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().errno_, ENOENT);
  EXPECT_NE(e.error().message().find("/etc/security/limits.d/90-dltune.conf"), std::string::npos);
  ASSERT_TRUE(r.remove_file("/etc/sysctl.d/90-dltune.conf"));
  EXPECT_FALSE(r.exists("/etc/sysctl.d/90-dltune.conf"));
}

TEST(RootWrites, TheKernelsRefusalCarriesItsErrno) {
  if (::geteuid() != 0) GTEST_SKIP() << "writing /proc/sys needs root";
  // vm.dirty_bytes=0 is refused by the kernel (docs/measurements.md): EINVAL, value unchanged.
  Root r;
  const auto before = **r.read("/proc/sys/vm/dirty_bytes");
  auto e = r.write_virtual("/proc/sys/vm/dirty_bytes", "0");
  if (before == "0\n") {
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().errno_, EINVAL);
    EXPECT_NE(e.error().message().find("/proc/sys/vm/dirty_bytes"), std::string::npos);
  }
  EXPECT_EQ(**r.read("/proc/sys/vm/dirty_bytes"), before);
}

}  // namespace root_test

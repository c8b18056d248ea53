// The job cgroup on this machine's real kernel, as root: limits read back, a child
// that joins every group before it execs, an OOM kill under a memory limit, CPU throttling under
// a quota, removal that leaves nothing, and per-job pressure. Each test's groups have a name of
// its own and are removed at the end, even when the test fails (Job); no other group is touched.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "launch/cgroup.hpp"

namespace cgroup_live_test {

using dltune::host::cgroup_layout;
using dltune::host::CgroupLayout;
using dltune::launch::CgroupLimits;
using dltune::launch::create_job_cgroup;
using dltune::launch::JobCgroup;

namespace {

// A job's groups, removed when the test ends however it ends.
struct Job {
  std::string name;
  std::unique_ptr<JobCgroup> cg;
  ~Job() {
    if (cg) (void)cg->remove();
  }
};

std::string unique_name() {
  static int n = 0;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return "test-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + "-" +
         (info ? info->name() : "x");
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool swap_is_on() {
  std::ifstream in("/proc/swaps");
  std::string header, line;
  std::getline(in, header);
  return static_cast<bool>(std::getline(in, line)) && !line.empty();
}

class CgroupLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "creating cgroups needs root";
    auto l = cgroup_layout(root_);
    if (!l) GTEST_SKIP() << "no cgroups here: " << l.error().message();
    layout_ = *l;
  }
  // Creates the groups or fails the test; skips where cgroupfs is read-only (a container).
  void create(Job& job, const CgroupLimits& limits) {
    job.name = unique_name();
    auto cg = create_job_cgroup(root_, layout_, job.name, limits);
    if (!cg && cg.error().errno_ == EROFS)
      GTEST_SKIP() << "cgroupfs is read-only here: " << cg.error().message();
    ASSERT_TRUE(cg) << cg.error().message();
    job.cg = std::move(*cg);
  }
  // Every place a group of that name could be, in every hierarchy.
  std::vector<std::string> every_place(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [c, mount] : layout_.v1) out.push_back(mount + "/dltune/" + name);
    if (layout_.unified) out.push_back(*layout_.unified + "/dltune/" + name);
    return out;
  }

  dltune::host::Root root_;
  CgroupLayout layout_;
};

// Forks a child that joins the groups (attach_self) and then runs `body`, which must be
// async-signal-safe (no allocation): exec or a system-call loop. Its stdout goes to `out_fd`.
template <class Body>
pid_t start_child(const std::vector<std::string>& procs, int out_fd, Body body) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (out_fd >= 0) ::dup2(out_fd, 1);
  if (dltune::launch::attach_self(procs) != 0) ::_exit(100);
  body();
  ::_exit(0);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

TEST_F(CgroupLive, LimitsReadBackAndTheChildIsInEveryGroupOnCpu0) {
  Job job;
  CgroupLimits l;
  l.memory_bytes = 256u << 20;
  l.cpu_quota_cpus = 0.5;
  l.cpus = "0";
  ASSERT_NO_FATAL_FAILURE(create(job, l));
  if (!job.cg) return;
  auto back = job.cg->read_back();
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->memory_bytes, 256u << 20);
  EXPECT_DOUBLE_EQ(back->cpu_quota_cpus.value_or(0), 0.5);
  EXPECT_EQ(back->cpus, "0");

  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const char* argv[] = {"/bin/sh", "-c",
                        "grep Cpus_allowed_list /proc/self/status; cat /proc/self/cgroup", nullptr};
  const pid_t pid = start_child(job.cg->procs_files(), pipe_fds[1], [&] {
    ::execv(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  });
  ::close(pipe_fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  const int status = wait_for(pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n" << out;
  EXPECT_NE(out.find("Cpus_allowed_list:\t0\n"), std::string::npos) << out;
  // /proc/self/cgroup (cgroups(7)): one line per hierarchy, each in the job's group.
  std::size_t in_group = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line.ends_with(":/dltune/" + job.name)) ++in_group;
  EXPECT_EQ(in_group, job.cg->directories().size()) << out;
  ASSERT_TRUE(job.cg->remove());
  for (const auto& d : every_place(job.name)) EXPECT_FALSE(is_dir(d)) << d;
}

TEST_F(CgroupLive, AMemoryHogIsOomKilledAndCounted) {
  Job job;
  CgroupLimits l;
  l.memory_bytes = 50u << 20;
  if (swap_is_on()) l.memory_swap_bytes = 0;  // or the hog swaps instead of dying
  ASSERT_NO_FATAL_FAILURE(create(job, l));
  if (!job.cg) return;
  const pid_t pid = start_child(job.cg->procs_files(), -1, [] {
    constexpr std::size_t kSize = 300u << 20;
    void* p = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) ::_exit(101);
    for (std::size_t i = 0; i < kSize; i += 4096) static_cast<volatile char*>(p)[i] = 1;
  });
  const int status = wait_for(pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  const auto s = job.cg->stats();
  std::printf("hog under 50 MiB: oom_kills %llu, peak %llu bytes, limit hits %llu\n",
              static_cast<unsigned long long>(s.oom_kills.value_or(0)),
              static_cast<unsigned long long>(s.memory_peak_bytes.value_or(0)),
              static_cast<unsigned long long>(s.memory_limit_hits.value_or(0)));
  EXPECT_EQ(s.oom_kills, 1u);
  ASSERT_TRUE(s.memory_peak_bytes || layout_.version == "v2");  // memory.peak: kernel 5.19+
  if (s.memory_peak_bytes) {
    EXPECT_GE(*s.memory_peak_bytes, 40u << 20);
  }
}

TEST_F(CgroupLive, ABusyLoopUnderAFifthOfACpuIsThrottled) {
  Job job;
  CgroupLimits l;
  l.cpu_quota_cpus = 0.2;
  ASSERT_NO_FATAL_FAILURE(create(job, l));
  if (!job.cg) return;
  const pid_t pid = start_child(job.cg->procs_files(), -1, [] {
    timespec start{}, now{};
    ::clock_gettime(CLOCK_MONOTONIC, &start);
    do {
      ::clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
             1000000000L);
  });
  const int status = wait_for(pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const auto s = job.cg->stats();
  std::printf("1 s busy under 0.2 CPU: cpu %.3f s, throttled %.3f s in %llu periods\n",
              s.cpu_seconds.value_or(-1), s.throttled_seconds.value_or(-1),
              static_cast<unsigned long long>(s.nr_throttled.value_or(0)));
  ASSERT_TRUE(s.throttled_seconds);
  EXPECT_GT(*s.throttled_seconds, 0.0);
  EXPECT_GT(s.nr_throttled.value_or(0), 0u);
  ASSERT_TRUE(s.cpu_seconds);
  EXPECT_GT(*s.cpu_seconds, 0.0);
}

TEST_F(CgroupLive, RemoveKillsWhatIsLeftAndLeavesNoDirectory) {
  Job job;
  CgroupLimits l;
  l.memory_bytes = 128u << 20;
  l.cpu_quota_cpus = 1;
  l.cpus = "0";
  ASSERT_NO_FATAL_FAILURE(create(job, l));
  if (!job.cg) return;
  const auto dirs = job.cg->directories();
  for (const auto& d : dirs) EXPECT_TRUE(is_dir(d)) << d;
  const pid_t pid = start_child(job.cg->procs_files(), -1, [] {
    for (;;) ::pause();
  });
  // Wait until the child is in (its write to cgroup.procs happens after fork returns).
  for (int i = 0; i < 500; ++i) {
    std::ifstream procs(dirs.front() + "/cgroup.procs");
    std::string pids((std::istreambuf_iterator<char>(procs)), std::istreambuf_iterator<char>());
    if (pids.find(std::to_string(pid)) != std::string::npos) break;
    ::usleep(10000);
  }
  auto removed = job.cg->remove();
  ASSERT_TRUE(removed) << removed.error().message();
  const int status = wait_for(pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  for (const auto& d : every_place(job.name)) EXPECT_FALSE(is_dir(d)) << d;
  EXPECT_TRUE(job.cg->remove());  // a second time is fine
  if (layout_.unified) {
    EXPECT_TRUE(is_dir(*layout_.unified + "/dltune"));  // the shared parent stays
  }
}

TEST_F(CgroupLive, TheJobHasItsOwnPressureFiles) {
  if (!layout_.unified) GTEST_SKIP() << "no cgroup2 mount here, so no per-group pressure";
  Job job;
  ASSERT_NO_FATAL_FAILURE(create(job, CgroupLimits{}));
  if (!job.cg) return;
  const std::string unified = *layout_.unified + "/dltune/" + job.name;
  const auto dirs = job.cg->directories();
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), unified), dirs.end());
  const auto procs = job.cg->procs_files();
  EXPECT_NE(std::find(procs.begin(), procs.end(), unified + "/cgroup.procs"), procs.end());
  struct stat st {};
  if (::stat((unified + "/cpu.pressure").c_str(), &st) != 0)
    GTEST_SKIP() << "the kernel has no pressure accounting (psi=0?): no " << unified
                 << "/cpu.pressure";
  EXPECT_EQ(job.cg->pressure_dir(), unified);
}

}  // namespace cgroup_live_test

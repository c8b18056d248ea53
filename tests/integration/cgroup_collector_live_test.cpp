// CgroupCollector and SystemCollector on this machine's real kernel, as root: a group
// made by the test (memory limit and CPU quota, via launch::create_job_cgroup, which on a hybrid
// host makes the unified group with the pressure files too), a busy child moved into it,
// sampled twice. The groups are removed at the end however the test ends (Guard).
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "launch/cgroup.hpp"
#include "monitor/model.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor::cgroup_collector_live_test {
namespace {

// Kills and reaps the child, then removes the groups, also when an assertion failed.
struct Guard {
  pid_t child = -1;
  std::unique_ptr<launch::JobCgroup> cg;
  ~Guard() {
    if (child > 0) {
      ::kill(child, SIGKILL);
      int status = 0;
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
    }
    if (cg) (void)cg->remove();
  }
};

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

TEST(CgroupCollectorLive, ABusyChildInALimitedGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "creating cgroups needs root";
  const host::Root root;
  auto layout = host::cgroup_layout(root);
  if (!layout) GTEST_SKIP() << "no cgroups here: " << layout.error().message();
  const std::string name = "test-collector-" + std::to_string(::getpid());
  launch::CgroupLimits limits;
  limits.memory_bytes = 256u << 20;
  limits.cpu_quota_cpus = 0.5;
  Guard guard;
  auto cg = launch::create_job_cgroup(root, *layout, name, limits);
  if (!cg && cg.error().errno_ == EROFS)
    GTEST_SKIP() << "cgroupfs is read-only here: " << cg.error().message();
  ASSERT_TRUE(cg) << cg.error().message();
  guard.cg = std::move(*cg);

  const auto procs = guard.cg->procs_files();
  guard.child = ::fork();
  ASSERT_GE(guard.child, 0);
  if (guard.child == 0) {
    if (launch::attach_self(procs) != 0) ::_exit(100);
    volatile unsigned long spin = 0;
    for (;;) spin = spin + 1;
  }
  // The child is in the group once its cgroup file says so (attach_self runs in the child).
  const std::string group = "/dltune/" + name;
  Result<std::string> of = fail("not yet");
  for (int i = 0; i < 200; ++i) {
    of = CgroupCollector::group_of(root, guard.child);
    if (of && *of == group) break;
    sleep_ms(10);
  }
  ASSERT_TRUE(of) << of.error().message();
  ASSERT_EQ(*of, group);

  auto c = CgroupCollector::open(root, group);
  ASSERT_TRUE(c) << c.error().message();
  Notices notices;
  std::optional<Cgroup> first, second;
  ASSERT_TRUE(c->collect(first, notices));
  sleep_ms(300);
  ASSERT_TRUE(c->collect(second, notices));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->path, group);
  EXPECT_EQ(second->version, layout->version);
  ASSERT_TRUE(first->cpu_usage_us && second->cpu_usage_us);
  EXPECT_GT(*second->cpu_usage_us, *first->cpu_usage_us);
  EXPECT_EQ(second->memory_limit_bytes, std::optional<std::uint64_t>(256u << 20));
  ASSERT_TRUE(second->cpu_quota_cpus);
  EXPECT_DOUBLE_EQ(*second->cpu_quota_cpus, 0.5);
  ASSERT_TRUE(second->nr_periods);
  EXPECT_GT(*second->nr_periods, 0u);
  EXPECT_TRUE(second->memory_bytes);
  EXPECT_EQ(second->pids, std::optional<std::uint64_t>(1));
  const auto pids = c->pids();
  EXPECT_NE(std::find(pids.begin(), pids.end(), guard.child), pids.end());
  if (layout->unified) {
    ASSERT_TRUE(second->pressure.cpu && second->pressure.memory && second->pressure.io);
    // A spinning child under a 0.5-CPU quota waits: its cpu `some` stall time grows.
    EXPECT_GE(second->pressure.cpu->some.total_us, first->pressure.cpu->some.total_us);
  }
  EXPECT_TRUE(notices.take().empty());

  // The Model over the two: some CPU, at most the quota's worth (with slack for the period).
  Sample a, b;
  a.cgroup = first;
  b.cgroup = second;
  Model m;
  model_cgroup(b, &a, 0.3, m);
  ASSERT_TRUE(m.cgroup && m.cgroup->cpu_pct);
  EXPECT_GT(*m.cgroup->cpu_pct, 0);

  // Removed: empty, not an error.
  ::kill(guard.child, SIGKILL);
  ::waitpid(guard.child, nullptr, 0);
  guard.child = -1;
  ASSERT_TRUE(guard.cg->remove());
  ASSERT_TRUE(c->collect(second, notices));
  EXPECT_FALSE(second);
}

TEST(SystemCollectorLive, ThisHost) {
  const host::Root root;
  SystemCollector c(root);
  Notices notices;
  System s;
  ASSERT_TRUE(c.collect(s, notices));
  const auto first_ctxt = s.context_switches;
  EXPECT_EQ(static_cast<long>(s.cpus.size()), ::sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_GT(s.memory.total, 0u);
  EXPECT_GT(s.total.user + s.total.system + s.total.idle, 0u);
  if (root.exists("/proc/pressure/cpu")) {
    EXPECT_TRUE(s.pressure.cpu);
  } else {
    EXPECT_FALSE(notices.take().empty());
  }
  for (const auto& d : s.disks) {
    EXPECT_TRUE(root.exists("/sys/block/" + d.name)) << d.name;
    EXPECT_NE(d.name.rfind("loop", 0), 0u) << d.name;
  }
  for (const auto& n : s.net) EXPECT_NE(n.name, "lo");
  sleep_ms(50);
  ASSERT_TRUE(c.collect(s, notices));
  EXPECT_GE(s.context_switches, first_ctxt);
}

}  // namespace
}  // namespace dltune::monitor::cgroup_collector_live_test

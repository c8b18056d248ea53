// A warm sample allocates nothing: the collectors' second and later collects, counted
// by a replacement of the global operator new that counts only while a test asks it to.
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "monitor/sampler.hpp"
#include "support/allocations.hpp"
#include "support/temp_tree.hpp"

namespace {
thread_local bool counting = false;
thread_local long allocations = 0;
}  // namespace

// Replacements (allowed by [replacement.functions]) of every unaligned form of new and delete,
// so that all of them pair up under ASan (which reports memory from its own operator new that
// reaches our free(): std::get_temporary_buffer uses the nothrow form). The aligned forms stay
// the library's, new and delete alike. At -O2 GCC inlines the replaced delete and then takes its
// free() for a mismatch with operator new: a false -Wmismatched-new-delete here.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
void* counted_malloc(std::size_t n) noexcept {
  if (counting) ++allocations;
  return std::malloc(n == 0 ? 1 : n);
}
}  // namespace
void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return counted_malloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted_malloc(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

// For the other tests of this binary (support/allocations.hpp).
void dltune::testing::start_counting_allocations() {
  allocations = 0;
  counting = true;
}
long dltune::testing::stop_counting_allocations() {
  counting = false;
  return allocations;
}

namespace dltune::monitor::warm_no_allocation_test {
namespace {

using dltune::testing::TempTree;

struct Count {
  Count() {
    allocations = 0;
    counting = true;
  }
  ~Count() { counting = false; }
  long stop() {
    counting = false;
    return allocations;
  }
};

TEST(WarmSample, SystemAndCgroupCollectorsAllocateNothing) {
  TempTree t;
  t.write("proc/stat",
          "cpu  10 0 10 10 0 0 0 0\ncpu0 5 0 5 5 0 0 0 0\ncpu1 5 0 5 5 0 0 0 0\n"
          "ctxt 5\nprocesses 6\nprocs_running 1\nprocs_blocked 0\n");
  t.write("proc/meminfo", "MemTotal: 100 kB\nMemAvailable: 50 kB\nSwapCached: 0 kB\n");
  t.write("proc/vmstat", "pgfault 1\npgscan_kswapd 2\n");
  for (const char* r : {"cpu", "memory", "io"})
    t.write(std::string("proc/pressure/") + r,
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n");
  t.write("proc/diskstats",
          " 254 0 vda 1 2 3 4 5 6 7 8 9 10 11 0 0 0 0 0 0\n"
          " 254 1 vda1 1 2 3 4 5 6 7 8 9 10 11 0 0 0 0 0 0\n"
          " 7 0 loop0 1 2 3 4 5 6 7 8 9 10 11 0 0 0 0 0 0\n");
  t.mkdir("sys/block/vda/vda1").mkdir("sys/block/loop0");
  t.write("proc/net/dev", "h1\nh2\n  eth0-with-a-long-name: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n");
  t.write("proc/self/mountinfo",
          "30 23 0:26 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw,nsdelegate\n");
  const std::string d = "sys/fs/cgroup/dltune/a-job-name-longer-than-sso";
  t.write(d + "/cpu.stat", "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods 0\n");
  t.write(d + "/cpu.max", "max 100000\n");
  t.write(d + "/memory.current", "1\n");
  t.write(d + "/memory.max", "max\n");
  t.write(d + "/memory.stat", "anon 1\nfile 1\npgmajfault 0\n");
  t.write(d + "/memory.events", "max 0\noom_kill 0\n");
  t.write(d + "/cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n");
  t.write(d + "/cgroup.procs", "1\n2\n");

  const auto root = t.root();
  SystemCollector sys(root);
  auto cg = CgroupCollector::open(root, "/dltune/a-job-name-longer-than-sso");
  ASSERT_TRUE(cg) << cg.error().message();
  Notices notices;
  System s;
  std::optional<Cgroup> g;
  ASSERT_TRUE(sys.collect(s, notices));  // cold: opens, sizes buffers and vectors
  ASSERT_TRUE(cg->collect(g, notices));
  ASSERT_EQ(s.disks.size(), 1u);
  ASSERT_EQ(s.net.size(), 1u);
  ASSERT_TRUE(g);

  Count count;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(sys.collect(s, notices));
    ASSERT_TRUE(cg->collect(g, notices));
  }
  EXPECT_EQ(count.stop(), 0);
  EXPECT_EQ(g->path, "/dltune/a-job-name-longer-than-sso");
  EXPECT_EQ(s.net[0].name, "eth0-with-a-long-name");

  // The activity counters read every third collect (activity_every): their reading kept and
  // carried into the collects between allocates nothing once warm either.
  SystemCollector every3(root);
  every3.activity_every(3);
  System s3;
  for (std::int64_t i = 1; i <= 3; ++i) ASSERT_TRUE(every3.collect(s3, notices, i));
  Count carried;
  for (std::int64_t i = 4; i <= 9; ++i) ASSERT_TRUE(every3.collect(s3, notices, i));
  EXPECT_EQ(carried.stop(), 0);
  EXPECT_TRUE(s3.activity_carried);
  EXPECT_EQ(s3.activity_ns, 7);
  ASSERT_EQ(s3.net.size(), 1u);
  EXPECT_EQ(s3.net[0].name, "eth0-with-a-long-name");

  // The counter itself works: a string longer than the small-string buffer allocates.
  Count check;
  std::string big(100, 'x');
  EXPECT_EQ(check.stop(), 1);
}

}  // namespace
}  // namespace dltune::monitor::warm_no_allocation_test

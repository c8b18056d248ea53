// serve's state on fixture hosts: the job groups found below /dltune (v1 and v2 layouts), groups
// that come and go, named groups that do not exist yet, and the exporter's published exposition
// and health; --listen parsing.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "serve/exporter.hpp"
#include "serve/http.hpp"
#include "support/manual_clock.hpp"
#include "support/temp_tree.hpp"
#include "unit/serve/exposition_parser.hpp"

namespace dltune::serve::exporter_test {
namespace {

using dltune::testing::TempTree;

constexpr const char* kMountV1 =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kMountV2 =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

void v1_group(TempTree& t, const std::string& g, const std::string& usage) {
  t.write("sys/fs/cgroup/memory" + g + "/memory.usage_in_bytes", usage + "\n");
  t.write("sys/fs/cgroup/memory" + g + "/memory.limit_in_bytes", "9223372036854771712\n");
  t.write("sys/fs/cgroup/memory" + g + "/cgroup.procs", "");
  t.write("sys/fs/cgroup/cpuacct" + g + "/cpuacct.usage", "2000000000\n");
}

void host_files(TempTree& t) {
  t.write("proc/stat",
          "cpu  300 0 100 1000 0 0 0 0 0 0\ncpu0 300 0 100 1000 0 0 0 0 0 0\n"
          "ctxt 10\nprocesses 5\nprocs_running 1\nprocs_blocked 0\n");
  t.write("proc/meminfo", "MemTotal:       1000 kB\nMemFree:         500 kB\n");
  t.write("proc/vmstat", "pgfault 1\n");
  t.write("proc/self/mountinfo", kMountV1);
}

TEST(JobGroups, FoundBelowDltuneOnV1FromTheMemoryHierarchy) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  v1_group(t, "/dltune/b", "1");
  v1_group(t, "/dltune/a", "2");
  t.write("sys/fs/cgroup/memory/dltune/memory.usage_in_bytes", "3\n");  // the parent's files
  t.write("sys/fs/cgroup/memory/dltune/cgroup.procs", "");
  t.mkdir("sys/fs/cgroup/cpu/dltune/only-cpu");  // not in the memory hierarchy: not a job
  const auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout) << layout.error().message();
  const auto found = dltune::host::discover_job_groups(t.root(), *layout);
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_EQ(*found, (std::vector<std::string>{"/dltune/a", "/dltune/b"}));
}

TEST(JobGroups, FoundInTheUnifiedMountOnV2AndNoneWithoutAParent) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout);
  auto found = dltune::host::discover_job_groups(t.root(), *layout);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->empty()) << "no dltune group yet: no job";
  t.write("sys/fs/cgroup/dltune/run-1/memory.current", "4096\n");
  t.write("sys/fs/cgroup/dltune/cgroup.subtree_control", "cpu memory\n");
  found = dltune::host::discover_job_groups(t.root(), *layout);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, std::vector<std::string>{"/dltune/run-1"});
}

TEST(JobGroups, FollowGroupsThatComeAndGoAndRetryNamedOnes) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  v1_group(t, "/dltune/a", "100");
  const auto root = t.root();
  JobGroups groups(root, {"/elsewhere/job/"}, true);
  std::vector<monitor::Cgroup> out;
  monitor::Notices notices;
  groups.collect(out, notices);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].path, "/dltune/a");
  EXPECT_EQ(out[0].memory_bytes, 100u);
  EXPECT_FALSE(out[0].memory_limit_bytes) << "unlimited";
  const auto said = notices.take();
  EXPECT_EQ(std::count_if(said.begin(), said.end(),
                          [](const std::string& m) {
                            return m.find("--cgroup /elsewhere/job: no such cgroup") !=
                                   std::string::npos;
                          }),
            1)
      << ::testing::PrintToString(said);

  // The named group appears, a job starts, the first job ends.
  v1_group(t, "/elsewhere/job", "300");
  v1_group(t, "/dltune/c", "200");
  std::filesystem::remove_all(t.dir() / "sys/fs/cgroup/memory/dltune/a");
  std::filesystem::remove_all(t.dir() / "sys/fs/cgroup/cpuacct/dltune/a");
  groups.collect(out, notices);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].path, "/dltune/c");
  EXPECT_EQ(out[0].memory_bytes, 200u);
  EXPECT_EQ(out[1].path, "/elsewhere/job");
  EXPECT_EQ(out[1].memory_bytes, 300u);
  for (const auto& m : notices.take())
    EXPECT_EQ(m.find("--cgroup"), std::string::npos) << "the named group's absence was said once";
}

TEST(Exporter, PublishesOneExpositionPerSampleAndSaysWhenItIsStale) {
  TempTree t;
  host_files(t);
  v1_group(t, "/dltune/job", "4096");
  const auto root = t.root();
  dltune::testing::ManualClock clock;
  ExporterOptions o;
  o.interval_ns = 100'000'000;
  o.gpus = false;
  o.clock = &clock;
  auto e = Exporter::open(root, o);
  ASSERT_TRUE(e) << e.error().message();
  auto h = (*e)->health();
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.why, "no sample yet");
  EXPECT_FALSE((*e)->exposition());

  ASSERT_TRUE((*e)->sample());
  const auto first = (*e)->exposition();
  ASSERT_TRUE(first);
  const auto parsed = testing::parse_exposition(first->text);
  EXPECT_TRUE(parsed.errors.empty()) << ::testing::PrintToString(parsed.errors);
  EXPECT_EQ(parsed.find("dltune_memory_total_bytes")->value_text, "1024000");
  EXPECT_EQ(parsed.find("dltune_job_memory_bytes", {{"cgroup", "/dltune/job"}})->value_text,
            "4096");
  EXPECT_EQ(parsed.find("dltune_job_cpu_seconds_total", {{"cgroup", "/dltune/job"}})->value_text,
            "2");
  EXPECT_EQ(parsed.find("dltune_samples_total")->value_text, "1");
  EXPECT_FALSE(parsed.help.count("dltune_check_up")) << "no profile: no check";
  EXPECT_TRUE((*e)->health().ok);

  const std::string before = first->text;
  ASSERT_TRUE((*e)->sample());
  EXPECT_NE((*e)->exposition(), first) << "a new text per sample";
  EXPECT_EQ(first->text, before) << "a published text never changes";
  EXPECT_EQ((*e)->count_scrape(), 1u);
  EXPECT_EQ((*e)->count_scrape(), 2u);

  EXPECT_EQ(first->sampled_monotonic_ns, clock.monotonic_ns()) << "stamped by the clock given";
  // Up to three intervals without a sample: healthy; past them: unhealthy, saying how old the
  // sample is.
  clock.advance(300'000'000);
  EXPECT_TRUE((*e)->health().ok) << (*e)->health().why;
  clock.advance(100'000'000);
  h = (*e)->health();
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.why.find("the last sample is 0.4 s old"), std::string::npos) << h.why;

  const auto j = (*e)->json();
  EXPECT_EQ(j["schema"], "dltune.serve/1");
  EXPECT_FALSE(j["families"].empty());
}

TEST(Exporter, StartAndStopItsThreads) {
  TempTree t;
  host_files(t);
  const auto root = t.root();
  ExporterOptions o;
  o.interval_ns = 100'000'000;
  o.gpus = false;
  auto e = Exporter::open(root, o);
  ASSERT_TRUE(e);
  (*e)->start();
  for (int i = 0; i < 200 && !(*e)->exposition(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE((*e)->exposition()) << "the sampling thread published";
  (*e)->stop();
  (*e)->stop();  // twice is fine
}

TEST(Listen, ParsesHostAndPortAndRefusesTheRest) {
  auto a = parse_listen("127.0.0.1:9464");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9464);
  EXPECT_TRUE(is_loopback(*a));
  a = parse_listen("[::1]:0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 0);
  EXPECT_EQ(a->text(), "[::1]:0");
  EXPECT_TRUE(is_loopback(*a));
  a = parse_listen("0.0.0.0:9100");
  ASSERT_TRUE(a);
  EXPECT_FALSE(is_loopback(*a));
  a = parse_listen("localhost:1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(is_loopback(*a));
  EXPECT_TRUE(is_loopback(*parse_listen("127.1.2.3:80")));
  EXPECT_FALSE(is_loopback(*parse_listen("gpu-node-1:9464")));
  // node_exporter's form: every address.
  a = parse_listen(":9464");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->text(), "0.0.0.0:9464");
  EXPECT_FALSE(is_loopback(*a));
  for (const char* bad :
       {"9464", ":", ":x", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
        "127.0.0.1:94x", "::1:9464", "[::1]9464", "[nope]:1", "a b:1", "host;rm:1"}) {
    const auto r = parse_listen(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.error().message().find("expected HOST:PORT"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace dltune::serve::exporter_test

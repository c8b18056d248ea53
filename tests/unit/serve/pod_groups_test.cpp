// Kubernetes pods' cgroups on fixture hosts, as the kubelet's cgroup manager lays them out
// (cgroupfs driver on v1: /kubepods[/QOS]/pod<UID>; systemd driver on v2:
// /kubepods.slice[/kubepods-QOS.slice]/kubepods[-QOS]-pod<UID_>.slice): found with their UID
// and QoS class, one group per pod (its containers below it), and exported by serve with the
// label pod_uid.
#include <algorithm>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/cgroup.hpp"
#include "serve/exposition.hpp"
#include "serve/job_groups.hpp"
#include "support/temp_tree.hpp"
#include "unit/serve/exposition_parser.hpp"

namespace dltune::serve::pod_groups_test {
namespace {

using dltune::testing::TempTree;

constexpr const char* kMountV1 =
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";
constexpr const char* kMountV2 =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

constexpr const char* kUid1 = "0a1b2c3d-1111-2222-3333-444455556666";
constexpr const char* kUid2 = "9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff";
constexpr const char* kUid3 = "12345678-0000-0000-0000-000000000001";

// A pod's group with a container below it holding `pid` (as the runtime makes it).
void pod(TempTree& t, const std::string& dir, const std::string& container,
         const std::string& pid) {
  t.write(dir + "/memory.current", "4096\n");
  t.write(dir + "/memory.usage_in_bytes", "4096\n");
  t.write(dir + "/cgroup.procs", "");
  t.write(dir + "/" + container + "/cgroup.procs", pid + "\n");
}

TEST(PodGroups, FoundOnV1WithTheCgroupfsDriverWithTheirUidAndQos) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV1);
  const std::string kp = "sys/fs/cgroup/memory/kubepods";
  pod(t, kp + "/pod" + kUid1, "c0ffee", "100");
  pod(t, kp + "/burstable/pod" + kUid2, "deadbeef", "200");
  pod(t, kp + "/besteffort/pod" + kUid3, "abc123", "300");
  t.mkdir(kp + "/burstable/not-a-pod");
  t.mkdir(kp + "/podxyz;rm");  // not hex: no UID
  t.mkdir("sys/fs/cgroup/memory/dltune/run-1");
  const auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout) << layout.error().message();
  const auto pods = host::discover_pod_groups(t.root(), *layout);
  ASSERT_TRUE(pods) << pods.error().message();
  ASSERT_EQ(pods->size(), 3u);
  EXPECT_EQ((*pods)[0].path, std::string("/kubepods/besteffort/pod") + kUid3);
  EXPECT_EQ((*pods)[0].qos, "besteffort");
  EXPECT_EQ((*pods)[1].path, std::string("/kubepods/burstable/pod") + kUid2);
  EXPECT_EQ((*pods)[1].uid, kUid2);
  EXPECT_EQ((*pods)[1].qos, "burstable");
  EXPECT_EQ((*pods)[2].path, std::string("/kubepods/pod") + kUid1);
  EXPECT_EQ((*pods)[2].uid, kUid1);
  EXPECT_EQ((*pods)[2].qos, "guaranteed");
}

TEST(PodGroups, FoundOnV2WithTheSystemdDriverTheirUidsDashesBack) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  auto systemd = [](std::string uid) {
    std::replace(uid.begin(), uid.end(), '-', '_');
    return uid;
  };
  const std::string kp = "sys/fs/cgroup/kubepods.slice";
  pod(t, kp + "/kubepods-pod" + systemd(kUid1) + ".slice", "cri-containerd-c0ffee.scope", "100");
  pod(t, kp + "/kubepods-burstable.slice/kubepods-burstable-pod" + systemd(kUid2) + ".slice",
      "crio-deadbeef.scope", "200");
  t.mkdir(kp + "/kubepods-besteffort.slice");
  t.mkdir(kp + "/kubepods-burstable.slice/kubepods-besteffort-pod" + systemd(kUid3) + ".slice");
  t.mkdir("sys/fs/cgroup/system.slice/kubelet.service");
  const auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout);
  const auto pods = host::discover_pod_groups(t.root(), *layout);
  ASSERT_TRUE(pods) << pods.error().message();
  ASSERT_EQ(pods->size(), 2u) << "a pod named for another QoS class is not one";
  EXPECT_EQ((*pods)[0].path, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                                 systemd(kUid2) + ".slice");
  EXPECT_EQ((*pods)[0].uid, kUid2);
  EXPECT_EQ((*pods)[0].qos, "burstable");
  EXPECT_EQ((*pods)[1].uid, kUid1);
  EXPECT_EQ((*pods)[1].qos, "guaranteed");
}

TEST(PodGroups, NoneOnAHostThatIsNoKubernetesNode) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  t.mkdir("sys/fs/cgroup/system.slice/ssh.service");
  const auto layout = host::cgroup_layout(t.root());
  ASSERT_TRUE(layout);
  const auto pods = host::discover_pod_groups(t.root(), *layout);
  ASSERT_TRUE(pods);
  EXPECT_TRUE(pods->empty());
}

// serve: each pod's group once (not its containers'), its series labelled pod_uid; dltune's own
// jobs carry no such label.
TEST(PodGroups, ServeLabelsEachPodsSeriesWithItsUid) {
  TempTree t;
  t.write("proc/self/mountinfo", kMountV2);
  pod(t,
      std::string("sys/fs/cgroup/kubepods.slice/kubepods-pod") +
          "0a1b2c3d_1111_2222_3333_444455556666.slice",
      "cri-containerd-c0ffee.scope", "100");
  t.write("sys/fs/cgroup/dltune/run-1/memory.current", "7\n");
  t.write("sys/fs/cgroup/dltune/run-1/cgroup.procs", "");
  const auto root = t.root();
  JobGroups groups(root, {}, true);
  std::vector<monitor::Cgroup> out;
  monitor::Notices notices;
  groups.collect(out, notices);
  ASSERT_EQ(out.size(), 2u) << "the pod and dltune's own job; "
                            << ::testing::PrintToString(notices.take());
  std::string text;
  TextSink sink(text);
  render_jobs(out, &groups.slurm_jobs(), sink, &groups.pods());
  const auto e = testing::parse_exposition(text);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  const std::string path = "/kubepods.slice/kubepods-pod0a1b2c3d_1111_2222_3333_444455556666.slice";
  const auto* mem = e.find("dltune_job_memory_bytes", {{"cgroup", path}, {"pod_uid", kUid1}});
  ASSERT_NE(mem, nullptr) << text;
  EXPECT_EQ(mem->value_text, "4096");
  EXPECT_EQ(mem->labels.at("cgroup"),
            "/kubepods.slice/kubepods-pod0a1b2c3d_1111_2222_3333_444455556666.slice");
  const auto* procs = e.find("dltune_job_processes", {{"cgroup", path}, {"pod_uid", kUid1}});
  ASSERT_NE(procs, nullptr) << text;
  EXPECT_EQ(procs->value_text, "1") << "its container's process, below it";
  const auto* own = e.find("dltune_job_memory_bytes", {{"cgroup", "/dltune/run-1"}});
  ASSERT_NE(own, nullptr) << text;
  EXPECT_EQ(own->labels.count("pod_uid"), 0u);
  // The pod leaves: its series go at the next sample.
  std::filesystem::remove_all(t.dir() / "sys/fs/cgroup/kubepods.slice");
  groups.collect(out, notices);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_TRUE(groups.pods().empty());
}

}  // namespace
}  // namespace dltune::serve::pod_groups_test

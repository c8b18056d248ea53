// pci.gpu_nic: each GPU against its nearest RDMA NIC (PIX, PXB, PHB, NODE, SYS) and ACS between
// them; gpu.numa_placement: the hint for hosts whose GPUs span NUMA nodes; on the fixture hosts
// (tests/fixtures/roots/README.md, gpu4-numa2-rdma above all) and on small hand-made trees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/check.hpp"
#include "audit/rules.hpp"
#include "gpu_hosts.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/temp_tree.hpp"

namespace placement_rules_test {

using namespace dltune::audit;
using dltune::testing::entry;
using dltune::testing::fixture_host;
using dltune::testing::has_note;
using dltune::testing::TempTree;
using ::testing::HasSubstr;

namespace {

constexpr const char* kKey = "pci.gpu_nic";
constexpr const char* kRdmaHost = "gpu4-numa2-rdma";

constexpr const char* kNumaKey = "gpu.numa_placement";

std::vector<Finding> placement(const dltune::inventory::HostFacts& facts,
                               const dltune::host::Root& root, const char* value = "true",
                               const char* key = kKey) {
  const auto rule = rule_for(key);
  EXPECT_NE(rule, nullptr);
  if (rule == nullptr) return {};
  return dltune::testing::run(rule, facts, root, entry(key, value, "warn"));
}

std::vector<Finding> on_fixture(const char* host, const char* value = "true",
                                const char* key = kKey) {
  const auto& h = fixture_host(host);
  return placement(h.facts, *h.root, value, key);
}

// GPUs and network from a hand-made tree (no NVML).
dltune::inventory::HostFacts facts_of(const dltune::host::Root& root) {
  dltune::inventory::Context ctx(root, {});
  dltune::gpu::Report none;
  none.backend = "nvml";
  none.error = "not loaded in this test";
  dltune::inventory::HostFacts f;
  f.gpu = dltune::inventory::collect_gpus(ctx, std::move(none));
  f.network = dltune::inventory::collect_network(ctx);
  return f;
}

// A PCI function at /sys/devices/PARENT/ADDR, linked from /sys/bus/pci/devices as sysfs does.
std::string add_function(TempTree& t, const std::string& parent, const std::string& addr,
                         const std::string& cls, const std::string& vendor, int node) {
  const std::string dir = "sys/devices/" + parent + "/" + addr;
  t.write(dir + "/class", cls + "\n")
      .write(dir + "/vendor", vendor + "\n")
      .write(dir + "/device", "0x2331\n")
      .write(dir + "/numa_node", std::to_string(node) + "\n")
      .link("sys/bus/pci/devices/" + addr, "../../../devices/" + parent + "/" + addr);
  return dir;
}

void add_gpu(TempTree& t, const std::string& parent, const std::string& addr, int node) {
  add_function(t, parent, addr, "0x030200", "0x10de", node);
}

void add_hca(TempTree& t, const std::string& parent, const std::string& addr,
             const std::string& name, int node) {
  const auto dir = add_function(t, parent, addr, "0x020700", "0x15b3", node);
  t.link("sys/class/infiniband/" + name,
         "../../devices/" + parent + "/" + addr + "/infiniband/" + name)
      .link(dir + "/infiniband/" + name + "/device", "../..")
      .write(dir + "/infiniband/" + name + "/ports/1/state", "4: ACTIVE\n");
}

// A bridge whose config space reads as an unprivileged user reads it: the first 64 bytes.
void add_bridge(TempTree& t, const std::string& parent, const std::string& addr) {
  const auto dir = add_function(t, parent, addr, "0x060400", "0x1000", 0);
  t.write(dir + "/config", std::string(64, '\0'));
}

const Evidence* evidence_at(const Finding& f, const std::string& path) {
  for (const auto& e : f.evidence)
    if (e.path == path) return &e;
  return nullptr;
}

}  // namespace

TEST(GpuNicPlacement, EachGpuAgainstItsNearestNicOnTheRdmaHost) {
  const auto out = on_fixture(kRdmaHost);
  ASSERT_EQ(out.size(), 4u);  // four GPUs (the two-node hint is gpu.numa_placement's)
  for (const auto& f : out) {
    EXPECT_EQ(f.id, kKey);
    EXPECT_EQ(f.area, "network");
    EXPECT_TRUE(f.applicable);
    EXPECT_EQ(f.reason, std::string("why ") + kKey);
  }

  // GPU 0 and mlx5_0 on one switch, ACS off on both ports.
  const auto& pix = out[0];
  EXPECT_EQ(pix.severity, Severity::kOk);
  EXPECT_EQ(pix.actual, "PIX");
  EXPECT_EQ(pix.summary,
            "GPU 0 (0000:18:00.0): mlx5_0 (0000:1a:00.0) is behind its PCIe switch (PIX)");
  EXPECT_FALSE(pix.fix);
  ASSERT_GE(pix.evidence.size(), 2u);
  EXPECT_EQ(pix.evidence[0].path, "/sys/bus/pci/devices/0000:18:00.0");
  EXPECT_EQ(pix.evidence[0].value,
            "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0, NUMA "
            "node 0");
  EXPECT_EQ(pix.evidence[1].path, "/sys/bus/pci/devices/0000:1a:00.0");

  // GPU 1 on the same switch, but its port redirects peer-to-peer traffic (ACS 0x001d).
  const auto& acs = out[1];
  EXPECT_EQ(acs.severity, Severity::kWarn);
  EXPECT_EQ(acs.actual, "PIX");
  EXPECT_THAT(acs.summary, HasSubstr("GPU 1 (0000:19:00.0): ACS redirects peer-to-peer traffic "
                                     "at 0000:17:01.0"));
  ASSERT_TRUE(acs.fix);
  EXPECT_EQ(acs.fix->command,
            "for b in 0000:17:01.0; do setpci -s $b ECAP_ACS+6.w=0000; done  (until reboot; or "
            "disable ACS in the BIOS)");
  EXPECT_FALSE(acs.fix->by_dltune);
  const auto* config = evidence_at(acs, "/sys/bus/pci/devices/0000:17:01.0/config");
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->value, "ACS control 0x001d");
  EXPECT_EQ(evidence_at(acs, "/sys/bus/pci/devices/0000:17:02.0/config"), nullptr);  // ACS off

  // GPU 2 has a root port of its own: both HCAs are on its node, under other root complexes.
  const auto& node = out[2];
  EXPECT_EQ(node.severity, Severity::kInfo);
  EXPECT_EQ(node.actual, "NODE");
  EXPECT_THAT(node.summary, HasSubstr("GPU 2 (0000:3b:00.0): its nearest RDMA NIC, mlx5_0 "
                                      "(0000:1a:00.0), is on its NUMA node 0 but under another "
                                      "root complex (NODE)"));
  EXPECT_TRUE(has_note(node, "Equally near: mlx5_1 (0000:4c:00.0)."));
  EXPECT_TRUE(has_note(node, "NCCL_NET_GDR_LEVEL"));
  EXPECT_FALSE(node.fix);

  // GPU 3 on node 1, where the only fast NIC (an E810) has no RDMA.
  const auto& sys = out[3];
  EXPECT_EQ(sys.severity, Severity::kWarn);
  EXPECT_EQ(sys.actual, "SYS");
  EXPECT_EQ(sys.summary,
            "GPU 3 (0000:98:00.0) on NUMA node 1 has no RDMA NIC on its node: the nearest, "
            "mlx5_0 (0000:1a:00.0), is on node 0 (SYS)");
  ASSERT_TRUE(sys.fix);
  EXPECT_THAT(sys.fix->command, HasSubstr("fit an RDMA NIC in a PCIe slot of NUMA node 1"));
  EXPECT_FALSE(sys.fix->by_dltune);
  EXPECT_TRUE(has_note(sys, "NCCL_IB_HCA=mlx5_0"));
}

TEST(GpuNumaPlacement, GpusOnTwoNodesGetTheLaunchHintUnderTheTrainingProfile) {
  // GPUs 0-2 on node 0, GPU 3 on node 1: launch each job on one node's GPUs.
  const auto out = on_fixture(kRdmaHost, "true", kNumaKey);
  ASSERT_EQ(out.size(), 1u);
  const auto& hint = out[0];
  EXPECT_EQ(hint.id, kNumaKey);
  EXPECT_EQ(hint.area, "gpu");
  EXPECT_TRUE(hint.applicable);
  EXPECT_EQ(hint.severity, Severity::kInfo);
  EXPECT_EQ(hint.summary, "the GPUs are on 2 NUMA nodes: GPUs 0-2 on node 0, GPU 3 on node 1");
  ASSERT_TRUE(hint.fix);
  EXPECT_EQ(hint.fix->command, "dltune run --numa auto --gpus 0-2 -- COMMAND");
  EXPECT_TRUE(has_note(hint, "--gpus 0-2 (node 0), --gpus 3 (node 1)"));
  ASSERT_EQ(hint.evidence.size(), 2u);
  EXPECT_EQ(hint.evidence[1].value, "node 1: 0000:98:00.0");
}

TEST(GpuNicPlacement, OnTheEightGpuNodeTheNicsShareOnlyTheGpusNode) {
  const auto out = on_fixture("gpu8-numa2-cgv2");
  ASSERT_EQ(out.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i].severity, Severity::kInfo) << i;
    EXPECT_EQ(out[i].actual, "NODE") << i;
    // Every device on a root bus of its own; the first HCA of each node is named.
    EXPECT_THAT(out[i].summary,
                HasSubstr(std::string(i < 4 ? "mlx5_0 (0000:1a:00.0)" : "mlx5_3 (0000:9c:00.0)")))
        << i;
  }
  EXPECT_TRUE(has_note(out[0], "Equally near: mlx5_1 (0000:3c:00.0), mlx5_2 (0000:4b:00.0)."));
  const auto numa = on_fixture("gpu8-numa2-cgv2", "true", kNumaKey);
  ASSERT_EQ(numa.size(), 1u);
  EXPECT_EQ(numa[0].summary,
            "the GPUs are on 2 NUMA nodes: GPUs 0-3 on node 0, GPUs 4-7 on node 1");
  ASSERT_TRUE(numa[0].fix);
  EXPECT_EQ(numa[0].fix->command, "dltune run --numa auto --gpus 0-3 -- COMMAND");
}

TEST(GpuNumaPlacement, OneNodeNoGpuOrFalseIsNoHint) {
  // One A10G in a container whose sysfs gives no node: nothing to choose.
  const auto container = on_fixture("container-cgv2", "true", kNumaKey);
  ASSERT_EQ(container.size(), 1u);
  EXPECT_FALSE(container[0].applicable);
  EXPECT_FALSE(container[0].fix);
  EXPECT_THAT(container[0].summary, HasSubstr("no placement to choose"));
  const auto vm = on_fixture("this-vm", "true", kNumaKey);
  ASSERT_EQ(vm.size(), 1u);
  EXPECT_FALSE(vm[0].applicable);
  EXPECT_EQ(vm[0].summary, "no NVIDIA GPU on this host");
  const auto off = on_fixture(kRdmaHost, "false", kNumaKey);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_THAT(off[0].summary, HasSubstr("is not checked"));
  // Two GPUs on node 1 of a two-node host: one node, named.
  TempTree t;
  add_gpu(t, "pci0000:9a/0000:9a:01.0", "0000:9b:00.0", 1);
  add_gpu(t, "pci0000:9a/0000:9a:02.0", "0000:9c:00.0", 1);
  const auto root = t.root();
  const auto one = placement(facts_of(root), root, "true", kNumaKey);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_FALSE(one[0].applicable);
  EXPECT_EQ(one[0].summary, "the GPUs are all on NUMA node 1: no placement to choose");
}

TEST(GpuNicPlacement, NotApplicableWithoutAnRdmaNicOrAGpu) {
  // One A10G, no InfiniBand, one NUMA node: not applicable, and no hint.
  const auto container = on_fixture("container-cgv2");
  ASSERT_EQ(container.size(), 1u);
  EXPECT_FALSE(container[0].applicable);
  EXPECT_EQ(container[0].area, "network");
  EXPECT_THAT(container[0].summary, HasSubstr("no RDMA NIC"));
  const auto vm = on_fixture("this-vm");
  ASSERT_EQ(vm.size(), 1u);
  EXPECT_FALSE(vm[0].applicable);
  EXPECT_EQ(vm[0].summary, "no NVIDIA GPU on this host");
  EXPECT_EQ(vm[0].area, "network");
}

TEST(GpuNicPlacement, AProfileThatSaysFalseIsNotChecked) {
  const auto out = on_fixture(kRdmaHost, "false");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_THAT(out[0].summary, HasSubstr("is not checked"));
}

TEST(GpuNumaPlacement, ATwoNodeTwoGpuHostWithoutNicsGetsTheLaunchHint) {
  TempTree t;
  add_gpu(t, "pci0000:17/0000:17:01.0", "0000:18:00.0", 0);
  add_gpu(t, "pci0000:9a/0000:9a:01.0", "0000:9b:00.0", 1);
  const auto root = t.root();
  const auto facts = facts_of(root);
  const auto out = placement(facts, root);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].applicable);
  EXPECT_THAT(out[0].summary, HasSubstr("no RDMA NIC"));
  const auto hint = placement(facts, root, "true", kNumaKey);
  ASSERT_EQ(hint.size(), 1u);
  EXPECT_EQ(hint[0].severity, Severity::kInfo);
  EXPECT_EQ(hint[0].summary, "the GPUs are on 2 NUMA nodes: GPU 0 on node 0, GPU 1 on node 1");
  ASSERT_TRUE(hint[0].fix);
  EXPECT_EQ(hint[0].fix->command, "dltune run --numa auto --gpus 0 -- COMMAND");
  EXPECT_TRUE(has_note(hint[0], "--gpus 0 (node 0), --gpus 1 (node 1)"));
}

TEST(GpuNicPlacement, SeveralSwitchesAndAcsThatCannotBeRead) {
  // GPU behind a second switch (02:00.0 -> 03:00.0 -> 04:00.0), the HCA on another port of the
  // first (02:01.0): PXB. Read as an unprivileged user, the bridges' ACS is unknown.
  TempTree t;
  const std::string rp = "pci0000:00/0000:00:01.0";
  add_bridge(t, "pci0000:00", "0000:00:01.0");
  add_bridge(t, rp, "0000:01:00.0");
  add_bridge(t, rp + "/0000:01:00.0", "0000:02:00.0");
  add_bridge(t, rp + "/0000:01:00.0", "0000:02:01.0");
  add_bridge(t, rp + "/0000:01:00.0/0000:02:00.0", "0000:03:00.0");
  add_bridge(t, rp + "/0000:01:00.0/0000:02:00.0/0000:03:00.0", "0000:04:00.0");
  add_gpu(t, rp + "/0000:01:00.0/0000:02:00.0/0000:03:00.0/0000:04:00.0", "0000:05:00.0", 0);
  add_hca(t, rp + "/0000:01:00.0/0000:02:01.0", "0000:06:00.0", "mlx5_0", 0);
  const auto root = t.root();
  const auto facts = facts_of(root);
  const auto out = placement(facts, root);
  ASSERT_EQ(out.size(), 1u);  // one GPU, one node: no hint
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[0].actual, "PXB");
  EXPECT_THAT(out[0].summary, HasSubstr("mlx5_0 (0000:06:00.0) shares its PCIe switches"));
  EXPECT_TRUE(has_note(out[0],
                       "The ACS control of 0000:02:00.0, 0000:03:00.0, 0000:04:00.0, "
                       "0000:02:01.0 could not be read"));
}

TEST(GpuNicPlacement, AGpuWhoseNodeIsUnknownIsANote) {
  TempTree t;
  add_gpu(t, "pci0000:17/0000:17:01.0", "0000:18:00.0", -1);
  add_hca(t, "pci0000:4b/0000:4b:01.0", "0000:4c:00.0", "mlx5_0", 0);
  const auto root = t.root();
  const auto facts = facts_of(root);
  const auto out = placement(facts, root);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_EQ(out[0].actual, "unknown");
  EXPECT_THAT(out[0].summary, HasSubstr("is not known"));
}

TEST(GpuNicPlacement, OnlyTheDistributedProfileAsksForIt) {
  const auto& h = fixture_host(kRdmaHost);
  auto training =
      dltune::settings::load_profile("training", *h.root, dltune::settings::validate_key);
  ASSERT_TRUE(training.has_value()) << training.error().message();
  EXPECT_EQ(training->find(kKey), nullptr);
  auto distributed =
      dltune::settings::load_profile("distributed", *h.root, dltune::settings::validate_key);
  ASSERT_TRUE(distributed.has_value()) << distributed.error().message();
  const auto* e = distributed->find(kKey);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->expected.text(), "true");
  EXPECT_EQ(e->origin, "distributed");
  EXPECT_STREQ(dltune::settings::area_of(kKey), "network");
  // The whole check: the four GPUs, the hint (training's, which distributed includes), and
  // pci.acs names the same port.
  const auto* numa = training->find(kNumaKey);
  ASSERT_NE(numa, nullptr);
  EXPECT_EQ(numa->origin, "training");
  EXPECT_STREQ(dltune::settings::area_of(kNumaKey), "gpu");
  auto report = run_check(h.facts, *h.root, *distributed, {});
  ASSERT_TRUE(report.has_value());
  int placement = 0, hints = 0;
  for (const auto& f : report->findings) {
    if (f.id == kKey) ++placement;
    if (f.id == kNumaKey) {
      ++hints;
      EXPECT_THAT(f.summary, HasSubstr("GPUs 0-2 on node 0, GPU 3 on node 1"));
    }
    if (f.id == "pci.acs") {
      EXPECT_EQ(f.severity, Severity::kWarn);
      EXPECT_THAT(f.summary, HasSubstr("(0000:17:01.0)"));
    }
  }
  EXPECT_EQ(placement, 4);
  EXPECT_EQ(hints, 1);
}

}  // namespace placement_rules_test

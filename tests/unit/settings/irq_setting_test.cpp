// irq.affinity on host trees: which devices' IRQs it judges (GPUs, training NICs, a virtio NIC
// through its virtio-pci function), the CPUs it wants (the device's NUMA node, less isolated
// CPUs, or the profile's list), irqbalance's bans, and a transaction that sets and restores the
// affinity files.
#include <filesystem>

#include <gtest/gtest.h>

#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/value_types.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"
#include "tune/plan.hpp"
#include "tune/transaction.hpp"

namespace irq_setting_test {

using namespace dltune;
using settings::Severity;
namespace fs = std::filesystem;

namespace {

settings::Profile training(const host::Root& root, const std::string& value) {
  auto prof = settings::load_profile("training", root, settings::validate_key);
  EXPECT_TRUE(prof) << prof.error().message();
  for (auto& e : prof->entries)
    if (e.key == "irq.affinity") e.expected.values = {value};
  return *prof;
}

std::vector<settings::Finding> check(const host::Root& root, const std::string& value) {
  const auto facts = inventory::collect(root, {});
  const auto prof = training(root, value);
  const settings::CheckInput in{facts, root, false, {}, nullptr};
  return settings::check_irq_affinity(in, *prof.find("irq.affinity"));
}

Result<tune::Plan> plan(const host::Root& root, const std::string& value) {
  return tune::make_plan(root, inventory::collect(root, {}), training(root, value),
                         {"irq.affinity"}, false);
}

// A VM with 4 CPUs whose NIC is virtio (eth0 on virtio2, on the virtio-pci function
// 0000:00:03.0, near CPUs 0-1) with IRQ 37 on every CPU and IRQ 38 on CPUs 2-3.
void virtio_host(dltune::testing::TempTree& t) {
  const std::string fn = "sys/devices/pci0000:00/0000:00:03.0";
  t.write("sys/devices/system/cpu/online", "0-3\n")
      .write(fn + "/local_cpulist", "0-1\n")
      .write(fn + "/numa_node", "0\n")
      .write(fn + "/msi_irqs/37", "msix\n")
      .write(fn + "/msi_irqs/38", "msix\n")
      .write(fn + "/virtio2/net/eth0/mtu", "1500\n")
      .write(fn + "/virtio2/net/eth0/operstate", "up\n")
      .link(fn + "/virtio2/net/eth0/device", "../../../virtio2")
      .link("sys/class/net/eth0", "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0")
      .link("sys/bus/pci/devices/0000:00:03.0", "../../../devices/pci0000:00/0000:00:03.0")
      .write("proc/irq/37/smp_affinity_list", "0-3\n")
      .write("proc/irq/38/smp_affinity_list", "2-3\n")
      .write("proc/interrupts",
             "       CPU0 CPU1 CPU2 CPU3\n"
             " 37:  5 0 7 0 PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0\n"
             " 38:  0 0 0 9 PCI-MSIX-0000:00:03.0 2-edge virtio2-output.0\n");
}

// A /proc/PID/cmdline: each argument ended by a NUL.
std::string args(std::initializer_list<std::string> words) {
  std::string out;
  for (const auto& w : words) out += w + '\0';
  return out;
}

const settings::PlanItem& only_item(const tune::Plan& p) {
  EXPECT_EQ(p.items.size(), 1u);
  return p.items.front();
}

}  // namespace

TEST(IrqAffinity, ValueIsAutoOrACpuList) {
  settings::ProfileEntry e;
  e.key = "irq.affinity";
  for (const char* ok : {"auto", "0-3,8", "7"}) {
    e.expected.values = {ok};
    EXPECT_TRUE(settings::check_value(e)) << ok;
  }
  e.expected.values = {"node"};
  const auto bad = settings::check_value(e);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().what, "value \"node\": expected auto or a CPU list (\"0-3,8\")");
}

// gpu4-numa2-rdma: GPU 1 on every CPU, GPU 3 on CPU 0 of the other node, and three of the
// E810's five vectors off node 1; GPU 0, GPU 2 and both HCAs on their node.
TEST(IrqAffinity, FixtureHostJudgedPerDeviceAndPlannedPerIrq) {
  const auto opened = host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/gpu4-numa2-rdma");
  ASSERT_TRUE(opened) << opened.error().message();
  const auto& root = *opened;
  const auto found = check(root, "auto");
  ASSERT_EQ(found.size(), 7u);
  std::vector<std::string> warned;
  for (const auto& f : found)
    if (f.severity != Severity::kOk) warned.push_back(f.summary);
  ASSERT_EQ(warned.size(), 3u) << ::testing::PrintToString(warned);
  EXPECT_EQ(warned[0],
            "GPU 1 (0000:19:00.0): 1 of 1 IRQs may be handled outside CPUs 0-3 (its NUMA node "
            "0): 0-7");
  EXPECT_EQ(warned[2],
            "NIC ens2f0 (0000:b8:00.0): 3 of 5 IRQs may be handled outside CPUs 4-7 (its NUMA "
            "node 1): 0-7; 2; 3");
  const auto& gpu3 = found[3];
  ASSERT_FALSE(gpu3.notes.empty());
  EXPECT_EQ(gpu3.notes[0],
            "1311 of their interrupts since boot were handled outside CPUs 4-7 (/proc/interrupts)");
  EXPECT_EQ(gpu3.evidence[0].path, "/proc/irq/327/smp_affinity_list");
  EXPECT_EQ(gpu3.evidence[0].value, "0 (delivered to 0) 0-edge nvidia");
  ASSERT_TRUE(gpu3.fix);
  EXPECT_EQ(gpu3.fix->command, "dltune tune apply --only irq.affinity");
  EXPECT_EQ(found[4].summary,
            "NIC mlx5_0 ib0 (0000:1a:00.0): all 5 IRQs on CPUs 0-3 (its NUMA "
            "node 0)");
  EXPECT_EQ(found[0].summary, "GPU 0 (0000:18:00.0): its IRQ on CPUs 0-3 (its NUMA node 0)");

  const auto p = plan(root, "auto");
  ASSERT_TRUE(p) << p.error().message();
  const auto& item = only_item(*p);
  EXPECT_EQ(item.status, settings::PlanItem::Status::kChange);
  std::vector<std::string> changes;
  for (const auto& c : item.changes)
    changes.push_back(c.kind + " " + c.target + " " + c.old_value.value_or("?") + " -> " +
                      c.new_value);
  EXPECT_EQ(changes, (std::vector<std::string>{
                         "irq /proc/irq/309/smp_affinity_list 0-7 -> 0-3",
                         "irq /proc/irq/327/smp_affinity_list 0 -> 4-7",
                         "irq /proc/irq/420/smp_affinity_list 0-7 -> 4-7",
                         "irq /proc/irq/423/smp_affinity_list 2 -> 4-7",
                         "irq /proc/irq/424/smp_affinity_list 3 -> 4-7",
                     }));
}

TEST(IrqAffinity, AVirtioNicIsJudgedThroughItsPciFunction) {
  dltune::testing::TempTree t;
  virtio_host(t);
  const auto found = check(t.root(), "auto");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].summary,
            "NIC eth0 (0000:00:03.0): 2 of 2 IRQs may be handled outside CPUs 0-1 (its NUMA node "
            "0): 0-3; 2-3");
  ASSERT_FALSE(found[0].notes.empty());
  EXPECT_EQ(found[0].notes[0],
            "16 of their interrupts since boot were handled outside CPUs 0-1 (/proc/interrupts)");
}

TEST(IrqAffinity, IsolatedCpusAreLeftOutAndAListIsTheSameForEveryDevice) {
  dltune::testing::TempTree t;
  virtio_host(t);
  t.write("sys/devices/system/cpu/isolated", "1\n")
      .write("sys/devices/system/cpu/nohz_full", "(null)\n");
  auto p = plan(t.root(), "auto");
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(only_item(*p).changes.size(), 2u);
  EXPECT_EQ(only_item(*p).changes[0].new_value, "0");
  EXPECT_EQ(only_item(*p).notes[0],
            "NIC eth0 (0000:00:03.0): IRQs -> CPUs 0 (its NUMA node 0, less the isolated CPUs 1)");

  p = plan(t.root(), "2-3,9");  // 9 is not online: left out
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(only_item(*p).changes.size(), 1u);
  EXPECT_EQ(only_item(*p).changes[0].target, "/proc/irq/37/smp_affinity_list");
  EXPECT_EQ(only_item(*p).changes[0].new_value, "2-3");
  EXPECT_EQ(only_item(*p).summary, "1 IRQ(s) of 1 device(s) -> CPUs 2-3,9");

  // No online CPU in the list: tune refuses before anything changes, check says so.
  p = plan(t.root(), "8-9");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message().find("irq.affinity = 8-9 names no online CPU (online: 0-3)"),
            std::string::npos)
      << p.error().message();
  const auto found = check(t.root(), "8-9");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kInfo);
  EXPECT_FALSE(found[0].fix->by_dltune);
}

TEST(IrqAffinity, IrqbalanceKeepsWhatItHasNotBanned) {
  dltune::testing::TempTree t;
  virtio_host(t);
  t.write("proc/4242/comm", "irqbalance\n")
      .write("proc/4242/cmdline", args({"/usr/sbin/irqbalance", "--foreground", "--banirq=38"}));
  const auto p = plan(t.root(), "auto");
  ASSERT_TRUE(p) << p.error().message();
  const auto& item = only_item(*p);
  ASSERT_EQ(item.changes.size(), 1u);
  EXPECT_EQ(item.changes[0].target, "/proc/irq/38/smp_affinity_list");
  ASSERT_EQ(item.notes.size(), 2u);
  EXPECT_NE(item.notes[1].find("left alone: IRQs 37 (irqbalance, pid 4242"), std::string::npos)
      << item.notes[1];
  EXPECT_NE(item.notes[1].find("--banirq=37"), std::string::npos) << item.notes[1];

  const auto found = check(t.root(), "auto");
  ASSERT_EQ(found.size(), 1u);
  ASSERT_TRUE(found[0].fix);
  EXPECT_FALSE(found[0].fix->by_dltune);
  EXPECT_EQ(found[0].fix->command,
            "add \"--banirq=37\" to IRQBALANCE_ARGS (/etc/default/irqbalance) and restart "
            "irqbalance, or stop it; then dltune tune apply --only irq.affinity");

  // -i 37 bans the other one too: nothing is left to irqbalance.
  t.write("proc/4242/cmdline", args({"irqbalance", "-i", "37", "--banirq", "38"}));
  const auto banned = plan(t.root(), "auto");
  ASSERT_TRUE(banned);
  EXPECT_EQ(only_item(*banned).changes.size(), 2u);
}

TEST(IrqAffinity, AppliedJournaledAndRolledBack) {
  dltune::testing::TempTree t;
  virtio_host(t);
  const fs::path state =
      fs::path(::testing::TempDir()) / ("irq_state_" + std::to_string(::getpid()));
  fs::remove_all(state);
  auto root = t.root();
  auto journal = tune::Journal::open(state.string());
  ASSERT_TRUE(journal) << journal.error().message();
  const auto p = plan(root, "auto");
  ASSERT_TRUE(p);
  auto applied = tune::apply_plan(root, **journal, *p, "test");
  ASSERT_TRUE(applied) << applied.error().message();
  EXPECT_EQ(**root.read("/proc/irq/37/smp_affinity_list"), "0-1\n");
  EXPECT_EQ(**root.read("/proc/irq/38/smp_affinity_list"), "0-1\n");
  auto rolled = tune::rollback_tx(root, **journal, applied->tx);
  ASSERT_TRUE(rolled) << rolled.error().message();
  EXPECT_EQ(**root.read("/proc/irq/37/smp_affinity_list"), "0-3\n");
  EXPECT_EQ(**root.read("/proc/irq/38/smp_affinity_list"), "2-3\n");
  fs::remove_all(state);
}

}  // namespace irq_setting_test

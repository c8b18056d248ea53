// nic.settings on hand-made trees whose ethtool netlink answer is the capture's ethtool.json:
// rings, offloads and a RoCE interface's MTU judged, the fix as ethtool and ip commands, an
// interface without a record unknown, IPoIB left out; and the record read back as written.
#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "core/json.hpp"
#include "inventory/host_facts.hpp"
#include "support/temp_tree.hpp"

namespace nic_rules_test {

using namespace dltune;
using audit::Finding;
using audit::Severity;

namespace {

settings::ProfileEntry entry(const std::string& value = "true") {
  settings::ProfileEntry e;
  e.key = "nic.settings";
  e.expected.values = {value};
  e.severity = "warn";
  e.reason = "because";
  e.source = "a test";
  return e;
}

std::vector<Finding> run(const host::Root& root, const std::string& value = "true") {
  const auto facts = inventory::collect(root, {});
  const audit::AuditInput in{facts, root, false, {}, nullptr};
  return audit::rule_for("nic.settings")(in, entry(value));
}

// mlx5_0 on 0000:17:00.0 with its Ethernet interface ens1f0 (`link_layer` Ethernet: RoCE when
// `roce`, else InfiniBand with the interface ib0 of type 32).
void nic(dltune::testing::TempTree& t, bool roce, int mtu) {
  const std::string fn = "sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0";
  const std::string ifname = roce ? "ens1f0" : "ib0";
  t.write(fn + "/numa_node", "0\n")
      .write(fn + "/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
      .write(fn + "/infiniband/mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)\n")
      .write(fn + "/infiniband/mlx5_0/ports/1/link_layer", roce ? "Ethernet\n" : "InfiniBand\n")
      .link(fn + "/infiniband/mlx5_0/device", "../../../0000:17:00.0")
      .link("sys/class/infiniband/mlx5_0",
            "../../devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0")
      .write(fn + "/net/" + ifname + "/mtu", std::to_string(mtu) + "\n")
      .write(fn + "/net/" + ifname + "/type", roce ? "1\n" : "32\n")
      .write(fn + "/net/" + ifname + "/speed", "100000\n")
      .write(fn + "/net/" + ifname + "/operstate", "up\n")
      .link(fn + "/net/" + ifname + "/device", "../../../0000:17:00.0")
      .link("sys/class/net/" + ifname,
            "../../devices/pci0000:16/0000:16:02.0/0000:17:00.0/net/" + ifname);
}

constexpr const char* kRecord = "run/dltune/capture/ethtool.json";

}  // namespace

TEST(NicSettings, RingsOffloadsAndARoceMtuJudgedWithTheCommandsThatFixThem) {
  dltune::testing::TempTree t;
  nic(t, true, 1500);
  t.write(kRecord, R"({"ens1f0": {
      "rings": {"rx": 1024, "rx_max": 8192, "tx": 1024, "tx_max": 8192},
      "offloads": {"rx-checksum": {"active": true, "changeable": false},
                   "tx-tcp-segmentation": {"active": false, "changeable": true},
                   "tx-tcp6-segmentation": {"active": false, "changeable": true},
                   "rx-lro": {"active": false, "changeable": true},
                   "rx-gro": {"active": true, "changeable": true}}}})");
  const auto found = run(t.root());
  ASSERT_EQ(found.size(), 1u);
  const auto& f = found[0];
  EXPECT_EQ(f.severity, Severity::kWarn);  // an offload off: the profile's severity
  EXPECT_EQ(f.summary,
            "ens1f0 (0000:17:00.0): rings rx 1024 of 8192, tx 1024 of 8192; off: "
            "tx-tcp-segmentation tx-tcp6-segmentation; MTU 1500 on a RoCE interface");
  ASSERT_TRUE(f.fix);
  EXPECT_FALSE(f.fix->by_dltune);
  EXPECT_EQ(f.fix->command,
            "ethtool -G ens1f0 rx 8192 tx 8192; ethtool -K ens1f0 tso on; ip link set ens1f0 "
            "mtu 9000");
  EXPECT_EQ(f.expected,
            "rings at the NIC's maximum, checksum, segmentation and GRO offloads on, MTU 9000 "
            "(RoCE)");

  // Rings at the maximum and the offloads on: only the MTU, info.
  t.write(kRecord, R"({"ens1f0": {
      "rings": {"rx": 8192, "rx_max": 8192, "tx": 8192, "tx_max": 8192},
      "offloads": {"tx-tcp-segmentation": {"active": true, "changeable": true}}}})");
  auto mtu_only = run(t.root());
  ASSERT_EQ(mtu_only.size(), 1u);
  EXPECT_EQ(mtu_only[0].severity, Severity::kInfo);
  EXPECT_EQ(mtu_only[0].fix->command, "ip link set ens1f0 mtu 9000");

  // At 9000 it is met; turned off by the profile, it is not asked.
  t.write("sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/net/ens1f0/mtu", "9000\n");
  const auto met = run(t.root());
  ASSERT_EQ(met.size(), 1u);
  EXPECT_EQ(met[0].severity, Severity::kOk);
  EXPECT_EQ(met[0].summary, "ens1f0 (0000:17:00.0): rings at the maximum, offloads on, MTU 9000");
  EXPECT_EQ(run(t.root(), "false")[0].severity, Severity::kInfo);
}

TEST(NicSettings, WithoutARecordUnknownAndIpoibLeftOut) {
  dltune::testing::TempTree t;
  nic(t, true, 9000);
  const auto found = run(t.root());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].unknown);
  EXPECT_EQ(found[0].severity, Severity::kInfo);
  EXPECT_EQ(found[0].summary, "ens1f0 (0000:17:00.0): its rings and offloads were not read");

  dltune::testing::TempTree ib;
  nic(ib, false, 4092);
  const auto none = run(ib.root());
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].applicable);
}

TEST(NicSettings, TheRecordReadsBackAsCaptureWritesIt) {
  dltune::testing::TempTree t;
  nic(t, true, 9000);
  t.write(kRecord, R"({"ens1f0": {"rings_error": "refused: Operation not supported",
      "offloads": {"rx-gro": {"active": false, "changeable": true}}}})");
  const auto facts = inventory::collect(t.root(), {});
  const auto j = inventory::ethtool_json(facts.network);
  EXPECT_EQ(j,
            inventory::Json::parse(R"({"ens1f0": {"rings_error": "refused: Operation not supported",
      "offloads": {"rx-gro": {"active": false, "changeable": true}}}})"));
  const auto found = run(t.root());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].summary, "ens1f0 (0000:17:00.0): off: rx-gro");
  EXPECT_EQ(found[0].notes[0], "rings not reported: refused: Operation not supported");
}

}  // namespace nic_rules_test

namespace nic_rules_test {

// Neither rings nor offloads could be read (a kernel without ethtool netlink): unknown, with
// both reasons, never "as expected".
TEST(NicSettings, NothingReadIsUnknownNotOk) {
  dltune::testing::TempTree t;
  nic(t, true, 9000);
  const std::string why = "this kernel has no ethtool netlink interface (Linux 5.6 and later)";
  t.write(kRecord, "{\"ens1f0\": {\"rings_error\": \"" + why +
                       "\", \"offloads\": {}, \"offloads_error\": \"" + why + "\"}}");
  const auto found = run(t.root());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].unknown);
  EXPECT_EQ(found[0].severity, Severity::kInfo);
  EXPECT_EQ(found[0].summary, "ens1f0 (0000:17:00.0): its rings and offloads could not be read");
  ASSERT_EQ(found[0].notes.size(), 2u);
  EXPECT_EQ(found[0].notes[1], "offloads: " + why);
}

}  // namespace nic_rules_test

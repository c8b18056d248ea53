// Where GPUs and NICs sit in the PCIe tree: the path parser, the nvidia-smi topo -m relation
// between two functions, the nearest NIC, and the places env reads from hand-made trees and the
// fixture hosts (tests/fixtures/roots/README.md).
#include "inventory/pcie_path.hpp"
#include "support/build_paths.hpp"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "inventory/gpu.hpp"
#include "inventory/network.hpp"
#include "support/temp_tree.hpp"

namespace pcie_path_test {

using dltune::testing::TempTree;
using namespace dltune::inventory;

namespace {

using Path = std::vector<std::string>;

PcieEnd at_place(const std::string& root, Path path, std::optional<int> node) {
  return PcieEnd{PciePlace{root, std::move(path)}, node};
}

dltune::host::Root fixture(const std::string& name) {
  auto root = dltune::host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + name);
  EXPECT_TRUE(root.has_value()) << name;
  return *root;
}

struct Facts {
  GpuFacts gpu;
  NetworkFacts network;
  std::vector<Problem> problems;
};

Facts read_facts(const dltune::host::Root& root) {
  Context ctx(root, {});
  dltune::gpu::Report none;
  none.backend = "nvml";
  none.error = "not loaded in this test";
  Facts f;
  f.gpu = collect_gpus(ctx, std::move(none));
  f.network = collect_network(ctx);
  f.problems = ctx.problems();
  return f;
}

const PciNic* nic_at(const NetworkFacts& f, const std::string& address) {
  for (const auto& n : f.nics)
    if (n.pci_address == address) return &n;
  return nullptr;
}

}  // namespace

TEST(PciePlace, TheBridgesBetweenTheHostBridgeAndTheFunction) {
  const auto p =
      pcie_place("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0/0000:3d:00.0");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->root, "pci0000:3a");
  EXPECT_EQ(p->path, (Path{"0000:3a:00.0", "0000:3b:00.0", "0000:3c:08.0"}));
  EXPECT_EQ(pcie_path_text(*p), "pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0");

  // On the root bus itself (a VM, an integrated device): no bridge at all.
  const auto flat = pcie_place("/sys/devices/pci0000:00/0000:00:1e.0/");
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat->root, "pci0000:00");
  EXPECT_TRUE(flat->path.empty());

  // Behind an Intel VMD domain: the nested "pci10000:e0" is no bridge, its functions are.
  const auto vmd =
      pcie_place("/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0");
  ASSERT_TRUE(vmd);
  EXPECT_EQ(vmd->root, "pci0000:00");
  EXPECT_EQ(vmd->path, (Path{"0000:00:0e.0", "10000:e0:06.0"}));
}

TEST(PciePlace, PathsThatAreNoPciFunctionHaveNoPlace) {
  EXPECT_FALSE(pcie_place("/sys/devices/virtual/net/lo"));
  EXPECT_FALSE(pcie_place("/sys/devices/pci0000:00/0000:00:03.0/virtio2"));  // below a function
  EXPECT_FALSE(pcie_place("/sys/devices/pci0000:00"));                       // the host bridge
  EXPECT_FALSE(pcie_place("/sys/devices/platform/0000:00:01.0"));            // no host bridge
  EXPECT_FALSE(pcie_place(""));
  EXPECT_TRUE(is_sysfs_pci_address("0000:3b:00.0"));
  EXPECT_TRUE(is_sysfs_pci_address("10000:e1:00.0"));
  EXPECT_FALSE(is_sysfs_pci_address("3b:00.0"));       // lspci's short form
  EXPECT_FALSE(is_sysfs_pci_address("0000:3B:00.0"));  // sysfs writes lower case
  EXPECT_FALSE(is_sysfs_pci_address("pci0000:3a"));
  EXPECT_FALSE(is_sysfs_pci_address("0000:3b:20.0"));  // device numbers end at 0x1f
}

TEST(PcieRelation, InTheWordsOfNvidiaSmiTopo) {
  const Path sw = {"0000:15:01.0", "0000:16:00.0"};  // root port, switch upstream port
  auto below = [&](const std::string& port) {
    Path p = sw;
    p.push_back(port);
    return p;
  };
  const auto gpu = at_place("pci0000:15", below("0000:17:00.0"), 0);
  // Another downstream port of the same switch.
  EXPECT_EQ(pcie_relation(gpu, at_place("pci0000:15", below("0000:17:02.0"), 0)),
            PcieRelation::kPix);
  // Two functions of one card directly below one root port.
  EXPECT_EQ(pcie_relation(at_place("pci0000:15", {"0000:15:01.0"}, 0),
                          at_place("pci0000:15", {"0000:15:01.0"}, 0)),
            PcieRelation::kPix);
  // Behind a second switch below another downstream port: several switches.
  Path deep = below("0000:17:03.0");
  deep.insert(deep.end(), {"0000:20:00.0", "0000:21:04.0"});
  EXPECT_EQ(pcie_relation(gpu, at_place("pci0000:15", deep, 0)), PcieRelation::kPxb);
  // Both below that second switch: one switch again.
  Path deep2 = below("0000:17:03.0");
  deep2.insert(deep2.end(), {"0000:20:00.0", "0000:21:05.0"});
  EXPECT_EQ(pcie_relation(at_place("pci0000:15", deep, 0), at_place("pci0000:15", deep2, 0)),
            PcieRelation::kPix);
  // Different root ports of one host bridge: they meet in the root complex.
  EXPECT_EQ(pcie_relation(gpu, at_place("pci0000:15", {"0000:15:03.0"}, 0)), PcieRelation::kPhb);
  // Different host bridges: the NUMA nodes decide.
  EXPECT_EQ(pcie_relation(gpu, at_place("pci0000:4b", {"0000:4b:01.0"}, 0)), PcieRelation::kNode);
  EXPECT_EQ(pcie_relation(gpu, at_place("pci0000:97", {"0000:97:01.0"}, 1)), PcieRelation::kSys);
  EXPECT_EQ(pcie_relation(gpu, at_place("pci0000:97", {"0000:97:01.0"}, std::nullopt)),
            PcieRelation::kUnknown);
  // Without a place only different nodes are sure.
  EXPECT_EQ(pcie_relation(PcieEnd{std::nullopt, 1}, gpu), PcieRelation::kSys);
  EXPECT_EQ(pcie_relation(PcieEnd{std::nullopt, 0}, gpu), PcieRelation::kUnknown);
  EXPECT_STREQ(pcie_relation_name(PcieRelation::kPix), "PIX");
  EXPECT_STREQ(pcie_relation_name(PcieRelation::kPxb), "PXB");
  EXPECT_STREQ(pcie_relation_name(PcieRelation::kPhb), "PHB");
  EXPECT_STREQ(pcie_relation_name(PcieRelation::kNode), "NODE");
  EXPECT_STREQ(pcie_relation_name(PcieRelation::kSys), "SYS");
  EXPECT_STREQ(pcie_relation_name(PcieRelation::kUnknown), "unknown");
}

TEST(PcieRelation, TheBridgesBetweenAreTheSwitchPortsOnEitherSide) {
  const PciePlace gpu{"pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"}};
  const PciePlace nic{"pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:02.0"}};
  EXPECT_EQ(bridges_between(gpu, nic), (Path{"0000:17:00.0", "0000:17:02.0"}));
  EXPECT_TRUE(bridges_between(gpu, PciePlace{"pci0000:4b", {"0000:4b:01.0"}}).empty());
}

TEST(PcieRelation, TheNearestNicIsTheFirstOfTheNearest) {
  const auto gpu = at_place("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"}, 0);
  EXPECT_FALSE(nearest_nic(gpu, {}));
  const std::vector<PcieEnd> nics = {
      at_place("pci0000:97", {"0000:97:01.0"}, 1),                                  // SYS
      at_place("pci0000:4b", {"0000:4b:01.0"}, 0),                                  // NODE
      at_place("pci0000:3a", {"0000:3a:01.0"}, 0),                                  // NODE
      at_place("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:02.0"}, 0),  // PIX
  };
  auto n = nearest_nic(gpu, nics);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->index, 3u);
  EXPECT_EQ(n->relation, PcieRelation::kPix);
  n = nearest_nic(gpu, {nics[0], nics[1], nics[2]});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->index, 1u);
  EXPECT_EQ(n->relation, PcieRelation::kNode);
}

TEST(PcieFacts, GpusAndNicsOfTheRdmaHostWithTheirPlaces) {
  const auto root = fixture("gpu4-numa2-rdma");
  const auto f = read_facts(root);
  EXPECT_TRUE(f.problems.empty()) << f.problems.front().path << ": " << f.problems.front().reason;
  ASSERT_EQ(f.gpu.devices.size(), 4u);
  const auto& gpu1 = f.gpu.devices[1];
  EXPECT_EQ(gpu1.address, "0000:19:00.0");
  ASSERT_TRUE(gpu1.pcie_place);
  EXPECT_EQ(gpu1.pcie_place->root, "pci0000:15");
  EXPECT_EQ(gpu1.pcie_place->path, (Path{"0000:15:01.0", "0000:16:00.0", "0000:17:01.0"}));
  ASSERT_TRUE(f.gpu.devices[3].pcie_place);
  EXPECT_EQ(f.gpu.devices[3].pcie_place->path, Path{"0000:97:01.0"});
  EXPECT_EQ(f.gpu.devices[3].numa_node, 1);

  // The two HCAs with their IPoIB interfaces, and the 100 GbE port without RDMA.
  ASSERT_EQ(f.network.nics.size(), 3u);
  const auto& hca = f.network.nics[0];
  EXPECT_EQ(hca.pci_address, "0000:1a:00.0");
  EXPECT_EQ(hca.rdma_device, "mlx5_0");
  EXPECT_EQ(hca.netdevs, Path{"ib0"});
  EXPECT_EQ(hca.numa_node, 0);
  EXPECT_EQ(hca.numa_node_source, "numa_node");
  ASSERT_TRUE(hca.pcie_place);
  EXPECT_EQ(hca.pcie_place->path, (Path{"0000:15:01.0", "0000:16:00.0", "0000:17:02.0"}));
  EXPECT_EQ(f.network.nics[1].rdma_device, "mlx5_1");
  const auto& eth = f.network.nics[2];
  EXPECT_EQ(eth.pci_address, "0000:b8:00.0");
  EXPECT_FALSE(eth.rdma_device);
  EXPECT_EQ(eth.netdevs, Path{"ens2f0"});
  EXPECT_EQ(eth.numa_node, 1);

  const auto j = to_json(f.network);
  EXPECT_EQ(j["nics"][0]["rdma_device"], "mlx5_0");
  EXPECT_EQ(j["nics"][0]["pcie_root"], "pci0000:15");
  EXPECT_EQ(j["nics"][0]["pcie_path"][2], "0000:17:02.0");
  EXPECT_FALSE(j["nics"][2].contains("rdma_device"));
  const auto g = to_json(f.gpu);
  EXPECT_EQ(g["devices"][3]["pcie_root"], "pci0000:97");
  EXPECT_EQ(g["devices"][3]["pcie_path"], nlohmann::ordered_json::array({"0000:97:01.0"}));
}

TEST(PcieFacts, OnTheEightGpuNodeEveryDeviceSitsOnItsOwnRootBus) {
  const auto root = fixture("gpu8-numa2-cgv2");
  const auto f = read_facts(root);
  for (const auto& d : f.gpu.devices) {
    ASSERT_TRUE(d.pcie_place) << d.address;
    EXPECT_EQ(d.pcie_place->root, "pci" + d.address.substr(0, 7)) << d.address;
    EXPECT_TRUE(d.pcie_place->path.empty()) << d.address;
  }
  // Four HCAs and the RoCE port (mlx5_2 with eth0); the 1 GbE eno1 is no training NIC.
  ASSERT_EQ(f.network.nics.size(), 5u);
  const auto* roce = nic_at(f.network, "0000:4b:00.0");
  ASSERT_NE(roce, nullptr);
  EXPECT_EQ(roce->rdma_device, "mlx5_2");
  EXPECT_EQ(roce->netdevs, Path{"eth0"});
  EXPECT_EQ(nic_at(f.network, "0000:07:00.0"), nullptr);
  EXPECT_EQ(nic_at(f.network, "0000:9c:00.0")->numa_node, 1);
  EXPECT_EQ(nic_at(f.network, "0000:9c:00.0")->rdma_device, "mlx5_3");
}

TEST(PcieFacts, NicsFromSysfsAsTheKernelWritesThem) {
  TempTree t;
  t.write("sys/devices/system/node/node0/cpulist", "0-3\n")
      .write("sys/devices/system/node/node1/cpulist", "4-7\n");
  // An HCA whose firmware gave no node (numa_node -1): its local CPUs say node 1.
  const std::string hca = "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0";
  t.write(hca + "/numa_node", "-1\n")
      .write(hca + "/local_cpulist", "4-7\n")
      .link("sys/bus/pci/devices/0000:98:00.0",
            "../../../devices/pci0000:97/0000:97:01.0/0000:98:00.0")
      .link("sys/class/infiniband/mlx5_0",
            "../../devices/pci0000:97/0000:97:01.0/0000:98:00.0/infiniband/mlx5_0")
      .link(hca + "/infiniband/mlx5_0/device", "../..")
      .write(hca + "/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  // A software RoCE device (rdma_rxe) has no PCI function: no NIC of its own.
  t.write("sys/devices/virtual/infiniband/rxe0/ports/1/state", "4: ACTIVE\n")
      .link("sys/class/infiniband/rxe0", "../../devices/virtual/infiniband/rxe0");
  // A 1 GbE port is no training NIC; one whose speed the driver does not report may be.
  for (const auto& [name, addr, speed] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"eno1", "0000:07:00.0", "1000"}, {"ens5", "0000:31:00.0", ""}}) {
    const std::string dev = "sys/devices/pci0000:00/0000:00:1c.0/" + addr;
    t.write(dev + "/numa_node", "0\n")
        .link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/0000:00:1c.0/" + addr)
        .link("sys/class/net/" + name,
              "../../devices/pci0000:00/0000:00:1c.0/" + addr + "/net/" + name)
        .link(dev + "/net/" + name + "/device", "../../../" + addr)
        .write(dev + "/net/" + name + "/mtu", "1500\n");
    if (!speed.empty()) t.write(dev + "/net/" + name + "/speed", speed + "\n");
  }
  const auto root = t.root();
  const auto f = read_facts(root);
  EXPECT_TRUE(f.problems.empty()) << f.problems.front().path << ": " << f.problems.front().reason;
  ASSERT_EQ(f.network.nics.size(), 2u);
  const auto& ens5 = f.network.nics[0];
  EXPECT_EQ(ens5.pci_address, "0000:31:00.0");
  EXPECT_EQ(ens5.netdevs, Path{"ens5"});
  EXPECT_EQ(ens5.numa_node, 0);
  ASSERT_TRUE(ens5.pcie_place);
  EXPECT_EQ(ens5.pcie_place->path, Path{"0000:00:1c.0"});
  const auto& mlx = f.network.nics[1];
  EXPECT_EQ(mlx.pci_address, "0000:98:00.0");
  EXPECT_EQ(mlx.rdma_device, "mlx5_0");
  EXPECT_TRUE(mlx.netdevs.empty());
  EXPECT_EQ(mlx.numa_node, 1);
  EXPECT_EQ(mlx.numa_node_source, "local_cpulist");
  ASSERT_TRUE(mlx.pcie_place);
  EXPECT_EQ(mlx.pcie_place->root, "pci0000:97");
  EXPECT_EQ(mlx.pcie_place->path, Path{"0000:97:01.0"});
}

}  // namespace pcie_path_test

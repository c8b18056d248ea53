// The whole inventory on the hand-made fixture hosts (tests/fixtures/roots/README.md): the
// facts each host was made to show.
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "inventory/host_facts.hpp"
#include "support/build_paths.hpp"

namespace fixture_hosts_test {

using namespace dltune::inventory;

namespace {

HostFacts facts_of(const std::string& name) {
  auto root = dltune::host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + name);
  EXPECT_TRUE(root.has_value()) << root.error().message();
  return collect(*root, CollectOptions{});
}

}  // namespace

TEST(Gpu8Numa2Host, OsAndCgroup) {
  const auto f = facts_of("gpu8-numa2-cgv2");
  EXPECT_EQ(f.os.name, "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(f.os.kernel_release, "5.15.0-105-generic");
  EXPECT_EQ(f.os.cmdline->intel_iommu, "on");
  EXPECT_EQ(f.os.cmdline->iommu, "pt");
  EXPECT_TRUE(f.os.cmdline->pci_noacs);
  EXPECT_TRUE(f.os.nouveau_blacklist.empty());  // "#blacklist nouveau" is a comment
  EXPECT_EQ(f.os.boot_time, 1713628799);
  EXPECT_EQ(f.os.virtualization, "none");
  EXPECT_FALSE(f.os.container);
  ASSERT_TRUE(f.os.cgroup);
  EXPECT_EQ(f.os.cgroup->version, "v2");
  EXPECT_EQ(f.os.cgroup->controllers.size(), 8u);
  EXPECT_EQ(f.os.cgroup->own_path, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_TRUE(f.problems.empty()) << f.problems[0].fact << " " << f.problems[0].reason;
}

TEST(Gpu8Numa2Host, CpuTopologyFromHwlocOnTheTree) {
  const auto f = facts_of("gpu8-numa2-cgv2");
  EXPECT_EQ(f.cpu.model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(f.cpu.sockets, 2);
  EXPECT_EQ(f.cpu.cores, 16);
  EXPECT_EQ(f.cpu.threads, 32);
  ASSERT_EQ(f.cpu.numa_nodes.size(), 2u);
  EXPECT_EQ(f.cpu.numa_nodes[0].cpus.size(), 16u);
  EXPECT_EQ(f.cpu.numa_nodes[0].cpus[8], 16);  // 0-7,16-23
  EXPECT_EQ(f.cpu.numa_nodes[1].distances, (std::vector<int>{21, 10}));
  EXPECT_EQ(f.cpu.numa_nodes[0].memory_bytes, 527968692ull * 1024);
  EXPECT_EQ(f.cpu.governors.at("performance").size(), 16u);
  EXPECT_EQ(f.cpu.governors.at("powersave").front(), 16);
  EXPECT_EQ(f.cpu.scaling_driver, "intel_pstate");
  for (const char* flag : {"avx512f", "avx512_bf16", "amx_tile", "amx_int8"})
    EXPECT_NE(std::find(f.cpu.flags.begin(), f.cpu.flags.end(), flag), f.cpu.flags.end()) << flag;
}

TEST(Gpu8Numa2Host, MemoryStorageNetwork) {
  const auto f = facts_of("gpu8-numa2-cgv2");
  EXPECT_EQ(f.memory.total_bytes, 1056412596ull * 1024);
  EXPECT_TRUE(f.memory.swap_devices.empty());
  EXPECT_EQ(f.memory.thp_enabled->selected, "madvise");
  ASSERT_TRUE(f.memory.shm);
  EXPECT_EQ(f.memory.shm->size_source, "tmpfs default (half of RAM)");
  EXPECT_EQ(f.memory.limits.at("nofile").soft, 1024u);
  EXPECT_FALSE(f.memory.limits.at("memlock").soft);  // unlimited
  bool data = false, nfs = false;
  for (const auto& fs : f.storage.file_systems) {
    if (fs.mount_point == "/data") data = fs.noatime && fs.fstype == "xfs";
    if (fs.mount_point == "/datasets") nfs = fs.fstype == "nfs4";
  }
  EXPECT_TRUE(data);
  EXPECT_TRUE(nfs);
  ASSERT_EQ(f.storage.block_devices.size(), 3u);
  EXPECT_EQ(f.storage.block_devices[2].name, "sda");
  EXPECT_EQ(f.storage.block_devices[2].rotational, true);
  int ib = 0, roce = 0;
  for (const auto& d : f.network.rdma)
    for (const auto& p : d.ports) (p.link_layer == "Ethernet" ? roce : ib) += 1;
  EXPECT_EQ(ib, 4);
  EXPECT_EQ(roce, 1);
  EXPECT_EQ(f.network.sysctls.at("net.core.rmem_max"), "212992");
  bool eth0 = false;
  for (const auto& i : f.network.interfaces) {
    if (i.name == "eth0") eth0 = i.mtu == 9000;
  }
  EXPECT_TRUE(eth0);
}

TEST(ContainerHost, DockerCgroupV2SmallShmAndLowLimits) {
  const auto f = facts_of("container-cgv2");
  EXPECT_EQ(f.os.container, "docker");
  EXPECT_EQ(f.os.virtualization, "qemu");  // DMI says QEMU (Q35); CPUID would say KVM
  ASSERT_TRUE(f.os.cgroup);
  EXPECT_EQ(f.os.cgroup->version, "v2");
  EXPECT_EQ(f.os.cgroup->own_path, "/");
  EXPECT_EQ(f.os.cgroup->namespaced, true);
  ASSERT_TRUE(f.memory.shm);
  EXPECT_EQ(f.memory.shm->size_bytes, 64ull << 20);
  EXPECT_EQ(f.memory.limits.at("memlock").soft, 65536u);
  EXPECT_EQ(f.memory.swap_devices.size(), 1u);
  EXPECT_EQ(f.cpu.threads, 8);
  EXPECT_EQ(f.cpu.numa_nodes.size(), 1u);
  EXPECT_TRUE(f.cpu.governors.empty());
  EXPECT_TRUE(f.network.rdma.empty());
  EXPECT_FALSE(f.network.sysctls.count("net.core.rmem_max"));  // the host's namespace's
  EXPECT_TRUE(f.problems.empty()) << f.problems[0].fact << " " << f.problems[0].reason;
}

TEST(ThisVmCapture, TheCapturedVmReadsBackWhole) {
  // tests/fixtures/roots/this-vm is `dltune capture` of the development VM, unpacked.
  const auto f = facts_of("this-vm");
  EXPECT_TRUE(f.problems.empty()) << f.problems[0].fact << " " << f.problems[0].reason;
  EXPECT_EQ(f.os.kernel_release, "6.18.44-fc-v769");
  EXPECT_EQ(f.os.cgroup->version, "hybrid");
  EXPECT_EQ(f.os.virtualization, "vm (unknown hypervisor)");
  EXPECT_EQ(f.cpu.threads, 2);
  EXPECT_EQ(f.cpu.numa_nodes.size(), 1u);
  EXPECT_EQ(f.memory.limits.at("memlock").hard, 8192u * 1024);  // no CAP_SYS_RESOURCE here
  const auto j = to_json(f);
  EXPECT_EQ(j["cuda"]["toolkits"][0]["version"], "13.0");
  EXPECT_EQ(j["cuda"]["cudnn"][0]["version"], "9.19.0");
  EXPECT_EQ(j["cuda"]["nccl"][0]["version"], "2.28.9");
  bool torch = false;
  for (const auto& i : j["python"]["interpreters"]) {
    if (i["resolved"] == "/usr/bin/python3.11") {
      torch = i["torch"]["version"] == "1.13.0a0" && i["torch"]["cuda_build"] == false;
    }
  }
  EXPECT_TRUE(torch);
  EXPECT_EQ(j["gpu"]["nvml_source"], "capture");
  EXPECT_EQ(j["gpu"]["nvml"]["loaded"], false);
}

}  // namespace fixture_hosts_test

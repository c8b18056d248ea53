// OS, memory, storage and network facts on small hand-made host trees.
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "inventory/memory.hpp"
#include "inventory/network.hpp"
#include "inventory/os.hpp"
#include "inventory/storage.hpp"
#include "support/temp_tree.hpp"

namespace system_facts_test {

using dltune::testing::TempTree;
using namespace dltune::inventory;

namespace {

const char* kContainerMounts =
    "600 500 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
    "601 600 0:51 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "602 600 0:52 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755\n"
    "603 602 0:53 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k\n"
    "604 600 0:54 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro\n"
    "605 604 0:28 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw\n"
    "606 600 259:1 /data /data rw,noatime - xfs /dev/nvme0n1p1 rw,attr2,discard\n";

Context context(const dltune::host::Root& root) {
  Context ctx(root, {});
  ctx.fs_usage = [](const std::string& mp) -> std::optional<FsUsage> {
    if (mp == "/dev/shm") return FsUsage{64ull << 20, 48ull << 20};
    if (mp == "/data") return FsUsage{1ull << 40, 1ull << 39};
    return std::nullopt;
  };
  return ctx;
}

}  // namespace

TEST(OsFacts, ContainerWithCgroupV2) {
  TempTree t;
  t.write("etc/os-release",
          "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n")
      .write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
      .write("proc/sys/kernel/hostname", "trainer-7f9\n")
      .write("proc/cmdline",
             "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt pci=noacs\n")
      .write("proc/stat", "cpu  1 2 3 4\nbtime 1700000000\n")
      .write("proc/uptime", "93784.52 180000.00\n")
      .write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n")
      .write(".dockerenv", "")
      .write("proc/4242/mountinfo", kContainerMounts)
      .write("proc/4242/cgroup", "0::/\n")
      .link("proc/self", "4242")
      .write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  auto root = t.root();
  auto ctx = context(root);
  const auto f = collect_os(ctx);
  EXPECT_EQ(f.name, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(f.kernel_release, "6.1.0-18-amd64");
  EXPECT_EQ(f.hostname, "trainer-7f9");
  ASSERT_TRUE(f.cmdline);
  EXPECT_EQ(f.cmdline->intel_iommu, "on");
  EXPECT_EQ(f.cmdline->iommu, "pt");
  EXPECT_TRUE(f.cmdline->pci_noacs);
  EXPECT_FALSE(f.cmdline->amd_iommu);
  EXPECT_TRUE(f.nouveau_blacklist.empty());
  EXPECT_EQ(f.boot_time, 1700000000);
  EXPECT_DOUBLE_EQ(*f.uptime_seconds, 93784.52);
  EXPECT_EQ(f.virtualization, "amazon");
  EXPECT_EQ(f.container, "docker");
  EXPECT_EQ(f.container_evidence.size(), 2u);  // /.dockerenv and the overlay root
  ASSERT_TRUE(f.cgroup);
  EXPECT_EQ(f.cgroup->version, "v2");
  EXPECT_EQ(f.cgroup->v2_mount, "/sys/fs/cgroup");
  EXPECT_EQ(f.cgroup->controllers,
            (std::vector<std::string>{"cpuset", "cpu", "io", "memory", "pids"}));
  EXPECT_EQ(f.cgroup->own_path, "/");
  EXPECT_EQ(f.cgroup->namespaced, true);
  EXPECT_TRUE(ctx.problems().empty());
  const auto j = to_json(f);
  EXPECT_EQ(j["cgroup"]["version"], "v2");
  EXPECT_EQ(j["nouveau_blacklisted"], false);
  EXPECT_FALSE(j.contains("amd_iommu"));
}

TEST(OsFacts, NouveauBlacklistedOnCmdlineAndInModprobe) {
  TempTree t;
  t.write("proc/cmdline", "quiet modprobe.blacklist=nouveau,radeon nouveau.modeset=0\n")
      .write("etc/modprobe.d/blacklist-nouveau.conf",
             "# nvidia\nblacklist nouveau\noptions nouveau modeset=0\n")
      .write("etc/modprobe.d/other.conf", "blacklist pcspkr\n")
      .write("etc/modprobe.d/readme.txt", "blacklist nouveau\n");  // not a .conf: ignored
  auto root = t.root();
  auto ctx = context(root);
  const auto f = collect_os(ctx);
  ASSERT_EQ(f.nouveau_blacklist.size(), 3u);
  EXPECT_NE(f.nouveau_blacklist[0].find("modprobe.blacklist"), std::string::npos);
  EXPECT_NE(f.nouveau_blacklist[2].find("/etc/modprobe.d/blacklist-nouveau.conf"),
            std::string::npos);
}

TEST(OsFacts, HybridCgroupsLikeThisVm) {
  TempTree t;
  t.write("proc/self/mountinfo",
          "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
          "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
          "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
          "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
          "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
      .write("proc/self/cgroup", "4:memory:/process_api/abc\n1:cpu:/\n0::/\n")
      .write("sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
  auto root = t.root();
  auto ctx = context(root);
  const auto f = collect_os(ctx);
  ASSERT_TRUE(f.cgroup);
  EXPECT_EQ(f.cgroup->version, "hybrid");
  EXPECT_EQ(f.cgroup->controllers, (std::vector<std::string>{"cpu", "memory"}));
  EXPECT_EQ(f.cgroup->v2_controllers, (std::vector<std::string>{"hugetlb"}));
  EXPECT_EQ(f.cgroup->own_path, "/process_api/abc");
  EXPECT_FALSE(f.container);
}

TEST(OsFacts, GarbledAndUnreadableFilesAreReportedAndTheRestStillCollected) {
  TempTree t;
  t.write("proc/sys/kernel/osrelease", "6.1.0\n")
      .write("proc/self/mountinfo", "this is not mountinfo\n")
      .unreadable("proc/cmdline")
      .write("proc/stat", "cpu 1 2 3\n");
  auto root = t.root();
  auto ctx = context(root);
  const auto f = collect_os(ctx);
  EXPECT_EQ(f.kernel_release, "6.1.0");
  EXPECT_FALSE(f.cmdline);
  EXPECT_FALSE(f.boot_time);
  std::map<std::string, std::string> by_fact;
  for (const auto& p : ctx.problems()) by_fact[p.fact] = p.path + ": " + p.reason;
  ASSERT_TRUE(by_fact.count("os.cmdline"));
  EXPECT_NE(by_fact["os.cmdline"].find("/proc/cmdline"), std::string::npos);
  ASSERT_TRUE(by_fact.count("storage.mounts"));
  EXPECT_NE(by_fact["storage.mounts"].find("line 1"), std::string::npos);
  ASSERT_TRUE(by_fact.count("os.boot_time"));
}

TEST(MemoryFacts, ContainerShmSwapThpLimits) {
  TempTree t;
  t.write("proc/meminfo",
          "MemTotal:       16384000 kB\nMemAvailable:   12000000 kB\nSwapTotal:       1048572 kB\n"
          "SwapFree:         1048572 kB\nHugePages_Total:       4\nHugePages_Free:        2\n"
          "Hugepagesize:       2048 kB\n")
      .write("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/swapfile file 1048572 0 -2\n")
      .write("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n")
      .write("sys/kernel/mm/transparent_hugepage/defrag",
             "always defer [defer+madvise] madvise never\n")
      .write("proc/sys/vm/swappiness", "60\n")
      .write("proc/sys/vm/overcommit_memory", "0\n")
      .write("proc/self/mountinfo", kContainerMounts)
      .write("proc/self/limits",
             "Limit                     Soft Limit           Hard Limit           Units     \n"
             "Max open files            1024                 1048576              files     \n"
             "Max locked memory         65536                65536                bytes     \n"
             "Max processes             unlimited            unlimited            processes \n");
  auto root = t.root();
  auto ctx = context(root);
  const auto f = collect_memory(ctx);
  EXPECT_EQ(f.total_bytes, 16384000ull * 1024);
  EXPECT_EQ(f.swap_total_bytes, 1048572ull * 1024);
  ASSERT_EQ(f.swap_devices.size(), 1u);
  EXPECT_EQ(f.swap_devices[0].name, "/swapfile");
  EXPECT_EQ(f.hugepages_total, 4u);
  EXPECT_EQ(f.thp_enabled->selected, "always");
  EXPECT_EQ(f.thp_defrag->selected, "defer+madvise");
  ASSERT_TRUE(f.shm);
  EXPECT_EQ(f.shm->size_bytes, 64ull << 20);
  EXPECT_EQ(f.shm->size_source, "size= mount option");
  EXPECT_EQ(f.shm->used_bytes, 16ull << 20);
  EXPECT_EQ(f.sysctls.at("vm.swappiness"), "60");
  EXPECT_EQ(f.limits.at("nofile").soft, 1024u);
  EXPECT_EQ(f.limits.at("nofile").hard, 1048576u);
  EXPECT_EQ(f.limits.at("memlock").soft, 65536u);
  EXPECT_FALSE(f.limits.at("nproc").soft);
  const auto j = to_json(f);
  EXPECT_EQ(j["limits"]["nproc"]["soft"], "unlimited");
  EXPECT_EQ(j["shm"]["size_bytes"], 64ull << 20);
  EXPECT_EQ(j["thp"]["enabled"]["selected"], "always");
}

TEST(MemoryFacts, ShmDefaultIsHalfOfRam) {
  TempTree t;
  t.write("proc/meminfo", "MemTotal: 1000 kB\n")
      .write("proc/self/mountinfo",
             "25 24 0:23 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,inode64\n");
  auto root = t.root();
  Context ctx(root, {});
  const auto f = collect_memory(ctx);
  ASSERT_TRUE(f.shm);
  EXPECT_EQ(f.shm->size_bytes, 500u * 1024);
  EXPECT_EQ(f.shm->size_source, "tmpfs default (half of RAM)");
}

TEST(MemoryFacts, GarbledMeminfoIsAProblem) {
  TempTree t;
  t.write("proc/meminfo", "MemTotal: many kB\n").write("proc/sys/vm/swappiness", "10\n");
  auto root = t.root();
  Context ctx(root, {});
  const auto f = collect_memory(ctx);
  EXPECT_FALSE(f.total_bytes);
  EXPECT_EQ(f.sysctls.at("vm.swappiness"), "10");
  ASSERT_EQ(ctx.problems().size(), 3u);
  EXPECT_EQ(ctx.problems()[0].path, "/proc/meminfo");
  EXPECT_NE(ctx.problems()[0].reason.find("line 1"), std::string::npos);
  // What every host has and this tree lacks is unknown, not "no swap".
  EXPECT_EQ(ctx.problems()[1].path, "/proc/swaps");
  EXPECT_EQ(ctx.problems()[1].reason, "missing from this host tree");
  EXPECT_EQ(ctx.problems()[2].path, "/proc/self/mountinfo");
  EXPECT_FALSE(f.swaps_known);
  const auto sections = render_memory(f);
  ASSERT_FALSE(sections.empty());
  bool said = false;
  for (const auto& row : sections[0].rows)
    if (row.label == "swap") said = row.value.starts_with("unknown");
  EXPECT_TRUE(said) << "the swap line says unknown";
}

TEST(StorageFacts, DataFileSystemsAndBlockDevices) {
  TempTree t;
  t.write("proc/self/mountinfo", kContainerMounts)
      .write("sys/block/nvme0n1/size", "3750748848\n")
      .write("sys/block/nvme0n1/queue/rotational", "0\n")
      .write("sys/block/nvme0n1/queue/scheduler", "[none] mq-deadline\n")
      .write("sys/block/nvme0n1/queue/read_ahead_kb", "128\n")
      .write("sys/block/nvme0n1/device/model", "SAMSUNG MZQL21T9HCJR-00A07\n")
      .write("sys/block/sda/size", "7814037168\n")
      .write("sys/block/sda/queue/rotational", "1\n")
      .write("sys/block/sda/queue/scheduler", "none [mq-deadline] bfq\n")
      .write("sys/block/loop0/size", "0\n");
  auto root = t.root();
  auto ctx = context(root);
  const auto f = collect_storage(ctx);
  std::vector<std::string> points;
  for (const auto& fs : f.file_systems) points.push_back(fs.mount_point);
  EXPECT_EQ(points, (std::vector<std::string>{"/", "/dev/shm", "/data"}));
  const auto& data = f.file_systems[2];
  EXPECT_EQ(data.fstype, "xfs");
  EXPECT_TRUE(data.noatime);
  EXPECT_TRUE(data.discard);
  EXPECT_EQ(data.total_bytes, 1ull << 40);
  EXPECT_FALSE(f.file_systems[0].noatime);
  ASSERT_EQ(f.block_devices.size(), 2u);  // loop0 left out
  EXPECT_EQ(f.block_devices[0].name, "nvme0n1");
  EXPECT_TRUE(f.block_devices[0].nvme);
  EXPECT_EQ(f.block_devices[0].rotational, false);
  EXPECT_EQ(f.block_devices[0].scheduler, "none");
  EXPECT_EQ(f.block_devices[0].read_ahead_kb, 128u);
  EXPECT_EQ(f.block_devices[0].size_bytes, 3750748848ull * 512);
  EXPECT_EQ(f.block_devices[0].model, "SAMSUNG MZQL21T9HCJR-00A07");
  EXPECT_EQ(f.block_devices[1].rotational, true);
  EXPECT_EQ(f.block_devices[1].scheduler, "mq-deadline");
}

TEST(NetworkFacts, InterfacesRdmaAndTcpBuffers) {
  TempTree t;
  t.write("sys/devices/pci0000:00/0000:00:03.0/net/eth0/mtu", "9000\n")
      .write("sys/devices/pci0000:00/0000:00:03.0/net/eth0/speed", "25000\n")
      .write("sys/devices/pci0000:00/0000:00:03.0/net/eth0/operstate", "up\n")
      .link("sys/devices/pci0000:00/0000:00:03.0/net/eth0/device", "../../../0000:00:03.0")
      .link("sys/class/net/eth0", "../../devices/pci0000:00/0000:00:03.0/net/eth0")
      .write("sys/devices/virtual/net/docker0/mtu", "1500\n")
      .write("sys/devices/virtual/net/docker0/speed", "-1\n")
      .link("sys/class/net/docker0", "../../devices/virtual/net/docker0")
      .write("sys/devices/virtual/net/lo/mtu", "65536\n")
      .link("sys/class/net/lo", "../../devices/virtual/net/lo")
      .write("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
      .write("sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n")
      .write("sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n")
      .write("sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n")
      .write("sys/class/infiniband/mlx5_1/ports/1/link_layer", "Ethernet\n")
      .write("proc/sys/net/core/rmem_max", "212992\n")
      .write("proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
  auto root = t.root();
  auto ctx = context(root);
  const auto f = collect_network(ctx);
  ASSERT_EQ(f.interfaces.size(), 2u);  // lo left out
  EXPECT_EQ(f.interfaces[0].name, "docker0");
  EXPECT_TRUE(f.interfaces[0].is_virtual);
  EXPECT_FALSE(f.interfaces[0].speed_mbps);
  EXPECT_EQ(f.interfaces[1].name, "eth0");
  EXPECT_EQ(f.interfaces[1].mtu, 9000);
  EXPECT_EQ(f.interfaces[1].speed_mbps, 25000);
  EXPECT_FALSE(f.interfaces[1].is_virtual);
  EXPECT_EQ(f.interfaces[1].pci_address, "0000:00:03.0");
  ASSERT_EQ(f.rdma.size(), 2u);
  EXPECT_EQ(f.rdma[0].ports[0].state, "ACTIVE");
  EXPECT_EQ(f.rdma[0].ports[0].rate, "400 Gb/sec (4X NDR)");
  EXPECT_EQ(f.rdma[1].ports[0].link_layer, "Ethernet");
  EXPECT_EQ(f.sysctls.at("net.ipv4.tcp_rmem"), "4096 131072 6291456");
  const auto j = to_json(f);
  EXPECT_EQ(j["rdma"][1]["ports"][0]["roce"], true);
  EXPECT_EQ(j["rdma"][0]["ports"][0]["roce"], false);
}

TEST(OsFacts, ADockerenvFileOnAMachinesOwnDiskIsNotAContainer) {
  // A VM whose disk was made from a Docker image keeps /.dockerenv (this development VM does).
  dltune::testing::TempTree t;
  t.write(".dockerenv", "")
      .write("proc/self/mountinfo", "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n");
  auto root = t.root();
  Context ctx(root, {});
  const auto f = collect_os(ctx);
  EXPECT_FALSE(f.container);
  ASSERT_EQ(f.container_evidence.size(), 1u);
  EXPECT_NE(f.container_evidence[0].find("not counted"), std::string::npos);
}

}  // namespace system_facts_test

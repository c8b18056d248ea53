// `check -p distributed` on the fixture hosts gives exactly the findings each host was built to
// show (tests/fixtures/roots/README.md): every id with the severity of each of its findings.
#include <gtest/gtest.h>

#include "audit/check.hpp"
#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/build_paths.hpp"

namespace fixture_findings_test {

using namespace dltune;

namespace {

// "id severity severity ..." per line; "n/a" for a finding that is not applicable.
std::string findings_of(const std::string& host, const std::string& profile_name, int* exit) {
  auto root = host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + host);
  EXPECT_TRUE(root.has_value());
  auto profile = settings::load_profile(profile_name, *root, settings::validate_key);
  EXPECT_TRUE(profile.has_value()) << profile.error().message();
  const auto facts = inventory::collect(*root, {});
  auto report = audit::run_check(facts, *root, *profile, {});
  EXPECT_TRUE(report.has_value());
  std::string out, last;
  for (const auto& f : report->findings) {
    if (f.id != last) out += (out.empty() ? "" : "\n") + f.id;
    out += std::string(" ") + (f.applicable ? audit::severity_name(f.severity) : "n/a");
    last = f.id;
  }
  *exit = audit::exit_code(*report);
  return out + "\n";
}

}  // namespace

TEST(FixtureFindings, Gpu8Numa2) {
  int exit = -1;
  EXPECT_EQ(findings_of("gpu8-numa2-cgv2", "distributed", &exit),
            "vm.swappiness info\n"
            "vm.overcommit_memory warn\n"
            "vm.dirty_ratio info\n"
            "vm.dirty_background_ratio info\n"
            "thp.enabled ok\n"
            "thp.defrag warn\n"
            "shm.size ok\n"             // half of 1 TiB
            "swap.consistency ok\n"     // no swap
            "net.core.rmem_max warn\n"  // kernel defaults
            "net.core.wmem_max warn\n"
            "net.ipv4.tcp_rmem warn\n"
            "net.ipv4.tcp_wmem warn\n"
            "net.ipv4.tcp_fastopen info\n"
            "cpu.governor warn\n"  // powersave on CPUs 16-31
            "cpu.epp info\n"       // balance_performance on CPUs 16-31
            "irq.affinity n/a\n"
            "limits.nofile warn\n"                 // soft 1024
            "mount.noatime info ok info info\n"    // / relatime; /data, /archive, /datasets
            "block.read_ahead_kb ok ok ok\n"       // nvme0n1 (the root), nvme1n1, sda
            "block.scheduler ok ok ok\n"           // none on the NVMe drives, mq-deadline on sda
            "block.nr_requests n/a n/a info\n"     // sda's mq-deadline holds 64
            "storage.data_device ok ok info ok\n"  // /archive on a hard disk; NFS with nconnect
            "storage.trim info info\n"             // nothing trims the NVMe drives
            "gpu.health info\n"                    // unknown: no NVML in the tree
            "gpu.persistence info\n"               // no NVML in the tree
            "gpu.nouveau critical\n"               // loaded beside nvidia
            "gpu.driver_match critical\n"          // 535.161.07 module, 550.54.15 library
            "gpu.driver_cuda ok\n"                 // torch cu121 needs 530.30.02
            "gpu.pcie_link ok ok ok ok ok warn ok ok\n"  // 0000:ab:00.0 at x8 of x16
            "gpu.ecc info\n"
            "gpu.throttle info\n"
            "gpu.power_limit info\n"
            "gpu.mig info\n"
            "gpu.nvlink info\n"
            "gpu.numa_placement info\n"  // GPUs 0-3 on node 0, 4-7 on node 1
            "env.training warn\n"        // the venv's cuDNN wheel shadowed
            "build.toolchain info\n"     // the conda Python: no g++, headers or ninja in the tree
            "blas.library ok\n"          // OpenBLAS as libblas.so.3
            "limits.memlock ok\n"        // unlimited
            "kernel.numa_balancing warn\n"
            "iommu.mode ok\n"              // iommu=pt
            "pci.acs n/a\n"                // no bridges in the tree
            "rdma.ports ok ok ok ok ok\n"  // 4 IB + 1 RoCE, all ACTIVE
            "nic.settings info\n"          // the RoCE NIC's eth0: this tree has no ethtool record
            "pci.gpu_nic info info info info info info info info\n");  // NODE each
  EXPECT_EQ(exit, 2);
}

TEST(FixtureFindings, ContainerCgv2) {
  int exit = -1;
  EXPECT_EQ(findings_of("container-cgv2", "distributed", &exit),
            "vm.swappiness info\n"
            "vm.overcommit_memory warn\n"
            "vm.dirty_ratio info\n"
            "vm.dirty_background_ratio info\n"
            "thp.enabled ok\n"
            "thp.defrag warn\n"
            "shm.size critical\n"      // Docker's 64 MiB
            "swap.consistency warn\n"  // a swap file with swappiness 60
            "net.core.rmem_max n/a\n"  // the host's network namespace
            "net.core.wmem_max n/a\n"
            "net.ipv4.tcp_rmem warn\n"
            "net.ipv4.tcp_wmem warn\n"
            "net.ipv4.tcp_fastopen info\n"
            "cpu.governor n/a\n"  // no cpufreq in the VM
            "cpu.epp n/a\n"
            "irq.affinity n/a\n"
            "limits.nofile warn\n"
            "mount.noatime info info\n"  // / and /workspace
            "block.read_ahead_kb ok\n"   // the disk under /workspace
            "block.scheduler info\n"     // its virtio disk on mq-deadline: none is advised
            "block.nr_requests ok\n"
            "storage.data_device ok ok\n"
            "storage.trim n/a\n"  // a virtio disk says rotational
            "gpu.health info\n"
            "gpu.persistence info\n"
            "gpu.nouveau ok\n"
            "gpu.driver_match ok\n"
            "gpu.driver_cuda n/a\n"  // no torch in the container
            "gpu.pcie_link info\n"   // link not reported by the VM
            "gpu.ecc info\n"
            "gpu.throttle info\n"
            "gpu.power_limit info\n"
            "gpu.mig info\n"
            "gpu.nvlink info\n"
            "gpu.numa_placement n/a\n"  // one GPU, its node not known
            "env.training ok\n"
            "build.toolchain n/a\n"
            "blas.library n/a\n"
            "limits.memlock critical\n"  // 64 KiB
            "kernel.numa_balancing ok\n"
            "iommu.mode info\n"  // nothing on the command line
            "pci.acs n/a\n"
            "rdma.ports n/a\n"
            "nic.settings n/a\n"
            "pci.gpu_nic n/a\n");
  EXPECT_EQ(exit, 2);
}

TEST(FixtureFindings, TrainingProfileOnThisVm) {
  int exit = -1;
  EXPECT_EQ(findings_of("this-vm", "training", &exit),
            "vm.swappiness info\n"
            "vm.overcommit_memory warn\n"
            "vm.dirty_ratio info\n"
            "vm.dirty_background_ratio info\n"
            "thp.enabled ok\n"
            "thp.defrag warn\n"
            "shm.size ok\n"
            "swap.consistency ok\n"
            "net.core.rmem_max warn\n"
            "net.core.wmem_max warn\n"
            "net.ipv4.tcp_rmem ok\n"  // 32 MiB maximum on this VM
            "net.ipv4.tcp_wmem warn\n"
            "net.ipv4.tcp_fastopen info\n"
            "cpu.governor n/a\n"
            "cpu.epp n/a\n"
            "irq.affinity n/a\n"
            "limits.nofile warn\n"  // 20000
            "mount.noatime info\n"
            "block.read_ahead_kb n/a\n"  // the capture predates the rule: no /sys/class/block
            "block.scheduler n/a\n"
            "block.nr_requests n/a\n"
            "storage.data_device ok\n"
            "storage.trim n/a\n"
            "gpu.health n/a\n"  // no GPU
            "gpu.persistence n/a\n"
            "gpu.nouveau n/a\n"
            "gpu.driver_match n/a\n"
            "gpu.driver_cuda n/a\n"
            "gpu.pcie_link n/a\n"
            "gpu.ecc n/a\n"
            "gpu.throttle n/a\n"
            "gpu.power_limit n/a\n"
            "gpu.mig n/a\n"
            "gpu.nvlink n/a\n"
            "gpu.numa_placement n/a\n"
            "env.training ok\n"
            "build.toolchain info\n"  // the tree holds no Python headers
            "blas.library info\n");   // the reference BLAS, as on this VM
  EXPECT_EQ(exit, 1);
}

}  // namespace fixture_findings_test

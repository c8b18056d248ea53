// GPU facts from a small host tree made here (two NVIDIA GPUs over two NUMA nodes, one link
// downgraded, a BMC's VGA), merged with the fake NVML, and read back from a capture.
#include "inventory/gpu.hpp"
#include "support/build_paths.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/temp_tree.hpp"

#include "../gpu/fake_nvml_config.hpp"
#include "core/json.hpp"
#include "gpu/nvml_backend.hpp"
#include "gpu/report_json.hpp"
#include "inventory/capture_files.hpp"

namespace gpu_test {

namespace fs = std::filesystem;
using dltune::host::Root;
using dltune::inventory::Context;
using dltune::inventory::GpuFacts;
using nlohmann::json;

namespace {

constexpr const char* kPciIds =
    "# pci.ids excerpt\n"
    "10de  NVIDIA Corporation\n"
    "\t2330  GH100[H100 SXM5 80GB]\n"
    "\t\t10de 16c1  H100 SXM5 80GB\n"
    "1a03  ASPEED Technology, Inc.\n"
    "\t2000  ASPEED Graphics Family\n"
    "C 03  Display controller\n";

class GpuTree : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(tree_.dir() / "sys/bus/pci/devices");
    // Two NUMA nodes of 8 CPUs each.
    write("sys/devices/system/node/node0/cpulist", "0-7\n");
    write("sys/devices/system/node/node1/cpulist", "8-15\n");
    write("sys/devices/system/node/online", "0-1\n");
    // GPU at 17:00.0 on node 0, full Gen5 x16 link.
    gpu("0000:17:00.0", "0", "0-7", "32.0 GT/s PCIe", "16");
    // GPU at 9a:00.0: firmware left numa_node at -1; its link trained at Gen1.
    gpu("0000:9a:00.0", "-1", "8-15", "2.5 GT/s PCIe", "16");
    // The BMC's VGA, and a host bridge that is no display at all.
    device("0000:03:00.0", "0x030000", "0x1a03", "0x2000");
    write("sys/devices/pci0000:00/0000:03:00.0/numa_node", "-1\n");
    device("0000:00:00.0", "0x060000", "0x8086", "0x0d57");
    write("usr/share/misc/pci.ids", kPciIds);
    write("proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
          "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:14:29 UTC 2024\n"
          "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
    // The user library left behind by an upgrade that was not followed by a reboot.
    write("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.545.23.08", "");
    link("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml.so.545.23.08");
    write("proc/modules",
          "nvidia_uvm 1536000 0 - Live 0x0000000000000000 (POE)\n"
          "nvidia 56627200 19 nvidia_uvm, Live 0x0000000000000000 (POE)\n"
          "nouveau 2711552 0 - Live 0x0000000000000000\n");
  }

  void write(const std::string& rel, const std::string& content) { tree_.write(rel, content); }
  void link(const std::string& rel, const std::string& target) { tree_.link(rel, target); }
  // A PCI device as sysfs has it: the real directory under /sys/devices, a link to it in
  // /sys/bus/pci/devices.
  std::string device(const std::string& addr, const std::string& cls, const std::string& vendor,
                     const std::string& dev) {
    const std::string real = "sys/devices/pci0000:00/" + addr;
    write(real + "/class", cls + "\n");
    write(real + "/vendor", vendor + "\n");
    write(real + "/device", dev + "\n");
    link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/" + addr);
    return real;
  }
  void gpu(const std::string& addr, const std::string& node, const std::string& cpus,
           const std::string& speed, const std::string& width) {
    const auto real = device(addr, "0x030200", "0x10de", "0x2330");
    write(real + "/subsystem_vendor", "0x10de\n");
    write(real + "/subsystem_device", "0x16c1\n");
    write(real + "/numa_node", node + "\n");
    write(real + "/local_cpulist", cpus + "\n");
    write(real + "/current_link_speed", speed + "\n");
    write(real + "/max_link_speed", "32.0 GT/s PCIe\n");
    write(real + "/current_link_width", width + "\n");
    write(real + "/max_link_width", "16\n");
    write("sys/bus/pci/drivers/nvidia/.keep", "");
    link(real + "/driver", "../../../bus/pci/drivers/nvidia");
  }
  Root root() {
    auto r = Root::at(tree_.dir());
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return *r;
  }
  // The fake NVML's answer for the two GPUs of this tree.
  static dltune::gpu::Report fake_nvml() {
    auto config = dltune::testing::fake_hgx(2);
    config["gpus"][0]["pci_bus_id"] = "00000000:17:00.0";
    config["gpus"][1]["pci_bus_id"] = "00000000:9A:00.0";
    config["gpus"][1]["clock_event_reasons"] = 0x4;  // SwPowerCap
    dltune::testing::FakeNvmlConfig fake(config);
    return dltune::gpu::NvmlBackend(DLTUNE_FAKE_NVML).query();
  }

  dltune::testing::TempTree tree_;
};

std::string render(const GpuFacts& f) {
  std::string out;
  for (const auto& s : dltune::inventory::render_gpus(f))
    for (const auto& r : s.rows) out += r.label + ": " + r.value + "\n";
  return out;
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_F(GpuTree, SysfsFactsWithoutNvml) {
  const auto host = root();
  Context ctx(host, {});
  dltune::gpu::Report none;
  none.backend = "nvml";
  none.library = "libnvidia-ml.so.1";
  none.error = "cannot load NVML: libnvidia-ml.so.1: cannot open shared object file";
  const auto f = dltune::inventory::collect_gpus(ctx, none);
  EXPECT_TRUE(ctx.problems().empty()) << ctx.problems().front().path;

  ASSERT_EQ(f.devices.size(), 3u);  // the host bridge is no display device
  const auto& aspeed = f.devices[0];
  EXPECT_EQ(aspeed.address, "0000:03:00.0");
  EXPECT_FALSE(aspeed.compute);
  EXPECT_EQ(aspeed.vendor, "other");
  EXPECT_EQ(aspeed.vendor_name, "ASPEED Technology, Inc.");
  EXPECT_EQ(aspeed.device_name, "ASPEED Graphics Family");

  const auto& a = f.devices[1];
  EXPECT_EQ(a.address, "0000:17:00.0");
  EXPECT_TRUE(a.compute);
  EXPECT_EQ(a.vendor, "nvidia");
  EXPECT_EQ(a.vendor_id, 0x10de);
  EXPECT_EQ(a.device_id, 0x2330);
  EXPECT_EQ(a.subsystem_device_id, 0x16c1);
  EXPECT_EQ(a.class_code, 0x030200u);
  EXPECT_EQ(a.vendor_name, "NVIDIA Corporation");
  EXPECT_EQ(a.device_name, "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(a.subsystem_name, "H100 SXM5 80GB");
  EXPECT_EQ(a.numa_node, 0);
  EXPECT_EQ(a.numa_node_source, "numa_node");
  EXPECT_EQ(a.local_cpus, "0-7");
  EXPECT_EQ(a.driver, "nvidia");
  EXPECT_EQ(a.link.speed_gts, 32.0);
  EXPECT_EQ(a.link.generation, 5);
  EXPECT_EQ(a.link.max_generation, 5);
  EXPECT_EQ(a.link.width, 16);
  EXPECT_EQ(a.link.downgraded, false);
  EXPECT_FALSE(a.nvml_index);

  const auto& b = f.devices[2];
  EXPECT_EQ(b.address, "0000:9a:00.0");
  EXPECT_EQ(b.numa_node, 1);  // from its local CPUs, which all lie in node 1
  EXPECT_EQ(b.numa_node_source, "local_cpulist");
  EXPECT_EQ(b.link.speed_gts, 2.5);
  EXPECT_EQ(b.link.generation, 1);
  EXPECT_EQ(b.link.downgraded, true);

  EXPECT_EQ(f.pci_ids, "/usr/share/misc/pci.ids");
  EXPECT_EQ(f.driver.kernel_module_version, "550.54.15");
  EXPECT_EQ(f.driver.kernel_module_open, true);
  EXPECT_EQ(f.driver.user_library_version, "545.23.08");
  EXPECT_EQ(f.driver.user_library_source, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.545.23.08");
  EXPECT_EQ(f.driver.match, false);
  EXPECT_EQ(f.modules.at("nvidia"), true);
  EXPECT_EQ(f.modules.at("nvidia_uvm"), true);
  EXPECT_EQ(f.modules.at("nouveau"), true);
  EXPECT_EQ(f.modules.at("nvidia_drm"), false);
  EXPECT_EQ(f.modules.at("amdgpu"), false);

  const auto j = dltune::inventory::to_json(f);
  EXPECT_EQ(j["devices"][2]["pci_address"], "0000:9a:00.0");
  EXPECT_EQ(j["devices"][2]["link_downgraded"], true);
  EXPECT_EQ(j["devices"][2]["pcie"]["max_speed_gts"], 32.0);
  EXPECT_EQ(j["devices"][1]["vendor_id"], "10de");
  EXPECT_EQ(j["devices"][1]["class"], "030200");
  EXPECT_EQ(j["nvml"]["loaded"], false);
  EXPECT_EQ(j["nvml"]["error"], *none.error);
  EXPECT_EQ(j["driver"]["match"], false);
  EXPECT_EQ(j["modules"]["nouveau"], true);

  const auto text = render(f);
  EXPECT_TRUE(contains(text, "PCIe link: Gen5 x16 (max Gen5 x16)\n")) << text;
  EXPECT_TRUE(contains(text, "PCIe link: Gen1 x16 (max Gen5 x16) DOWNGRADED (an idle GPU may"))
      << text;
  EXPECT_TRUE(contains(text, "NUMA node: 1 (from its local CPUs), local CPUs 8-15")) << text;
  EXPECT_TRUE(contains(text, "MISMATCH")) << text;
  EXPECT_TRUE(contains(text,
                       "Display: 0000:03:00.0  1a03:2000  ASPEED Technology, Inc. ASPEED "
                       "Graphics Family (not a compute GPU)\n"))
      << text;
  EXPECT_TRUE(contains(text, "GPU 1: NVIDIA Corporation GH100[H100 SXM5 80GB] (H100 SXM5 80GB)\n"))
      << text;
  EXPECT_TRUE(contains(text, "PCI: 0000:9a:00.0  10de:2330 subsystem 10de:16c1\n")) << text;
  EXPECT_TRUE(contains(text, "NVML: not loaded (cannot load NVML:")) << text;
}

TEST_F(GpuTree, NvmlIsJoinedByPciAddress) {
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, fake_nvml());
  ASSERT_TRUE(f.nvml.loaded) << f.nvml.error.value_or("");
  ASSERT_EQ(f.devices.size(), 3u);
  EXPECT_FALSE(f.devices[0].nvml_index);
  EXPECT_EQ(f.devices[1].nvml_index, 0u);
  EXPECT_EQ(f.devices[2].nvml_index, 1u);
  // NVML's driver version is the user library's; it matches the kernel module's.
  EXPECT_EQ(f.driver.user_library_version, "550.54.15");
  EXPECT_EQ(f.driver.user_library_source, "nvml");
  EXPECT_EQ(f.driver.match, true);

  const auto j = dltune::inventory::to_json(f);
  EXPECT_EQ(j["devices"][2]["nvml_index"], 1);
  EXPECT_EQ(j["nvml"]["devices"][1]["pci_bus_id"], "0000:9a:00.0");
  EXPECT_EQ(j["nvml_source"], "live");

  const auto text = render(f);
  EXPECT_TRUE(contains(text, "GPU 0: NVIDIA H100 80GB HBM3\n")) << text;
  EXPECT_TRUE(contains(text, "GPU 1: NVIDIA H100 80GB HBM3\n")) << text;
  EXPECT_TRUE(contains(text, "Clock events: SwPowerCap")) << text;
  EXPECT_TRUE(contains(text, "NVLink: 18 links active")) << text;
  EXPECT_TRUE(contains(text, "Persistence mode: on")) << text;
  EXPECT_TRUE(contains(text, "User library: 550.54.15 (from NVML)\n")) << text;
  EXPECT_TRUE(
      contains(text, std::string("NVML: ") + DLTUNE_FAKE_NVML + ": driver 550.54.15, CUDA 12.4"))
      << text;
  EXPECT_FALSE(contains(text, "MISMATCH")) << text;
}

TEST_F(GpuTree, NvmlDevicesThatSysfsDoesNotShowAreStillListed) {
  fs::remove_all(tree_.dir() / "sys/bus/pci/devices");  // a container without PCI sysfs
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, fake_nvml());
  EXPECT_TRUE(f.devices.empty());
  const auto text = render(f);
  EXPECT_TRUE(contains(text, "GPU 1: NVIDIA H100 80GB HBM3\nPCI: 0000:9a:00.0\n")) << text;
  EXPECT_TRUE(contains(text, "PCIe link: Gen5 x16 (max Gen5 x16) (NVML)")) << text;
}

TEST_F(GpuTree, CaptureGivesTheSameFactsFromNvmlJson) {
  const auto host = root();
  GpuFacts live;
  {
    Context ctx(host, {});
    live = dltune::inventory::collect_gpus(ctx, fake_nvml());
  }
  write(std::string(dltune::inventory::capture_files::kNvml).substr(1),
        dltune::inventory::nvml_json(live).dump());
  Context ctx(host, {});
  // The tree is not the live host: NVML is not asked, whatever the library.
  const auto f = dltune::inventory::collect_gpus(ctx, "/nonexistent/libnvidia-ml.so.1");
  EXPECT_TRUE(ctx.problems().empty());
  EXPECT_TRUE(f.nvml_from_capture);
  auto a = dltune::inventory::to_json(live);
  auto b = dltune::inventory::to_json(f);
  EXPECT_EQ(b["nvml_source"], "capture");
  a.erase("nvml_source");
  b.erase("nvml_source");
  EXPECT_EQ(a, b);
  EXPECT_TRUE(contains(render(f), std::string("NVML: as recorded: ") + DLTUNE_FAKE_NVML))
      << render(f);
}

TEST_F(GpuTree, GarbledNvmlJsonIsAProblemAndSysfsStillCounts) {
  write(std::string(dltune::inventory::capture_files::kNvml).substr(1), "{\"loaded\": tru");
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, "");
  ASSERT_EQ(ctx.problems().size(), 1u);
  EXPECT_EQ(ctx.problems()[0].fact, "gpu.nvml");
  EXPECT_EQ(ctx.problems()[0].path, dltune::inventory::capture_files::kNvml);
  EXPECT_EQ(ctx.problems()[0].reason, "not JSON");
  EXPECT_FALSE(f.nvml.loaded);
  ASSERT_TRUE(f.nvml.error);
  EXPECT_TRUE(contains(*f.nvml.error, "unreadable record")) << *f.nvml.error;
  EXPECT_EQ(f.devices.size(), 3u);
  EXPECT_EQ(f.driver.user_library_version, "545.23.08");  // from the file name instead
}

TEST_F(GpuTree, CaptureWithoutNvmlJsonSaysSo) {
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, "");
  EXPECT_FALSE(f.nvml.loaded);
  EXPECT_EQ(f.nvml.error, "not recorded in this host tree (/run/dltune/capture/nvml.json)");
  EXPECT_TRUE(ctx.problems().empty());
}

TEST_F(GpuTree, GarbledSysfsValuesAreLeftOut) {
  write("sys/devices/pci0000:00/0000:17:00.0/current_link_speed", "Unknown\n");
  write("sys/devices/pci0000:00/0000:17:00.0/current_link_width", "63\n");
  write("sys/devices/pci0000:00/0000:17:00.0/numa_node", "banana\n");
  write("sys/devices/pci0000:00/0000:9a:00.0/class", "not hex\n");
  write("proc/driver/nvidia/version", "garbage\n");
  write("proc/modules", "nvidia\n");
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, dltune::gpu::Report{});
  ASSERT_EQ(f.devices.size(), 2u);  // 9a:00.0's class cannot be read as a display class
  const auto& a = f.devices[1];
  EXPECT_FALSE(a.link.speed_gts);
  EXPECT_FALSE(a.link.width);
  EXPECT_EQ(a.link.max_width, 16);
  EXPECT_FALSE(a.link.downgraded);  // nothing to compare
  EXPECT_EQ(a.numa_node, 0);        // from its local CPUs instead
  EXPECT_FALSE(f.driver.kernel_module_version);
  EXPECT_FALSE(f.driver.match);
  EXPECT_EQ(f.modules.at("nvidia"), false);
  bool version_problem = false, modules_problem = false;
  for (const auto& p : ctx.problems()) {
    version_problem |= p.path == "/proc/driver/nvidia/version";
    modules_problem |= p.path == "/proc/modules" && contains(p.reason, "line 1");
  }
  EXPECT_TRUE(version_problem);
  EXPECT_TRUE(modules_problem);
}

TEST_F(GpuTree, OneNumaNodeLeavesAnUnknownNodeUnknown) {
  fs::remove_all(tree_.dir() / "sys/devices/system/node/node1");
  write("sys/devices/system/node/node0/cpulist", "0-15\n");
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, dltune::gpu::Report{});
  ASSERT_EQ(f.devices.size(), 3u);
  EXPECT_FALSE(f.devices[2].numa_node);
  EXPECT_TRUE(contains(render(f), "NUMA node: unknown, local CPUs 8-15")) << render(f);
}

TEST_F(GpuTree, NoComputeGpuMeansNoPciIdsRead) {
  fs::remove_all(tree_.dir() / "sys/bus/pci/devices/0000:17:00.0");
  fs::remove_all(tree_.dir() / "sys/bus/pci/devices/0000:9a:00.0");
  auto host = root();
  host.start_recording();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, dltune::gpu::Report{});
  ASSERT_EQ(f.devices.size(), 1u);
  EXPECT_EQ(f.devices[0].vendor_name, "ASPEED Technology, Inc.");  // built in
  EXPECT_FALSE(f.devices[0].device_name);
  EXPECT_FALSE(f.pci_ids);
  for (const auto& a : host.recorded()) EXPECT_NE(a.path, "/usr/share/misc/pci.ids");
}

// Without NVML the GPU's name is pci.ids' (format: https://pci-ids.ucw.cz/, the file's header):
// vendor "10de  NVIDIA Corporation", device "<TAB>2330  ...", subsystem "<TAB><TAB>10de 16c1  ...".
// Debian's /usr/share/misc/pci.ids here is older than the GPU; /usr/share/hwdata/pci.ids knows it.
TEST_F(GpuTree, AGpuTheFirstPciIdsLacksIsNamedFromTheNext) {
  write("usr/share/misc/pci.ids",
        "10de  NVIDIA Corporation\n"
        "\t20b0  GA100 [A100 SXM4 40GB]\n"
        "1a03  ASPEED Technology, Inc.\n"
        "\t2000  ASPEED Graphics Family\n"
        "C 03  Display controller\n");
  write("usr/share/hwdata/pci.ids",
        "10de  NVIDIA Corporation\n"
        "\t2330  GH100 [H100 SXM5 80GB]\n"
        "\t\t10de 16c1  H100 SXM5 80GB\n"
        "C 03  Display controller\n");
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, dltune::gpu::Report{});
  EXPECT_TRUE(ctx.problems().empty());
  ASSERT_EQ(f.devices.size(), 3u);
  EXPECT_EQ(f.devices[0].device_name, "ASPEED Graphics Family");  // the first file's
  for (const std::size_t i : {1u, 2u}) {
    EXPECT_EQ(f.devices[i].vendor_name, "NVIDIA Corporation");
    EXPECT_EQ(f.devices[i].device_name, "GH100 [H100 SXM5 80GB]");
    EXPECT_EQ(f.devices[i].subsystem_name, "H100 SXM5 80GB");
  }
  EXPECT_EQ(f.pci_ids, "/usr/share/hwdata/pci.ids");  // the file that named the GPUs

  const auto j = dltune::inventory::to_json(f);
  EXPECT_EQ(j["devices"][1]["device_name"], "GH100 [H100 SXM5 80GB]");
  EXPECT_EQ(j["devices"][1]["subsystem_name"], "H100 SXM5 80GB");
  EXPECT_EQ(j["pci_ids"], "/usr/share/hwdata/pci.ids");
  const auto text = render(f);
  EXPECT_TRUE(contains(text, "GPU 0: NVIDIA Corporation GH100 [H100 SXM5 80GB] (H100 SXM5 80GB)\n"))
      << text;
}

// Only /usr/share/hwdata/pci.ids (Fedora, RHEL, Arch): the same names.
TEST_F(GpuTree, OnlyHwdataPciIdsNamesTheGpus) {
  fs::remove(tree_.dir() / "usr/share/misc/pci.ids");
  write("usr/share/hwdata/pci.ids", kPciIds);
  const auto host = root();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, dltune::gpu::Report{});
  ASSERT_EQ(f.devices.size(), 3u);
  EXPECT_EQ(f.devices[1].device_name, "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(f.pci_ids, "/usr/share/hwdata/pci.ids");
}

// The first pci.ids names every GPU: the other is not read (nor packed into a capture).
TEST_F(GpuTree, ASecondPciIdsIsNotReadWhenTheFirstNamesEveryGpu) {
  write("usr/share/hwdata/pci.ids", "10de  Someone Else\n\t2330  Not This One\n");
  auto host = root();
  host.start_recording();
  Context ctx(host, {});
  const auto f = dltune::inventory::collect_gpus(ctx, dltune::gpu::Report{});
  ASSERT_EQ(f.devices.size(), 3u);
  EXPECT_EQ(f.devices[1].vendor_name, "NVIDIA Corporation");
  EXPECT_EQ(f.devices[1].device_name, "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(f.pci_ids, "/usr/share/misc/pci.ids");
  for (const auto& a : host.recorded()) EXPECT_NE(a.path, "/usr/share/hwdata/pci.ids");
}

}  // namespace gpu_test

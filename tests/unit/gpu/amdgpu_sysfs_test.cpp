// AMD GPUs from amdgpu's sysfs (gpu/amdgpu_sysfs.hpp): the file formats, which PCI devices are
// AMD GPUs, and what query and read make of a card's files, on hand-made trees laid out as the
// kernel lays them out (Documentation/gpu/amdgpu/driver-misc.rst, thermal.rst).
#include "gpu/amdgpu_sysfs.hpp"

#include <gtest/gtest.h>

#include "monitor/sampler.hpp"
#include "support/temp_tree.hpp"

namespace amdgpu_sysfs_test {

using namespace dltune::gpu;
using dltune::testing::TempTree;

namespace {

// A PCI function at /sys/devices/pci0000:00/ADDR, linked from /sys/bus/pci/devices.
std::string add_function(TempTree& t, const std::string& addr, const std::string& vendor,
                         const std::string& cls, const std::string& driver) {
  const std::string dir = "sys/devices/pci0000:00/" + addr;
  t.write(dir + "/vendor", vendor + "\n")
      .write(dir + "/device", "0x74a1\n")
      .write(dir + "/class", cls + "\n")
      .link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/" + addr);
  if (!driver.empty()) {
    t.mkdir("sys/bus/pci/drivers/" + driver);
    t.link(dir + "/driver", "../../../bus/pci/drivers/" + driver);
  }
  return dir;
}

// An MI300X: a processing accelerator (class 0x12), power1_input only, all three temperatures.
std::string add_mi300x(TempTree& t, const std::string& addr, const std::string& hwmon) {
  const auto dir = add_function(t, addr, "0x1002", "0x120000", "amdgpu");
  t.write(dir + "/gpu_busy_percent", "93\n")
      .write(dir + "/mem_busy_percent", "41\n")
      .write(dir + "/mem_info_vram_total", "206141652992\n")
      .write(dir + "/mem_info_vram_used", "103070826496\n")
      .write(dir + "/product_name", "AMD Instinct MI300X OAM\n")
      .write(dir + "/unique_id", "4bc2e1a77f01d3a9\n")
      .write(dir + "/pp_dpm_sclk", "0: 500Mhz\n1: 1450Mhz *\n2: 2100Mhz\n")
      .write(dir + "/pp_dpm_mclk", "0: 900Mhz\n1: 1300Mhz *\n")
      .write(dir + "/ras/umc_err_count", "ue: 2\nce: 17\n")
      .write(dir + "/ras/gpu_vram_bad_pages",
             "0x00012345 : 0x00001000 : R\n0x00012400 : 0x00001000 : P\n"
             "0x00013000 : 0x00001000 : F\n");
  // An unrelated hwmon first (the board's own sensor chip): only "amdgpu" is the GPU's.
  t.write(dir + "/hwmon/hwmon1/name", "nvme\n").write(dir + "/hwmon/hwmon1/temp1_input", "1000\n");
  const std::string h = dir + "/hwmon/" + hwmon;
  t.write(h + "/name", "amdgpu\n")
      .write(h + "/temp1_input", "48000\n")
      .write(h + "/temp1_label", "edge\n")
      .write(h + "/temp2_input", "71500\n")
      .write(h + "/temp2_label", "junction\n")
      .write(h + "/temp3_input", "55000\n")
      .write(h + "/temp3_label", "mem\n")
      .write(h + "/power1_input", "612000000\n")
      .write(h + "/power1_cap", "750000000\n")
      .write(h + "/power1_cap_default", "750000000\n")
      .write(h + "/power1_cap_min", "0\n")
      .write(h + "/power1_cap_max", "750000000\n")
      .write(h + "/freq1_input", "1450000000\n")
      .write(h + "/freq1_label", "sclk\n")
      .write(h + "/freq2_input", "1300000000\n")
      .write(h + "/freq2_label", "mclk\n")
      .write(h + "/energy1_input", "9876543210\n");
  return dir;
}

}  // namespace

TEST(AmdgpuParse, BadPages) {
  const auto b = amdgpu::parse_bad_pages(
      "0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : R\n0x00000003 : 0x00001000 : P\n"
      "0x00000004 : 0x00001000 : F\ngarbage\n: R\n");
  EXPECT_EQ(b.retired, 2u);
  EXPECT_EQ(b.pending, 1u);
  EXPECT_EQ(b.failed, 1u);
  const auto none = amdgpu::parse_bad_pages("");
  EXPECT_EQ(none.retired + none.pending + none.failed, 0u);
}

TEST(AmdgpuParse, ErrCount) {
  const auto c = amdgpu::parse_err_count("ue: 3\nce: 1024\n");
  EXPECT_EQ(c.ue, 3u);
  EXPECT_EQ(c.ce, 1024u);
  const auto bad = amdgpu::parse_err_count("ue: x\nsomething\n");
  EXPECT_FALSE(bad.ue);
  EXPECT_FALSE(bad.ce);
}

TEST(AmdgpuParse, DpmCurrentLevel) {
  EXPECT_EQ(amdgpu::parse_dpm_current_mhz("0: 500Mhz\n1: 800Mhz *\n2: 1700Mhz\n"), 800u);
  EXPECT_EQ(amdgpu::parse_dpm_current_mhz("0: 500Mhz\n1: 800Mhz\n"), std::nullopt);
  EXPECT_EQ(amdgpu::parse_dpm_current_mhz(""), std::nullopt);
}

TEST(AmdgpuSysfs, FindsOnlyAmdGpusBoundToAmdgpu) {
  TempTree t;
  add_mi300x(t, "0000:85:00.0", "hwmon7");
  add_mi300x(t, "0000:05:00.0", "hwmon3");
  add_function(t, "0000:11:00.0", "0x1002", "0x038000", "vfio-pci");       // passed to a VM
  add_function(t, "0000:12:00.0", "0x1002", "0x038000", "");               // no driver
  add_function(t, "0000:13:00.0", "0x10de", "0x030200", "nvidia");         // NVIDIA's
  add_function(t, "0000:14:00.0", "0x1002", "0x040300", "snd_hda_intel");  // its audio
  const auto cards = amdgpu::find_cards(t.root());
  ASSERT_EQ(cards.size(), 2u);
  EXPECT_EQ(cards[0].pci_address, "0000:05:00.0");  // by PCI address
  EXPECT_EQ(cards[0].hwmon_dir, "/sys/bus/pci/devices/0000:05:00.0/hwmon/hwmon3");
  EXPECT_EQ(cards[1].pci_address, "0000:85:00.0");
  EXPECT_EQ(cards[1].hwmon_dir, "/sys/bus/pci/devices/0000:85:00.0/hwmon/hwmon7");
}

TEST(AmdgpuSysfs, QueryReadsEveryFact) {
  TempTree t;
  add_mi300x(t, "0000:05:00.0", "hwmon3");
  const auto r = amdgpu::query(t.root());
  EXPECT_EQ(r.backend, "amdgpu");
  EXPECT_EQ(r.library, "sysfs");
  ASSERT_TRUE(r.loaded);
  EXPECT_FALSE(r.driver_version);  // the kernel's own driver has no version file
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& d = r.devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.name, "AMD Instinct MI300X OAM");
  EXPECT_EQ(d.uuid, "4bc2e1a77f01d3a9");
  EXPECT_EQ(d.pci_bus_id, "0000:05:00.0");
  EXPECT_EQ(d.memory_total_bytes, 206141652992ull);
  EXPECT_EQ(d.memory_used_bytes, 103070826496ull);
  EXPECT_EQ(d.ecc_enabled, true);
  EXPECT_EQ(d.ecc_errors.volatile_uncorrected, 2u);
  EXPECT_EQ(d.ecc_errors.volatile_corrected, 17u);
  EXPECT_FALSE(d.ecc_errors.aggregate_uncorrected);
  EXPECT_EQ(d.retired_pages.double_bit, 2u);  // the reserved page and the pending one
  EXPECT_EQ(d.retired_pages.pending, true);
  EXPECT_EQ(d.retired_pages.failed, 1u);
  EXPECT_FALSE(d.retired_pages.multiple_single_bit);
  EXPECT_EQ(d.sm_clock_mhz, 1450u);
  EXPECT_EQ(d.memory_clock_mhz, 1300u);
  EXPECT_EQ(d.temperature_celsius, 72u);  // the junction, rounded
  ASSERT_TRUE(d.power_watts);
  EXPECT_DOUBLE_EQ(*d.power_watts, 612.0);  // power1_input: no power1_average on this GPU
  EXPECT_EQ(d.power_limit_watts, 750.0);
  EXPECT_EQ(d.power_default_limit_watts, 750.0);
  EXPECT_EQ(d.power_min_limit_watts, 0.0);
  EXPECT_EQ(d.power_max_limit_watts, 750.0);
}

TEST(AmdgpuSysfs, OlderGpuWithoutRasOrLabels) {
  TempTree t;
  const auto dir = add_function(t, "0000:03:00.0", "0x1002", "0x030000", "amdgpu");
  t.write("sys/module/amdgpu/version", "6.3.6\n")
      .write(dir + "/gpu_busy_percent", "5\n")
      .write(dir + "/mem_info_vram_total", "17163091968\n")
      .write(dir + "/hwmon/hwmon0/name", "amdgpu\n")
      .write(dir + "/hwmon/hwmon0/temp1_input", "40999\n")
      .write(dir + "/hwmon/hwmon0/power1_average", "15000000\n")
      .write(dir + "/hwmon/hwmon0/power1_input", "99000000\n")
      .write(dir + "/hwmon/hwmon0/power1_cap", "203000000\n");
  const auto r = amdgpu::query(t.root());
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& d = r.devices[0];
  EXPECT_EQ(r.driver_version, "6.3.6");
  EXPECT_FALSE(d.name);
  EXPECT_FALSE(d.ecc_enabled);  // no RAS: a Radeon, or RAS off
  EXPECT_FALSE(d.retired_pages.double_bit);
  EXPECT_EQ(d.temperature_celsius, 41u);  // one unlabelled channel
  EXPECT_EQ(d.power_watts, 15.0);         // the average where the GPU has both
  EXPECT_EQ(d.power_limit_watts, 203.0);
  EXPECT_FALSE(d.power_default_limit_watts);  // before Linux 5.17
  EXPECT_FALSE(d.sm_clock_mhz);
}

TEST(AmdgpuSysfs, NoGpuSaysWhy) {
  TempTree t;
  add_function(t, "0000:13:00.0", "0x10de", "0x030200", "nvidia");
  const auto r = amdgpu::query(t.root());
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.error, "no AMD GPU bound to the amdgpu driver");
  EXPECT_TRUE(r.devices.empty());
}

TEST(AmdgpuSysfs, ReadingsNumberedAfterTheFirstIndex) {
  TempTree t;
  add_mi300x(t, "0000:05:00.0", "hwmon3");
  add_mi300x(t, "0000:85:00.0", "hwmon7");
  t.write("sys/devices/pci0000:00/0000:85:00.0/gpu_busy_percent", "250\n");  // absurd: left out
  const auto cards = amdgpu::find_cards(t.root());
  std::vector<GpuReading> out(1);  // an NVIDIA GPU read before
  amdgpu::read(t.root(), cards, 1, out);
  ASSERT_EQ(out.size(), 3u);
  const auto& g = out[1];
  EXPECT_EQ(g.index, 1u);
  EXPECT_EQ(g.name, "AMD Instinct MI300X OAM");
  EXPECT_EQ(g.uuid, "4bc2e1a77f01d3a9");
  EXPECT_EQ(g.pci_bus_id, "0000:05:00.0");
  EXPECT_EQ(g.vendor, "amd");
  EXPECT_EQ(g.utilization_gpu_pct, 93u);
  EXPECT_EQ(g.utilization_memory_pct, 41u);
  EXPECT_EQ(g.memory_used_bytes, 103070826496ull);
  EXPECT_EQ(g.memory_total_bytes, 206141652992ull);
  EXPECT_EQ(g.power_watts, 612.0);
  EXPECT_EQ(g.temperature_celsius, 72u);
  EXPECT_EQ(g.sm_clock_mhz, 1450u);
  EXPECT_EQ(g.memory_clock_mhz, 1300u);
  EXPECT_EQ(g.energy_mj, 9876543u);  // µJ / 1000
  EXPECT_EQ(g.ecc_corrected, 17u);
  EXPECT_EQ(g.ecc_uncorrected, 2u);
  // amdgpu's sysfs lists no processes: the reading does not claim "none".
  EXPECT_FALSE(g.sampled_at_ns);
  EXPECT_EQ(out[2].index, 2u);
  EXPECT_FALSE(out[2].utilization_gpu_pct);
}

TEST(AmdgpuSysfs, CollectorReadsAmdWithoutNvml) {
  TempTree t;
  add_mi300x(t, "0000:05:00.0", "hwmon3");
  std::vector<GpuReading> gpus;
  dltune::monitor::Notices notices;
  dltune::monitor::GpuCollector c(t.root(), "/nonexistent/libnvidia-ml.so.1",
                                  3600LL * 1'000'000'000);
  c.wait_for_readings(1);
  std::vector<dltune::gpu::GpuSlot> slots;
  c.collect(gpus, slots, notices);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 0u);
  EXPECT_EQ(gpus[0].utilization_gpu_pct, 93u);
  // No NVML on an AMD host is no news: nothing is said about it.
  EXPECT_TRUE(notices.take().empty());
}

}  // namespace amdgpu_sysfs_test

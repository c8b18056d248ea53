// The GPUs on PCI and whether their driver's interface answered for each (gpu/pci_gpus.hpp):
// serve's dltune_gpu_up. A host tree stands for the PCI bus; the fake libnvidia-ml.so for NVML,
// loaded on the collector's thread as the real one is.
#include <gtest/gtest.h>

#include "fake_nvml_config.hpp"
#include "gpu/pci_gpus.hpp"
#include "monitor/sampler.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"

namespace pci_gpus_test {

using dltune::gpu::GpuReading;
using dltune::gpu::GpuSlot;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using dltune::testing::TempTree;

namespace {

constexpr std::int64_t kHour = 3600LL * 1'000'000'000;

void add_function(TempTree& t, const std::string& addr, const std::string& vendor,
                  const std::string& cls) {
  const std::string dir = "sys/devices/pci0000:00/" + addr;
  t.write(dir + "/vendor", vendor + "\n")
      .write(dir + "/device", "0x2330\n")
      .write(dir + "/class", cls + "\n")
      .link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/" + addr);
}

// Two H100s where fake_hgx puts the first two (buses 0x18 and 0x2a), a BMC's VGA and a NIC.
void two_gpu_host(TempTree& t) {
  add_function(t, "0000:2a:00.0", "0x10de", "0x030200");
  add_function(t, "0000:18:00.0", "0x10de", "0x030200");
  add_function(t, "0000:03:00.0", "0x1a03", "0x030000");  // ASPEED VGA: not a compute GPU
  add_function(t, "0000:17:00.0", "0x15b3", "0x020000");  // a ConnectX NIC
}

// The slots after the collector's first reading.
std::vector<GpuSlot> first_slots(const TempTree& t) {
  dltune::monitor::GpuCollector c(t.root(), DLTUNE_FAKE_NVML, kHour);
  c.wait_for_readings(1);
  std::vector<GpuReading> gpus;
  std::vector<GpuSlot> slots;
  dltune::monitor::Notices notices;
  c.collect(gpus, slots, notices);
  return slots;
}

}  // namespace

TEST(PciGpus, FindsNvidiaAndAmdComputeGpusByAddress) {
  TempTree t;
  two_gpu_host(t);
  add_function(t, "0000:c1:00.0", "0x1002", "0x120000");  // an MI300X, bound to nothing
  add_function(t, "0000:c1:00.1", "0x1002", "0x040300");  // its audio function
  add_function(t, "0000:d0:00.0", "0x8086", "0x120000");  // another vendor's accelerator
  t.write("sys/devices/pci0000:00/0000:e0:00.0/class", "garbage\n")
      .link("sys/bus/pci/devices/0000:e0:00.0", "../../../devices/pci0000:00/0000:e0:00.0");
  const auto found = dltune::gpu::find_pci_gpus(t.root());
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].address, "0000:18:00.0");
  EXPECT_EQ(found[0].vendor, "nvidia");
  EXPECT_EQ(found[1].address, "0000:2a:00.0");
  EXPECT_EQ(found[2].address, "0000:c1:00.0");
  EXPECT_EQ(found[2].vendor, "amd");
  EXPECT_TRUE(dltune::gpu::find_pci_gpus(TempTree().root()).empty());  // no /sys at all
}

TEST(PciGpus, NvmlBusIdIsNvmlsForm) {
  EXPECT_EQ(dltune::gpu::nvml_bus_id("0000:9a:00.0"), "00000000:9A:00.0");
  EXPECT_EQ(dltune::gpu::nvml_bus_id("10000:01:00.0"), "00010000:01:00.0");  // a VMD domain
}

TEST(PciGpus, EveryGpuThatNvmlNamesIsUp) {
  TempTree t;
  two_gpu_host(t);
  FakeNvmlConfig config(fake_hgx(2));
  const auto slots = first_slots(t);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].pci_bus_id, "00000000:18:00.0");  // NVML's own string
  EXPECT_TRUE(slots[0].up);
  EXPECT_EQ(slots[0].index, 0u);
  EXPECT_EQ(slots[1].pci_bus_id, "00000000:2A:00.0");
  EXPECT_TRUE(slots[1].up);
  EXPECT_EQ(slots[1].index, 1u);
}

// Xid 79: the GPU fell off the bus and NVML lists only the other one.
TEST(PciGpus, AGpuMissingFromNvmlIsDown) {
  TempTree t;
  two_gpu_host(t);
  FakeNvmlConfig config(fake_hgx(1));
  const auto slots = first_slots(t);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_TRUE(slots[0].up);
  EXPECT_FALSE(slots[1].up);
  EXPECT_EQ(slots[1].pci_bus_id, "00000000:2A:00.0");  // in NVML's form, as if NVML named it
  EXPECT_FALSE(slots[1].index);
  EXPECT_EQ(slots[1].vendor, "nvidia");
}

TEST(PciGpus, AGpuNvmlCallsLostIsDown) {
  TempTree t;
  two_gpu_host(t);
  auto j = fake_hgx(2);
  j["gpus"][1]["fail"] = {{"nvmlDeviceGetPowerUsage", 15}};  // NVML_ERROR_GPU_IS_LOST
  FakeNvmlConfig config(j);
  const auto slots = first_slots(t);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_TRUE(slots[0].up);
  EXPECT_FALSE(slots[1].up);
  EXPECT_EQ(slots[1].index, 1u);  // listed, named, and lost

  // Another failure (not "lost") leaves the GPU up: its one value is missing.
  j["gpus"][1]["fail"] = {{"nvmlDeviceGetPowerUsage", 999}};
  FakeNvmlConfig unknown_error(j);
  EXPECT_TRUE(first_slots(t)[1].up);
}

TEST(PciGpus, AGpuWhoseHandleFailsIsDown) {
  TempTree t;
  two_gpu_host(t);
  auto j = fake_hgx(2);
  j["gpus"][0]["fail"] = {{"nvmlDeviceGetHandleByIndex", 15}};
  FakeNvmlConfig config(j);
  const auto slots = first_slots(t);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_FALSE(slots[0].up);
  EXPECT_TRUE(slots[1].up);
}

TEST(PciGpus, EveryGpuIsDownWhenNvmlDoesNotInitialise) {
  TempTree t;
  two_gpu_host(t);
  auto j = fake_hgx(2);
  j["init_error"] = 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  FakeNvmlConfig config(j);
  const auto slots = first_slots(t);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_FALSE(slots[0].up);
  EXPECT_FALSE(slots[1].up);
  EXPECT_EQ(slots[0].pci_bus_id, "00000000:18:00.0");
}

TEST(PciGpus, MatchSlotsReusesItsOutput) {
  const std::vector<dltune::gpu::PciGpuSlot> pci = {{"0000:18:00.0", "nvidia"},
                                                    {"0000:c1:00.0", "amd"}};
  std::vector<GpuReading> readings(2);
  readings[0].index = 0;
  readings[0].pci_bus_id = "00000000:18:00.0";
  readings[0].uuid = "GPU-1";
  readings[1].index = 1;
  readings[1].pci_bus_id = "0000:c1:00.0";  // amdgpu: no name or UUID on an old board
  std::vector<GpuSlot> out(5);
  dltune::gpu::match_slots(pci, readings, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].up);
  EXPECT_TRUE(out[1].up);
  EXPECT_EQ(out[1].pci_bus_id, "0000:c1:00.0");
  readings[0].lost = true;
  readings.pop_back();
  dltune::gpu::match_slots(pci, readings, out);
  EXPECT_FALSE(out[0].up);
  EXPECT_EQ(out[0].index, 0u);
  EXPECT_FALSE(out[1].up);
  EXPECT_FALSE(out[1].index);
}

}  // namespace pci_gpus_test

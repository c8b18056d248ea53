// GpuCollector against the fake libnvidia-ml.so (tests/fakes/nvml), loaded by path on the
// collector's own thread exactly as the real library is.
#include <cstdint>

#include <gtest/gtest.h>

#include "../gpu/fake_nvml_config.hpp"
#include "core/json.hpp"
#include "monitor/sampler.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"

namespace gpu_collector_test {

using dltune::monitor::Gpu;
using dltune::monitor::GpuCollector;
using dltune::monitor::Notices;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;

namespace {

constexpr std::int64_t kHour = 3600LL * 1'000'000'000;

// Every PCI GPU's slot from the latest collect (the tests below that check them read it).
std::vector<dltune::gpu::GpuSlot> slots;

// Collects after each of the thread's readings until `done` (at most 400 readings: no sleeping,
// no timing); the reading that made it done, 0 when none did.
template <class F>
std::uint64_t collect_until(GpuCollector& c, std::vector<Gpu>& out, Notices& n, F&& done) {
  for (std::uint64_t reading = 1; reading <= 400; ++reading) {
    c.wait_for_readings(reading);
    c.collect(out, slots, n);
    if (done()) return reading;
  }
  return 0;
}

nlohmann::json busy_system() {
  auto j = fake_hgx(2);
  j["gpus"][0]["utilization"] = {{"gpu", 87}, {"memory", 40}};
  j["gpus"][0]["pcie_throughput_kbs"] = {{"tx", 1200}, {"rx", 350000}};
  j["gpus"][0]["energy_mj"] = 123456789012ull;
  j["gpus"][0]["processes"] = {{{"pid", 4242}, {"used_memory_bytes", 1073741824ull}},
                               {{"pid", 4243}}};
  return j;
}

}  // namespace

TEST(GpuCollector, FieldsArrive) {
  FakeNvmlConfig config(busy_system());
  std::vector<Gpu> gpus;
  Notices notices;
  {
    GpuCollector c(dltune::host::Root{}, DLTUNE_FAKE_NVML, kHour);
    ASSERT_TRUE(collect_until(c, gpus, notices, [&] { return gpus.size() == 2; }));
  }
  const Gpu& g = gpus[0];
  EXPECT_EQ(g.index, 0u);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-8c7d1f00-aaaa-bbbb-cccc-000000000000");
  EXPECT_EQ(g.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(g.vendor, "nvidia");
  EXPECT_EQ(g.utilization_gpu_pct, 87u);
  EXPECT_EQ(g.utilization_memory_pct, 40u);
  EXPECT_EQ(g.memory_total_bytes, 85520809984ull);
  EXPECT_EQ(g.memory_used_bytes, 553648128ull);
  ASSERT_TRUE(g.power_watts);
  EXPECT_DOUBLE_EQ(*g.power_watts, 69.0);  // 69000 mW
  EXPECT_EQ(g.temperature_celsius, 30u);
  EXPECT_EQ(g.sm_clock_mhz, 345u);
  EXPECT_EQ(g.memory_clock_mhz, 2619u);
  EXPECT_EQ(g.clock_event_reasons, 1u);
  EXPECT_EQ(g.pcie_tx_kib_s, 1200u);
  EXPECT_EQ(g.pcie_rx_kib_s, 350000u);
  EXPECT_EQ(g.energy_mj, 123456789012ull);
  ASSERT_EQ(g.processes.size(), 2u);
  EXPECT_EQ(g.processes[0].pid, 4242);
  EXPECT_EQ(g.processes[0].used_memory_bytes, 1073741824ull);
  EXPECT_EQ(g.processes[1].pid, 4243);
  EXPECT_FALSE(g.processes[1].used_memory_bytes);  // NVML_VALUE_NOT_AVAILABLE
  EXPECT_TRUE(g.sampled_at_ns);

  // The second GPU supports none of the new calls: those fields are empty, nothing else is.
  const Gpu& h = gpus[1];
  EXPECT_EQ(h.index, 1u);
  EXPECT_FALSE(h.utilization_gpu_pct);
  EXPECT_FALSE(h.pcie_tx_kib_s);
  EXPECT_FALSE(h.energy_mj);
  EXPECT_TRUE(h.processes.empty());
  EXPECT_EQ(h.sm_clock_mhz, 346u);
  EXPECT_TRUE(notices.take().empty());  // "not supported" is not a failure
  // Every init was paired with a shutdown when the collector went.
  EXPECT_EQ(config.log(), "nvmlInit_v2\nnvmlShutdown\n");
}

TEST(GpuCollector, OldLayouts) {
  FakeNvmlConfig config(busy_system());
  std::vector<Gpu> gpus;
  Notices notices;
  GpuCollector c(dltune::host::Root{}, DLTUNE_FAKE_NVML_OLD, kHour);
  ASSERT_TRUE(collect_until(c, gpus, notices, [&] { return gpus.size() == 2; }));
  const Gpu& g = gpus[0];
  EXPECT_EQ(g.pci_bus_id, "0000:18:00.0");  // the legacy 16-byte id
  EXPECT_EQ(g.memory_total_bytes, 85520809984ull);
  ASSERT_EQ(g.processes.size(), 2u);  // nvmlProcessInfo_v1_t: 16 bytes each
  EXPECT_EQ(g.processes[0].pid, 4242);
  EXPECT_EQ(g.processes[0].used_memory_bytes, 1073741824ull);
  EXPECT_EQ(g.processes[1].pid, 4243);
  EXPECT_FALSE(g.processes[1].used_memory_bytes);
  EXPECT_EQ(g.clock_event_reasons, 1u);
}

TEST(GpuCollector, MoreProcessesThanFirstRoom) {
  auto j = fake_hgx(1);
  for (int i = 0; i < 40; ++i)
    j["gpus"][0]["processes"].push_back({{"pid", 1000 + i}, {"used_memory_bytes", i}});
  FakeNvmlConfig config(j);
  std::vector<Gpu> gpus;
  Notices notices;
  GpuCollector c(dltune::host::Root{}, DLTUNE_FAKE_NVML, kHour);
  ASSERT_TRUE(collect_until(c, gpus, notices, [&] { return gpus.size() == 1; }));
  ASSERT_EQ(gpus[0].processes.size(), 40u);
  EXPECT_EQ(gpus[0].processes[39].pid, 1039);
  EXPECT_EQ(gpus[0].processes[39].used_memory_bytes, 39u);
  EXPECT_TRUE(notices.take().empty());
}

TEST(GpuCollector, FailingCallSaidOnce) {
  auto j = fake_hgx(1);
  j["fail"] = {{"nvmlDeviceGetTemperature", 15}};  // GPU is lost
  FakeNvmlConfig config(j);
  std::vector<Gpu> gpus;
  Notices notices;
  GpuCollector c(dltune::host::Root{}, DLTUNE_FAKE_NVML, 10'000'000);  // 10 ms: several readings
  const auto at = collect_until(c, gpus, notices, [&] { return gpus.size() == 1; });
  ASSERT_NE(at, 0u);
  EXPECT_FALSE(gpus[0].temperature_celsius);
  EXPECT_EQ(gpus[0].power_watts, 69.0);
  c.wait_for_readings(at + 4);  // more readings, same failure
  c.collect(gpus, slots, notices);
  const auto said = notices.take();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("nvmlDeviceGetTemperature"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << said[0];
}

// Without NVML: one notice where an NVIDIA GPU is on PCI (its figures are missing), none on a
// host without one (no NVML there is no news), and no GPU either way.
TEST(GpuCollector, MissingLibraryOneNoticeWhereAnNvidiaGpuIsAndNothing) {
  for (const bool nvidia : {true, false}) {
    SCOPED_TRACE(nvidia ? "an NVIDIA GPU on PCI" : "no NVIDIA GPU");
    dltune::testing::TempTree t;
    const std::string dir = "sys/devices/pci0000:00/0000:18:00.0";
    t.write(dir + "/vendor", nvidia ? "0x10de\n" : "0x1af4\n")
        .write(dir + "/class", nvidia ? "0x030200\n" : "0x030000\n")
        .link("sys/bus/pci/devices/0000:18:00.0", "../../../devices/pci0000:00/0000:18:00.0");
    std::vector<Gpu> gpus(1);
    Notices notices;
    GpuCollector c(t.root(), "/nonexistent/libnvidia-ml.so.1", 10'000'000);
    c.wait_for_readings(1);  // returns once the thread has ended (no NVML, no AMD GPU)
    c.collect(gpus, slots, notices);
    const auto said = notices.take();
    EXPECT_TRUE(gpus.empty());
    if (nvidia) {
      ASSERT_EQ(said.size(), 1u);
      EXPECT_NE(said[0].find("cannot load NVML"), std::string::npos) << said[0];
      ASSERT_EQ(slots.size(), 1u);
      EXPECT_FALSE(slots[0].up);
    } else {
      EXPECT_TRUE(said.empty()) << said.front();
      EXPECT_TRUE(slots.empty());
    }
    c.collect(gpus, slots, notices);
    EXPECT_TRUE(notices.take().empty());
  }
}

TEST(GpuCollector, StopsAtOnceWithALongInterval) {
  FakeNvmlConfig config(fake_hgx(1));
  {
    // Destroyed right away (maybe before its first reading) and after one: neither waits out
    // the hour (a hang here would fail the test by its timeout).
    GpuCollector early(dltune::host::Root{}, DLTUNE_FAKE_NVML, kHour);
  }
  std::vector<Gpu> gpus;
  Notices notices;
  {
    GpuCollector c(dltune::host::Root{}, DLTUNE_FAKE_NVML, kHour);
    ASSERT_TRUE(collect_until(c, gpus, notices, [&] { return gpus.size() == 1; }));
  }
  EXPECT_EQ(config.log(), "nvmlInit_v2\nnvmlShutdown\nnvmlInit_v2\nnvmlShutdown\n");
}

// Xid critical errors arrive as NVML events: registered at the first reading, drained (without
// waiting) at each later one; the PCIe replay counter is a plain query. Both call versions of
// the wait (nvmlEventSetWait_v2 and the old one, which fills a shorter struct) give the same.
TEST(GpuCollector, XidEventsAndPcieReplays) {
  for (const char* library : {DLTUNE_FAKE_NVML, DLTUNE_FAKE_NVML_OLD}) {
    SCOPED_TRACE(library);
    auto j = fake_hgx(2);
    j["gpus"][0]["xid_events"] = {79, 13};
    j["gpus"][0]["pcie_replay_count"] = 3;
    FakeNvmlConfig config(j);
    std::vector<Gpu> gpus;
    Notices notices;
    GpuCollector c(dltune::host::Root{}, library, 10'000'000);  // 10 ms: several readings
    const auto at = collect_until(
        c, gpus, notices, [&] { return gpus.size() == 2 && gpus[0].xid_errors.value_or(0) == 2; });
    ASSERT_NE(at, 0u);
    EXPECT_EQ(gpus[0].last_xid, 13u);
    const std::vector<dltune::gpu::XidCount> by_code{{13, 1}, {79, 1}};  // sorted by code
    EXPECT_EQ(gpus[0].xid_codes, by_code);
    EXPECT_EQ(gpus[0].pcie_replay_count, 3u);
    // The second GPU refuses registration (not supported): no count at all, not a zero.
    EXPECT_FALSE(gpus[1].xid_errors);
    EXPECT_FALSE(gpus[1].last_xid);
    EXPECT_FALSE(gpus[1].pcie_replay_count);
    // Drained events are not counted again: a few readings later.
    c.wait_for_readings(at + 3);
    c.collect(gpus, slots, notices);
    EXPECT_EQ(gpus[0].xid_errors, 2u);
    EXPECT_TRUE(notices.take().empty());
  }
}

}  // namespace gpu_collector_test

// gpu.ecc, gpu.power_limit and gpu.pcie_link on AMD GPUs, from amdgpu's sysfs alone, on the
// amd-mi210x4 host tree (tests/fixtures/roots/README.md): GPU 0 clean, GPU 1 on an x8 link,
// GPU 2 capped at 200 W with two retired pages and corrected errors, GPU 3 with an uncorrectable
// error and a bad page pending a reset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "gpu_hosts.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"

namespace amdgpu_rules_test {

using namespace dltune::audit;
using dltune::testing::entry;
using dltune::testing::fixture_host;
using dltune::testing::has_note;
using ::testing::HasSubstr;

namespace {

constexpr const char* kAmdHost = "amd-mi210x4";

std::vector<Finding> judge(const char* key, const char* host = kAmdHost,
                           const char* value = "true") {
  const auto rule = rule_for(key);
  EXPECT_NE(rule, nullptr) << key;
  if (rule == nullptr) return {};
  const auto& h = fixture_host(host);
  return dltune::testing::run(rule, h.facts, *h.root, entry(key, value, "critical"));
}

}  // namespace

TEST(AmdgpuFacts, FixtureHostHasFourMi210) {
  const auto& g = fixture_host(kAmdHost).facts.gpu;
  ASSERT_TRUE(g.amdgpu.loaded) << g.amdgpu.error.value_or("");
  ASSERT_EQ(g.amdgpu.devices.size(), 4u);
  EXPECT_EQ(g.amdgpu.devices[0].name, "AMD Instinct MI210");
  EXPECT_EQ(g.amdgpu.devices[3].pci_bus_id, "0000:63:00.0");
  EXPECT_FALSE(g.nvml.loaded);
  unsigned joined = 0;
  for (const auto& d : g.devices)
    if (d.amdgpu_index) ++joined;
  EXPECT_EQ(joined, 4u);  // every PCI GPU knows its amdgpu device
}

TEST(AmdgpuRules, EccJudgesEachGpu) {
  const auto out = judge("gpu.ecc");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_THAT(out[0].summary, HasSubstr("no uncorrectable ECC errors"));
  // GPU 2: pages retired after uncorrectable errors, handled: a warning, with the corrected
  // errors as a note.
  EXPECT_EQ(out[2].severity, Severity::kWarn);
  EXPECT_THAT(out[2].summary, HasSubstr("2 pages retired after uncorrectable errors"));
  ASSERT_TRUE(out[2].fix);
  EXPECT_EQ(out[2].fix->command, "rocm-smi -d 2 --showretiredpages");
  EXPECT_TRUE(has_note(out[2], "12 corrected errors since the driver loaded"));
  // GPU 3: an uncorrectable error and a page waiting for a reset: critical, reset it.
  EXPECT_EQ(out[3].severity, Severity::kCritical);
  EXPECT_THAT(out[3].summary, HasSubstr("1 uncorrectable ECC error"));
  EXPECT_THAT(out[3].summary, HasSubstr("waits for a GPU reset"));
  ASSERT_TRUE(out[3].fix);
  EXPECT_EQ(out[3].fix->command, "rocm-smi -d 3 --gpureset");
  EXPECT_TRUE(has_note(out[3], "Drain the node"));
  bool cites_sysfs = false;
  for (const auto& e : out[3].evidence)
    cites_sysfs = cites_sysfs || e.path == "/sys/bus/pci/devices/0000:63:00.0/ras/umc_err_count";
  EXPECT_TRUE(cites_sysfs);
}

TEST(AmdgpuRules, PowerCapBelowTheDefault) {
  const auto out = judge("gpu.power_limit");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_THAT(out[0].summary, HasSubstr("300 W, the default"));
  EXPECT_EQ(out[2].severity, Severity::kCritical);  // the profile entry's severity
  EXPECT_THAT(out[2].summary, HasSubstr("power capped at 200 W, below its default 300 W (67%)"));
  ASSERT_TRUE(out[2].fix);
  EXPECT_EQ(out[2].fix->command, "rocm-smi -d 2 --resetpoweroverdrive");
}

TEST(AmdgpuRules, NarrowLinkFromSysfs) {
  const auto out = judge("gpu.pcie_link");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[1].severity, Severity::kCritical);
  EXPECT_THAT(out[1].summary, HasSubstr("x8 of x16"));
}

TEST(AmdgpuRules, OffInTheProfileIsOneFinding) {
  const auto out = judge("gpu.ecc", kAmdHost, "false");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
}

TEST(AmdgpuRules, NvidiaHostsUnchanged) {
  // A host without AMD GPUs gets NVIDIA's findings alone.
  const auto& g = fixture_host("gpu8-numa2-cgv2").facts.gpu;
  EXPECT_FALSE(g.amdgpu.loaded);
  for (const auto& f : judge("gpu.ecc", "gpu8-numa2-cgv2"))
    EXPECT_THAT(f.fix ? f.fix->command : "", ::testing::Not(HasSubstr("rocm-smi")));
}

}  // namespace amdgpu_rules_test

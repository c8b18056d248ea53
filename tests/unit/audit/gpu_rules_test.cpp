// The GPU rules on the fixture hosts (tests/fixtures/roots/README.md) and on the 8-GPU host with
// the fake NVML answering: persistence, nouveau, driver/library match, PCIe links, ECC and
// throttling. gpu.driver_cuda: gpu_driver_cuda_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "core/json.hpp"
#include "gpu_hosts.hpp"
#include "inventory/capture_files.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"

namespace gpu_rules_test {

using namespace dltune::audit;
// GPU persistence is judged by its kind of setting (settings/gpu_setting.cpp), beside its planner.
constexpr auto gpu_persistence = dltune::settings::check_gpu_persistence;
using dltune::testing::entry;
using dltune::testing::fixture_host;
using dltune::testing::has_note;
using dltune::testing::run;
using dltune::testing::with_nvml;
using ::testing::HasSubstr;

namespace {

constexpr const char* kGpu8 = "gpu8-numa2-cgv2";
constexpr const char* kContainer = "container-cgv2";

std::vector<Finding> on_fixture(const char* host, RuleFn rule, const char* key, const char* value,
                                const char* severity) {
  const auto& h = fixture_host(host);
  return run(rule, h.facts, *h.root, entry(key, value, severity));
}

std::vector<Finding> on_nvml(const nlohmann::json& config, RuleFn rule, const char* key,
                             const char* value, const char* severity, bool container = false) {
  const auto facts = with_nvml(kGpu8, config);
  return run(rule, facts, *fixture_host(kGpu8).root, entry(key, value, severity), container);
}

void expect_frame(const Finding& f, const std::string& key) {
  EXPECT_EQ(f.id, key);
  EXPECT_EQ(f.area, "gpu");
  EXPECT_EQ(f.reason, "why " + key);
  EXPECT_EQ(f.source, "where " + key + " comes from");
}

}  // namespace

TEST(GpuRules, NoGpuMeansNotApplicable) {
  const struct {
    RuleFn fn;
    const char* key;
    const char* value;
  } kRules[] = {
      {gpu_persistence, "gpu.persistence", "true"},
      {gpu_nouveau, "gpu.nouveau", "false"},
      {gpu_driver_match, "gpu.driver_match", "true"},
      {gpu_driver_cuda, "gpu.driver_cuda", "true"},
      {gpu_pcie_link, "gpu.pcie_link", "true"},
      {gpu_ecc, "gpu.ecc", "true"},
      {gpu_throttle, "gpu.throttle", "true"},
      {gpu_power_limit, "gpu.power_limit", "true"},
      {gpu_mig, "gpu.mig", "false"},
      {gpu_nvlink, "gpu.nvlink", "true"},
  };
  for (const auto& r : kRules) {
    const auto out = on_fixture("this-vm", r.fn, r.key, r.value, "critical");
    ASSERT_EQ(out.size(), 1u) << r.key;
    expect_frame(out[0], r.key);
    EXPECT_FALSE(out[0].applicable) << r.key;
    EXPECT_EQ(out[0].severity, Severity::kOk) << r.key;
    EXPECT_EQ(out[0].summary, "no NVIDIA GPU on this host") << r.key;
    EXPECT_FALSE(out[0].fix) << r.key;
  }
}

TEST(GpuRules, WithoutNvmlTheNvmlFactsAreInfo) {
  for (const char* host : {kGpu8, kContainer})
    for (const auto& [fn, key] :
         {std::pair<RuleFn, const char*>{gpu_persistence, "gpu.persistence"},
          std::pair<RuleFn, const char*>{gpu_ecc, "gpu.ecc"},
          std::pair<RuleFn, const char*>{gpu_throttle, "gpu.throttle"},
          std::pair<RuleFn, const char*>{gpu_power_limit, "gpu.power_limit"},
          std::pair<RuleFn, const char*>{gpu_mig, "gpu.mig"},
          std::pair<RuleFn, const char*>{gpu_nvlink, "gpu.nvlink"}}) {
      const auto out = on_fixture(host, fn, key, "true", "critical");
      ASSERT_EQ(out.size(), 1u) << host << " " << key;
      expect_frame(out[0], key);
      EXPECT_TRUE(out[0].applicable);
      EXPECT_EQ(out[0].severity, Severity::kInfo) << host << " " << key;
      EXPECT_THAT(out[0].summary, HasSubstr("cannot be checked without NVML"));
      EXPECT_THAT(out[0].summary, HasSubstr("not recorded in this host tree"));
      ASSERT_EQ(out[0].evidence.size(), 1u);
      EXPECT_EQ(out[0].evidence[0].path, dltune::inventory::capture_files::kNvml);
    }
}

TEST(GpuRules, NouveauLoadedBesideNvidiaIsCritical) {
  const auto out = on_fixture(kGpu8, gpu_nouveau, "gpu.nouveau", "false", "critical");
  ASSERT_EQ(out.size(), 1u);
  const auto& f = out[0];
  expect_frame(f, "gpu.nouveau");
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.actual, "loaded");
  EXPECT_EQ(f.expected, "not loaded");
  ASSERT_EQ(f.evidence.size(), 1u);  // "#blacklist nouveau" is a comment: nothing blacklists it
  EXPECT_EQ(f.evidence[0].path, "/proc/modules");
  EXPECT_EQ(f.evidence[0].value, "nouveau listed");
  ASSERT_TRUE(f.fix);
  EXPECT_FALSE(f.fix->by_dltune);
  EXPECT_EQ(f.fix->command,
            "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > "
            "/etc/modprobe.d/blacklist-nouveau.conf && update-initramfs -u && reboot");
  EXPECT_TRUE(has_note(f, "Nothing blacklists nouveau"));
}

TEST(GpuRules, NouveauBlacklistedButLoadedNeedsTheInitramfs) {
  const auto& h = fixture_host(kGpu8);
  auto facts = h.facts;
  facts.os.nouveau_blacklist = {"/etc/modprobe.d/blacklist-nouveau.conf: blacklist nouveau"};
  const auto out = run(gpu_nouveau, facts, *h.root, entry("gpu.nouveau", "false", "critical"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kCritical);
  ASSERT_EQ(out[0].evidence.size(), 2u);
  EXPECT_EQ(out[0].evidence[1].path, "/etc/modprobe.d/blacklist-nouveau.conf");
  EXPECT_EQ(out[0].evidence[1].value, "blacklist nouveau");
  ASSERT_TRUE(out[0].fix);
  EXPECT_EQ(out[0].fix->command, "update-initramfs -u && reboot");
  EXPECT_TRUE(has_note(out[0], "the initramfs still holds the old configuration"));
}

TEST(GpuRules, NouveauNotLoadedIsOk) {
  const auto out = on_fixture(kContainer, gpu_nouveau, "gpu.nouveau", "false", "critical");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_TRUE(out[0].applicable);
  EXPECT_EQ(out[0].evidence[0].value, "nouveau not listed");
  EXPECT_FALSE(out[0].fix);
}

TEST(GpuRules, DriverLibraryMismatch) {
  const auto out = on_fixture(kGpu8, gpu_driver_match, "gpu.driver_match", "true", "critical");
  ASSERT_EQ(out.size(), 1u);
  const auto& f = out[0];
  expect_frame(f, "gpu.driver_match");
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.summary, "nvidia kernel module 535.161.07 but user library 550.54.15");
  ASSERT_EQ(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[0].path, "/proc/driver/nvidia/version");
  EXPECT_EQ(f.evidence[0].value, "535.161.07");
  EXPECT_EQ(f.evidence[1].path, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
  EXPECT_EQ(f.evidence[1].value, "550.54.15");
  ASSERT_TRUE(f.fix);
  EXPECT_EQ(f.fix->command, "reboot");
  EXPECT_FALSE(f.fix->by_dltune);
  EXPECT_TRUE(has_note(f, "Failed to initialize NVML: Driver/library version mismatch"));
  EXPECT_TRUE(has_note(f, "modprobe -r nvidia_uvm"));
}

TEST(GpuRules, DriverLibraryMatchInTheContainer) {
  const auto out = on_fixture(kContainer, gpu_driver_match, "gpu.driver_match", "true", "warn");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[0].summary, "kernel module and user library are both 535.161.07");
  EXPECT_EQ(out[0].evidence[1].path, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.161.07");
}

TEST(GpuRules, DriverVersionsUnknownIsInfo) {
  const auto& h = fixture_host(kContainer);
  auto facts = h.facts;
  facts.gpu.driver = {};
  const auto out =
      run(gpu_driver_match, facts, *h.root, entry("gpu.driver_match", "true", "critical"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_THAT(out[0].summary, HasSubstr("the nvidia kernel module is not loaded"));
}

TEST(GpuRules, PcieLinkOneGpuAtHalfWidth) {
  const auto out = on_fixture(kGpu8, gpu_pcie_link, "gpu.pcie_link", "true", "warn");
  ASSERT_EQ(out.size(), 8u);
  int ok = 0;
  for (const auto& f : out) {
    expect_frame(f, "gpu.pcie_link");
    if (f.severity == Severity::kOk) {
      ++ok;
      EXPECT_EQ(f.actual, "Gen5 x16 (max Gen5 x16)");
      EXPECT_THAT(f.summary, HasSubstr(": PCIe Gen5 x16, its maximum"));
      continue;
    }
    EXPECT_EQ(f.severity, Severity::kWarn);
    EXPECT_EQ(f.summary,
              "GPU 5 (0000:ab:00.0): PCIe link x8 of x16: reseat the card, check the slot/riser");
    EXPECT_EQ(f.actual, "Gen4 x8 (max Gen5 x16)");
    ASSERT_GE(f.evidence.size(), 4u);
    EXPECT_EQ(f.evidence[0].path, "/sys/bus/pci/devices/0000:ab:00.0/current_link_width");
    EXPECT_EQ(f.evidence[0].value, "8");
    EXPECT_EQ(f.evidence[1].path, "/sys/bus/pci/devices/0000:ab:00.0/max_link_width");
    EXPECT_EQ(f.evidence[1].value, "16");
    EXPECT_EQ(f.evidence[2].value, "16.0 GT/s PCIe");
    ASSERT_TRUE(f.fix);
    EXPECT_FALSE(f.fix->by_dltune);
    EXPECT_THAT(f.fix->command, HasSubstr("reseat the GPU"));
    EXPECT_THAT(f.fix->command, HasSubstr("lspci -vv -s 0000:ab:00.0"));
    EXPECT_TRUE(has_note(f, "Gen4 of Gen5"));
  }
  EXPECT_EQ(ok, 7);
}

TEST(GpuRules, PcieLinkSlowAtFullWidthIsANote) {
  const auto& h = fixture_host(kGpu8);
  auto facts = h.facts;
  facts.gpu.devices[0].link.generation = 3;
  facts.gpu.devices[0].link.speed_gts = 8.0;
  const auto out = run(gpu_pcie_link, facts, *h.root, entry("gpu.pcie_link", "true", "warn"));
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_EQ(out[0].summary, "GPU 0 (0000:18:00.0): PCIe Gen3 of Gen5 at full width x16");
  EXPECT_TRUE(has_note(out[0], "Links slow down at idle"));
  EXPECT_FALSE(out[0].fix);
}

TEST(GpuRules, PcieLinkUnknownInTheVm) {
  const auto out = on_fixture(kContainer, gpu_pcie_link, "gpu.pcie_link", "true", "warn");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_EQ(out[0].summary, "GPU 0 (0000:00:1e.0): its PCIe link is not reported");
  EXPECT_TRUE(has_note(out[0], "integrated endpoint"));
}

TEST(GpuRules, PersistenceOffOnOddGpus) {
  const auto out =
      on_nvml(dltune::testing::fake_hgx(8), gpu_persistence, "gpu.persistence", "true", "warn");
  ASSERT_EQ(out.size(), 8u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& f = out[i];
    expect_frame(f, "gpu.persistence");
    ASSERT_EQ(f.evidence.size(), 1u);
    EXPECT_EQ(f.evidence[0].path, "nvml");
    if (i % 2 == 0) {
      EXPECT_EQ(f.severity, Severity::kOk) << i;
      EXPECT_EQ(f.actual, "on");
      EXPECT_FALSE(f.fix);
      continue;
    }
    EXPECT_EQ(f.severity, Severity::kWarn) << i;
    EXPECT_EQ(f.actual, "off");
    EXPECT_THAT(f.summary, HasSubstr(fmt::format("GPU {} (0000:", i)));
    EXPECT_THAT(f.evidence[0].value, HasSubstr("persistence mode off"));
    ASSERT_TRUE(f.fix);
    EXPECT_EQ(f.fix->command, "dltune tune apply --only gpu.persistence");
    EXPECT_TRUE(f.fix->by_dltune);  // tune sets it through NVML
    EXPECT_TRUE(has_note(f, "nvidia-persistenced"));
  }
  EXPECT_EQ(out[5].summary, "GPU 5 (0000:ab:00.0): persistence mode is off, expected on");
}

TEST(GpuRules, PersistenceInAContainerIsTheHostsToFix) {
  const auto out = on_nvml(dltune::testing::fake_hgx(2), gpu_persistence, "gpu.persistence", "true",
                           "warn", /*container=*/true);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[1].fix);
  EXPECT_FALSE(out[1].fix->by_dltune);
  EXPECT_TRUE(has_note(out[1], "the host must"));
}

TEST(GpuRules, UncorrectableEccErrorsAreCritical) {
  auto config = dltune::testing::fake_hgx(8);
  config["gpus"][3]["ecc_errors"]["volatile_uncorrected"] = 2;
  config["gpus"][3]["ecc_errors"]["aggregate_uncorrected"] = 5;
  config["gpus"][0]["ecc_enabled"] = false;
  config["gpus"][0]["ecc_pending_enabled"] = false;
  config["gpus"][7].erase("ecc_enabled");  // a GPU without ECC memory
  const auto out = on_nvml(config, gpu_ecc, "gpu.ecc", "true", "critical");
  ASSERT_EQ(out.size(), 8u);
  // GPU 0: ECC off.
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_THAT(out[0].summary, HasSubstr("ECC is off"));
  EXPECT_TRUE(has_note(out[0], "nvidia-smi -i 0 -e 1"));
  // GPU 3: errors.
  const auto& bad = out[3];
  expect_frame(bad, "gpu.ecc");
  EXPECT_EQ(bad.severity, Severity::kCritical);
  EXPECT_EQ(bad.summary,
            "GPU 3 (0000:5d:00.0): uncorrectable ECC errors (volatile 2, aggregate 5)");
  EXPECT_EQ(bad.evidence[0].path, "nvml");
  EXPECT_THAT(bad.evidence[0].value, HasSubstr("uncorrected volatile 2, aggregate 5"));
  ASSERT_TRUE(bad.fix);
  EXPECT_EQ(bad.fix->command, "nvidia-smi -q -d ECC,PAGE_RETIREMENT -i 0000:5d:00.0");
  EXPECT_FALSE(bad.fix->by_dltune);
  EXPECT_TRUE(has_note(bad, "Drain the node"));
  EXPECT_TRUE(has_note(bad, "RMA"));
  // GPU 1: clean, with corrected errors noted.
  EXPECT_EQ(out[1].severity, Severity::kOk);
  EXPECT_TRUE(has_note(out[1], "1 corrected ECC error over"));
  EXPECT_EQ(out[2].severity, Severity::kOk);
  // GPU 7: no ECC at all.
  EXPECT_FALSE(out[7].applicable);
  EXPECT_EQ(out[7].severity, Severity::kOk);
}

TEST(GpuRules, ThermalThrottlingAndThePowerCap) {
  auto config = dltune::testing::fake_hgx(5);
  config["gpus"][1]["clock_event_reasons"] = 0x40;  // HwThermalSlowdown
  config["gpus"][1]["temperature_celsius"] = 91;
  config["gpus"][2]["clock_event_reasons"] = 0x4;         // SwPowerCap
  config["gpus"][3]["clock_event_reasons"] = 0x20 | 0x4;  // SwThermalSlowdown, SwPowerCap
  config["gpus"][4]["clock_event_reasons"] = 0x80;        // HwPowerBrakeSlowdown
  const auto out = on_nvml(config, gpu_throttle, "gpu.throttle", "true", "warn");
  ASSERT_EQ(out.size(), 5u);
  for (const auto& f : out) expect_frame(f, "gpu.throttle");
  EXPECT_EQ(out[0].severity, Severity::kOk);  // GpuIdle
  EXPECT_EQ(out[0].actual, "GpuIdle");

  EXPECT_EQ(out[1].severity, Severity::kWarn);
  EXPECT_EQ(out[1].summary, "GPU 1 (0000:2a:00.0) is slowed down now: HwThermalSlowdown");
  EXPECT_EQ(out[1].evidence[0].path, "nvml");
  EXPECT_THAT(out[1].evidence[0].value, HasSubstr("0x40 (HwThermalSlowdown); 91 °C"));
  ASSERT_TRUE(out[1].fix);
  EXPECT_EQ(out[1].fix->command, "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i 0000:2a:00.0");
  EXPECT_TRUE(has_note(out[1], "too hot"));

  EXPECT_EQ(out[2].severity, Severity::kInfo);
  EXPECT_EQ(out[2].summary, "GPU 2 (0000:3a:00.0) is at its power limit (SwPowerCap)");
  EXPECT_FALSE(out[2].fix);

  EXPECT_EQ(out[3].severity, Severity::kWarn);
  EXPECT_EQ(out[3].summary, "GPU 3 (0000:5d:00.0) is slowed down now: SwThermalSlowdown");

  EXPECT_EQ(out[4].severity, Severity::kWarn);
  EXPECT_TRUE(has_note(out[4], "power brake"));
}

TEST(GpuRules, AProfileCanTurnACheckOff) {
  const auto out = on_fixture(kGpu8, gpu_ecc, "gpu.ecc", "false", "critical");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_THAT(out[0].summary, HasSubstr("not checked"));
}

TEST(GpuRules, RowRemapsAndRetiredPagesAreJudgedWithTheEccCounts) {
  auto config = dltune::testing::fake_hgx(7);
  auto& g = config["gpus"];
  g[1]["row_remap"]["pending"] = true;  // needs a reset
  g[1]["row_remap"]["uncorrected_rows"] = 1;
  g[2]["row_remap"]["failure"] = true;      // needs service
  g[3]["row_remap"]["corrected_rows"] = 2;  // wearing
  // An old uncorrectable error that a remap has handled: history, not a crisis.
  g[4]["ecc_errors"]["aggregate_uncorrected"] = 1;
  g[4]["row_remap"]["uncorrected_rows"] = 1;
  // The same old error with no remap to show for it stays critical.
  g[5]["ecc_errors"]["aggregate_uncorrected"] = 1;
  g[5].erase("row_remap");
  // A V100: retirement pending.
  g[6].erase("row_remap");
  g[6]["retired_pages"] = {{"multiple_single_bit", 0}, {"double_bit", 1}, {"pending", true}};
  const auto out = on_nvml(config, gpu_ecc, "gpu.ecc", "true", "critical");
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[0].summary,
            "GPU 0 (0000:18:00.0): no uncorrectable ECC errors, no row remap pending");

  EXPECT_EQ(out[1].severity, Severity::kCritical);
  EXPECT_EQ(out[1].summary, "GPU 1 (0000:2a:00.0): a row remap waits for a GPU reset");
  ASSERT_TRUE(out[1].fix);
  EXPECT_EQ(out[1].fix->command, "nvidia-smi -r -i 0000:2a:00.0");
  EXPECT_TRUE(has_note(out[1], "takes effect at the next GPU reset"));
  EXPECT_THAT(out[1].evidence[1].value, HasSubstr("remapped rows 0 for corrected, 1 for "
                                                  "uncorrected errors; pending yes, failure no"));

  EXPECT_EQ(out[2].severity, Severity::kCritical);
  EXPECT_EQ(out[2].summary, "GPU 2 (0000:3a:00.0): a row remap failed");
  EXPECT_EQ(out[2].fix->command, "nvidia-smi -q -d ROW_REMAPPER -i 0000:3a:00.0");
  EXPECT_TRUE(has_note(out[2], "no spare row left"));

  EXPECT_EQ(out[3].severity, Severity::kWarn);
  EXPECT_EQ(out[3].summary,
            "GPU 3 (0000:5d:00.0): 2 rows remapped after repeated corrected errors");
  EXPECT_TRUE(has_note(out[3], "keep growing"));

  EXPECT_EQ(out[4].severity, Severity::kWarn);
  EXPECT_EQ(out[4].summary,
            "GPU 4 (0000:9a:00.0): 1 uncorrectable ECC error in its life, handled by 1 remapped "
            "row");

  EXPECT_EQ(out[5].severity, Severity::kCritical);
  EXPECT_EQ(out[5].summary,
            "GPU 5 (0000:ab:00.0): uncorrectable ECC errors (volatile 0, aggregate 1)");

  EXPECT_EQ(out[6].severity, Severity::kCritical);
  EXPECT_EQ(out[6].summary, "GPU 6 (0000:ba:00.0): a page retirement waits for a GPU reset");
  EXPECT_EQ(out[6].fix->command, "nvidia-smi -r -i 0000:ba:00.0");
  EXPECT_THAT(out[6].evidence[1].value,
              HasSubstr("retired pages 0 for repeated corrected, 1 for uncorrected errors; "
                        "pending yes"));
}

TEST(GpuRules, APowerCapBelowTheDefaultAndLoweredApplicationClocksAreWarnings) {
  auto config = dltune::testing::fake_hgx(4);
  auto& g = config["gpus"];
  // GPU 1: an admin's nvidia-smi -pl 450.
  g[1]["power_limit_milliwatts"] = 450000;
  g[1]["power_management_limit_milliwatts"] = 450000;
  // GPU 2: the platform enforces less than what is set.
  g[2]["power_limit_milliwatts"] = 500000;
  // GPU 3: application clocks lowered; no default limit reported.
  g[3]["clocks"]["app_sm_mhz"] = 1410;
  g[3].erase("power_default_limit_milliwatts");
  const auto out = on_nvml(config, gpu_power_limit, "gpu.power_limit", "true", "warn");
  ASSERT_EQ(out.size(), 4u);
  for (const auto& f : out) expect_frame(f, "gpu.power_limit");
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[0].summary, "GPU 0 (0000:18:00.0): at its default power limit 700 W");
  EXPECT_EQ(out[0].actual, "700 W of 700 W");

  EXPECT_EQ(out[1].severity, Severity::kWarn);
  EXPECT_EQ(out[1].summary,
            "GPU 1 (0000:2a:00.0): power capped at 450 W, below its default 700 W (64%)");
  ASSERT_TRUE(out[1].fix);
  EXPECT_EQ(out[1].fix->command, "nvidia-smi -i 0000:2a:00.0 -pl 700");
  EXPECT_THAT(out[1].evidence[0].value,
              HasSubstr("450 W enforced, 450 W set, 700 W default (settable 200-700 W)"));

  EXPECT_EQ(out[2].severity, Severity::kWarn);
  EXPECT_FALSE(out[2].fix);  // nothing nvidia-smi can raise: the platform's cap
  EXPECT_TRUE(has_note(out[2], "the platform caps the board"));

  EXPECT_EQ(out[3].severity, Severity::kWarn);
  EXPECT_EQ(out[3].summary,
            "GPU 3 (0000:5d:00.0): application clocks lowered to SM 1410 MHz (default 1980 MHz)");
  EXPECT_EQ(out[3].fix->command, "nvidia-smi -i 0000:5d:00.0 -rac");
}

TEST(GpuRules, MigOnAPendingModeChangeAndMigWithoutDevices) {
  auto config = dltune::testing::fake_hgx(4);
  auto& g = config["gpus"];
  g[1]["mig"] = {{"enabled", true},
                 {"pending", true},
                 {"max_devices", 7},
                 {"devices",
                  {{{"name", "NVIDIA H100 80GB HBM3 MIG 7g.80gb"},
                    {"uuid", "MIG-11111111-2222-3333-4444-555555555555"}}}}};
  g[2]["mig"] = {{"enabled", false}, {"pending", true}, {"max_devices", 7}};
  g[3]["mig"] = {{"enabled", true}, {"pending", true}, {"max_devices", 7}};
  const auto out = on_nvml(config, gpu_mig, "gpu.mig", "false", "warn");
  ASSERT_EQ(out.size(), 4u);
  for (const auto& f : out) expect_frame(f, "gpu.mig");
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[0].summary, "GPU 0 (0000:18:00.0): MIG off");

  EXPECT_EQ(out[1].severity, Severity::kWarn);
  EXPECT_EQ(out[1].summary,
            "GPU 1 (0000:2a:00.0): MIG is on, so jobs see slices of the GPU, not the GPU");
  EXPECT_THAT(out[1].evidence[0].value, HasSubstr("1 MIG device: NVIDIA H100 80GB HBM3 MIG 7g.80gb "
                                                  "(MIG-11111111-2222-3333-4444-555555555555)"));
  ASSERT_TRUE(out[1].fix);
  EXPECT_EQ(out[1].fix->command,
            "nvidia-smi -i 0000:2a:00.0 -mig 0 && nvidia-smi -r -i 0000:2a:00.0");
  EXPECT_TRUE(has_note(out[1], "NCCL cannot run between MIG devices"));

  EXPECT_EQ(out[2].severity, Severity::kWarn);
  EXPECT_EQ(out[2].summary, "GPU 2 (0000:3a:00.0): MIG mode turns on at the next GPU reset");
  EXPECT_TRUE(has_note(out[2], "waits for a GPU reset"));

  EXPECT_THAT(out[3].summary, HasSubstr("no MIG device made, so CUDA sees no device on it"));

  // A GPU without MIG (a V100): not applicable.
  config["gpus"][0].erase("mig");
  const auto none = on_nvml(config, gpu_mig, "gpu.mig", "false", "warn");
  EXPECT_FALSE(none[0].applicable);
}

TEST(GpuRules, AnNvLinkDownOnAGpuWhosePeersHaveItUp) {
  auto config = dltune::testing::fake_hgx(4);
  config["gpus"][2]["nvlinks"][3]["active"] = false;
  config["gpus"][2]["nvlinks"][7]["active"] = false;
  config["gpus"][1]["nvlinks"][0]["errors"]["recovery"] = 3;
  const auto out = on_nvml(config, gpu_nvlink, "gpu.nvlink", "true", "warn");
  ASSERT_EQ(out.size(), 4u);
  for (const auto& f : out) expect_frame(f, "gpu.nvlink");
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[0].summary, "GPU 0 (0000:18:00.0): 18 NVLinks up");
  EXPECT_EQ(out[1].severity, Severity::kOk);
  EXPECT_TRUE(has_note(out[1], "0 replay, 3 recovery and 0 CRC errors"));
  EXPECT_EQ(out[2].severity, Severity::kWarn);
  EXPECT_EQ(out[2].summary,
            "GPU 2 (0000:3a:00.0): NVLink 3, 7 down, while its peers have 18 "
            "links up");
  EXPECT_EQ(out[2].actual, "16 of 18 up");
  ASSERT_TRUE(out[2].fix);
  EXPECT_EQ(out[2].fix->command, "nvidia-smi nvlink -s -i 0000:3a:00.0");
  EXPECT_THAT(out[2].evidence[0].value, HasSubstr("16 of 18 links active (down: 3, 7)"));
}

TEST(GpuRules, NoNvLinkUpOnAnyGpuPointsAtTheFabricManager) {
  auto config = dltune::testing::fake_hgx(2);
  for (auto& g : config["gpus"])
    for (auto& l : g["nvlinks"]) l["active"] = false;
  const auto out = on_nvml(config, gpu_nvlink, "gpu.nvlink", "true", "warn");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].severity, Severity::kWarn);
  EXPECT_EQ(out[0].summary,
            "GPU 0 (0000:18:00.0): none of its 18 NVLinks is up, on no GPU of this host");
  EXPECT_EQ(out[0].fix->command, "systemctl status nvidia-fabricmanager");
  EXPECT_TRUE(has_note(out[0], "nvidia-fabricmanager"));
  // PCIe-only GPUs: nothing to judge.
  for (auto& g : config["gpus"]) g.erase("nvlinks");
  const auto none = on_nvml(config, gpu_nvlink, "gpu.nvlink", "true", "warn");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].applicable);
}

}  // namespace gpu_rules_test

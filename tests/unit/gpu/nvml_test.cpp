// The NVML loader and backend against the fake libnvidia-ml.so (tests/fakes/nvml), loaded by
// path exactly as the real library is.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "fake_nvml_config.hpp"
#include "gpu/backend.hpp"
#include "gpu/nvml_backend.hpp"
#include "gpu/nvml_library.hpp"
#include "gpu/report_json.hpp"
#include "gpu/report_text.hpp"
#include "support/build_paths.hpp"

namespace nvml_test {

using dltune::gpu::NvmlBackend;
using dltune::gpu::NvmlLibrary;
using dltune::gpu::Report;
using dltune::gpu::Sym;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using nlohmann::json;

namespace {

Report query(const std::string& library) {
  return NvmlBackend(library).query();
}

// "nvmlInit_v2" -> ("nvmlInit", 2); "nvmlInit" -> ("nvmlInit", 1).
std::pair<std::string, int> split_version(const std::string& name) {
  const auto v = name.rfind("_v");
  if (v == std::string::npos) return {name, 1};
  return {name.substr(0, v), std::stoi(name.substr(v + 2))};
}

bool has_error_about(const std::vector<std::string>& errors, std::string_view what) {
  for (const auto& e : errors)
    if (e.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(NvmlSymbols, TableListsNewestFirstAndFewRequired) {
  std::set<Sym> required;
  for (const auto& spec : dltune::gpu::symbol_table()) {
    ASSERT_NE(spec.names[0], nullptr);
    if (spec.required) required.insert(spec.sym);
    // Versions of one call come newest first: "_v3", "_v2", then the plain name (version 1).
    // (A renamed call, such as ClocksThrottleReasons -> ClocksEventReasons, lists the new name
    // first.)
    for (std::size_t i = 1; i < spec.names.size() && spec.names[i] != nullptr; ++i) {
      const auto [base_prev, v_prev] = split_version(spec.names[i - 1]);
      const auto [base_cur, v_cur] = split_version(spec.names[i]);
      if (base_prev == base_cur) {
        EXPECT_GT(v_prev, v_cur) << spec.names[i - 1] << " then " << spec.names[i];
      }
    }
  }
  EXPECT_EQ(required,
            (std::set<Sym>{Sym::kInit, Sym::kShutdown, Sym::kDeviceCount, Sym::kHandleByIndex}));
}

TEST(NvmlSymbols, ReturnNames) {
  EXPECT_EQ(dltune::gpu::return_name(9), "NVML_ERROR_DRIVER_NOT_LOADED");
  EXPECT_EQ(dltune::gpu::return_name(18), "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
  EXPECT_EQ(dltune::gpu::return_name(12345), "NVML_ERROR_UNKNOWN_CODE");
}

TEST(NvmlSymbols, CudaVersionAndReasonNames) {
  EXPECT_EQ(dltune::gpu::cuda_version_string(12040), "12.4");
  EXPECT_EQ(dltune::gpu::cuda_version_string(11080), "11.8");
  EXPECT_EQ(dltune::gpu::cuda_version_string(13000), "13.0");
  EXPECT_FALSE(dltune::gpu::cuda_version_string(7));
  EXPECT_FALSE(dltune::gpu::cuda_version_string(-12040));
  EXPECT_EQ(dltune::gpu::clock_event_reason_names(0x1 | 0x4 | 0x100),
            (std::vector<std::string>{"GpuIdle", "SwPowerCap", "DisplayClockSetting"}));
  EXPECT_EQ(dltune::gpu::clock_event_reason_names(0x40 | 0x200),
            (std::vector<std::string>{"HwThermalSlowdown", "0x200"}));
  EXPECT_TRUE(dltune::gpu::clock_event_reason_names(0).empty());
}

TEST(NvmlFake, EightGpusComeOutWithEveryField) {
  FakeNvmlConfig fake(fake_hgx(8));
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(r.loaded) << r.error.value_or("");
  EXPECT_EQ(r.library, DLTUNE_FAKE_NVML);
  EXPECT_EQ(r.driver_version, "550.54.15");
  EXPECT_EQ(r.nvml_version, "12.550.54.15");
  EXPECT_EQ(r.cuda_driver_version, "12.4");
  EXPECT_EQ(r.device_count, 8u);
  ASSERT_EQ(r.devices.size(), 8u);
  EXPECT_TRUE(r.errors.empty());
  for (unsigned i = 0; i < 8; ++i) {
    const auto& d = r.devices[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(d.uuid, fmt::format("GPU-{:08x}-aaaa-bbbb-cccc-{:012x}", 0x8c7d1f00 + i, i));
    EXPECT_EQ(d.pci_bus_id, fmt::format("0000:{:02x}:00.0", dltune::testing::kHgxBuses[i]));
    EXPECT_EQ(d.memory_total_bytes, 85520809984ull);
    EXPECT_EQ(d.memory_used_bytes, 553648128ull + i);
    EXPECT_EQ(d.persistence_mode, i % 2 == 0);
    EXPECT_EQ(d.ecc_enabled, true);
    EXPECT_EQ(d.ecc_pending_enabled, true);
    EXPECT_EQ(d.ecc_errors.volatile_corrected, 0u);
    EXPECT_EQ(d.ecc_errors.aggregate_corrected, i);
    EXPECT_EQ(d.ecc_errors.aggregate_uncorrected, 0u);
    EXPECT_EQ(d.sm_clock_mhz, 345 + i);
    EXPECT_EQ(d.memory_clock_mhz, 2619u);
    EXPECT_EQ(d.max_sm_clock_mhz, 1980u);
    EXPECT_EQ(d.max_memory_clock_mhz, 2619u);
    EXPECT_EQ(d.clock_event_reasons, 1u);
    EXPECT_EQ(d.pcie_generation, 5u);
    EXPECT_EQ(d.pcie_max_width, 16u);
    EXPECT_EQ(d.temperature_celsius, 30 + i);
    ASSERT_TRUE(d.power_watts);
    EXPECT_DOUBLE_EQ(*d.power_watts, (69000 + i) / 1000.0);
    EXPECT_EQ(d.power_limit_watts, 700.0);
    ASSERT_EQ(d.nvlinks.size(), 18u);
    EXPECT_TRUE(d.nvlinks[17].active);
    EXPECT_EQ(d.nvlinks[17].link, 17u);
    EXPECT_EQ(d.nvlinks[17].remote_pci_bus_id, "0000:c1:00.0");
    EXPECT_TRUE(d.errors.empty()) << d.errors.front();
  }
  // Every init is paired with a shutdown.
  EXPECT_EQ(fake.log(), "nvmlInit_v2\nnvmlShutdown\n");
}

// With no library named, the driver's names come first and then the files given (the host's
// own library in a mount of the host): on a machine without NVML, the file given is loaded.
TEST(NvmlFake, TheFilesAfterTheDefaultNamesAreTriedInOrder) {
  FakeNvmlConfig fake(fake_hgx(1));
  auto lib =
      dltune::gpu::NvmlLibrary::open("", {"/nonexistent/libnvidia-ml.so.1", DLTUNE_FAKE_NVML});
  if (lib && (*lib)->path() == dltune::gpu::kDefaultLibraryNames[0])
    GTEST_SKIP() << "this machine has NVML: its own library is found first";
  ASSERT_TRUE(lib) << lib.error().message();
  EXPECT_EQ((*lib)->path(), DLTUNE_FAKE_NVML);
  // Nothing loads when no file given is there (the driver's names did not load above).
  lib = dltune::gpu::NvmlLibrary::open("", {"/nonexistent/libnvidia-ml.so.1"});
  ASSERT_FALSE(lib);
  EXPECT_NE(lib.error().message().find("libnvidia-ml.so.1"), std::string::npos);
  // Only a tree that is this kernel's gets the host's files to try; the live host and captures
  // none.
  EXPECT_TRUE(dltune::gpu::nvml_libraries_in(dltune::host::Root()).empty());
  const auto fixture =
      dltune::host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2");
  ASSERT_TRUE(fixture);
  EXPECT_TRUE(dltune::gpu::nvml_libraries_in(*fixture).empty());
}

TEST(NvmlFake, InitErrorIsNamedWithTheLibrarysOwnText) {
  auto config = fake_hgx(2);
  config["init_error"] = 9;
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.error, "nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded");
  EXPECT_TRUE(r.devices.empty());
  EXPECT_EQ(fake.log(), "nvmlInit_v2\n");  // no shutdown after a failed init
}

TEST(NvmlFake, AFailingCallLeavesOnlyThatFieldOut) {
  auto config = fake_hgx(3);
  config["gpus"][1]["fail"] = {{"nvmlDeviceGetUUID", 15}, {"nvmlDeviceGetTemperature", 3}};
  config["fail"] = {{"nvmlDeviceGetPciInfo", 4}};  // every version, every GPU
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(r.loaded);
  ASSERT_EQ(r.devices.size(), 3u);
  const auto& d = r.devices[1];
  EXPECT_FALSE(d.uuid);
  EXPECT_FALSE(d.temperature_celsius);
  EXPECT_FALSE(d.pci_bus_id);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.memory_total_bytes, 85520809984ull);
  EXPECT_EQ(d.sm_clock_mhz, 346u);
  EXPECT_EQ(d.nvlinks.size(), 18u);
  // The GPU-is-lost error is kept; NOT_SUPPORTED (3) is not an error worth showing.
  EXPECT_TRUE(
      has_error_about(d.errors, "nvmlDeviceGetUUID: NVML_ERROR_GPU_IS_LOST (15): GPU is lost"));
  EXPECT_TRUE(has_error_about(d.errors, "nvmlDeviceGetPciInfo_v3: NVML_ERROR_NO_PERMISSION (4)"));
  EXPECT_FALSE(has_error_about(d.errors, "Temperature"));
  EXPECT_TRUE(r.devices[0].uuid);
  EXPECT_TRUE(r.devices[2].temperature_celsius);
}

TEST(NvmlFake, AbsentFieldsAreLeftOutWithoutErrors) {
  FakeNvmlConfig fake(json{{"gpus", json::array({json{{"name", "Tesla T4"}}})}});
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(r.loaded);
  EXPECT_FALSE(r.driver_version);
  EXPECT_FALSE(r.cuda_driver_version);
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& d = r.devices[0];
  EXPECT_EQ(d.name, "Tesla T4");
  EXPECT_FALSE(d.uuid || d.pci_bus_id || d.memory_total_bytes || d.persistence_mode ||
               d.ecc_enabled || d.sm_clock_mhz || d.clock_event_reasons || d.pcie_width ||
               d.temperature_celsius || d.power_watts);
  EXPECT_TRUE(d.nvlinks.empty());
  EXPECT_TRUE(d.errors.empty());
  EXPECT_TRUE(r.errors.empty());
}

TEST(NvmlFake, EccCountsOnlyWhenEccIsOn) {
  auto config = fake_hgx(1);
  config["gpus"][0]["ecc_enabled"] = false;
  config["gpus"][0]["ecc_pending_enabled"] = true;
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].ecc_enabled, false);
  EXPECT_EQ(r.devices[0].ecc_pending_enabled, true);
  EXPECT_FALSE(r.devices[0].ecc_errors.aggregate_corrected);
}

TEST(NvmlFake, DeviceCountIsCapped) {
  auto config = fake_hgx(2);
  config["device_count"] = 1000000;
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(r.loaded);
  EXPECT_EQ(r.device_count, 1000000u);
  ASSERT_EQ(r.devices.size(), dltune::gpu::kMaxDevices);
  EXPECT_TRUE(has_error_about(r.errors, "said 1000000 devices; only the first 64 were read"));
  EXPECT_EQ(r.devices[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(r.devices[63].name);  // a device the fake does not describe: nothing supported
  EXPECT_EQ(r.devices[63].index, 63u);
}

TEST(NvmlFake, HandleFailuresKeepTheDeviceWithItsError) {
  auto config = fake_hgx(2);
  config["device_count"] = 3;  // the third is one the fake does not describe
  config["fail"] = {{"nvmlDeviceGetHandleByIndex", 15}};
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_EQ(r.devices.size(), 3u);
  for (const auto& d : r.devices) {
    EXPECT_FALSE(d.name);
    EXPECT_TRUE(has_error_about(d.errors, "nvmlDeviceGetHandleByIndex_v2: NVML_ERROR_GPU_IS_LOST"));
  }
}

TEST(NvmlFake, UnterminatedAndOverlongStringsAreCutAtTheBuffer) {
  auto config = fake_hgx(1);
  config["gpus"][0]["name"] = std::string(200, 'N');
  config["gpus"][0]["unterminated"] = true;
  config["driver_version"] = "550.54.15";
  config["unterminated"] = true;
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(r.loaded);
  ASSERT_EQ(r.devices.size(), 1u);
  // NVML_DEVICE_NAME_V2_BUFFER_SIZE is 96: the name is what fits, and no byte past it is read.
  EXPECT_EQ(r.devices[0].name, std::string(96, 'N'));
  ASSERT_TRUE(r.devices[0].uuid);
  EXPECT_EQ(r.devices[0].uuid->size(), 96u);
  EXPECT_EQ(r.devices[0].uuid->substr(0, 4), "GPU-");
  EXPECT_EQ(r.devices[0].uuid->back(), 'X');  // the fake's padding, up to the buffer's end
  ASSERT_TRUE(r.driver_version);
  EXPECT_EQ(r.driver_version->substr(0, 9), "550.54.15");
  EXPECT_LE(r.driver_version->size(), 80u);
}

TEST(NvmlFake, BytesThatAreNotPrintableAsciiCannotBreakJson) {
  auto config = fake_hgx(1);
  config["gpus"][0]["name"] = "GeForce\xc3\xa9 \x01RTX";
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, "GeForce?? ?RTX");
  EXPECT_NO_THROW((void)dltune::gpu::to_json(r).dump());
}

TEST(NvmlFake, AbsurdValuesAreUnknown) {
  auto config = fake_hgx(1);
  auto& g = config["gpus"][0];
  g["temperature_celsius"] = 4000000000u;
  g["pcie"]["width"] = 255;
  g["pcie"]["generation"] = 0;
  g["persistence_mode"] = 7;
  g["memory_total_bytes"] = 1ull << 60;
  g["clocks"]["sm_mhz"] = 4294967295u;
  g["power_milliwatts"] = 4294967295u;
  g["nvlinks"] = json::array({json{{"active", 3}}, json{{"active", true}}});
  config["cuda_driver_version"] = 7;
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& d = r.devices[0];
  EXPECT_FALSE(d.temperature_celsius);
  EXPECT_FALSE(d.pcie_width);
  EXPECT_FALSE(d.pcie_generation);
  EXPECT_EQ(d.pcie_max_width, 16u);
  EXPECT_FALSE(d.persistence_mode);
  EXPECT_FALSE(d.memory_total_bytes);
  EXPECT_FALSE(d.memory_used_bytes);
  EXPECT_FALSE(d.sm_clock_mhz);
  EXPECT_FALSE(d.power_watts);
  ASSERT_EQ(d.nvlinks.size(), 1u);  // link 0's state is neither on nor off
  EXPECT_EQ(d.nvlinks[0].link, 1u);
  EXPECT_FALSE(r.cuda_driver_version);
}

TEST(NvmlFake, MissingRequiredSymbolIsAClearError) {
  FakeNvmlConfig fake(fake_hgx(1));
  const auto r = query(DLTUNE_FAKE_NVML_NOSYMS);
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.error, std::string("required NVML symbol not found: nvmlDeviceGetCount_v2 (or "
                                 "nvmlDeviceGetCount) in ") +
                         DLTUNE_FAKE_NVML_NOSYMS);
  EXPECT_EQ(fake.log(), "");  // not initialised at all
}

TEST(NvmlFake, NonexistentLibraryGivesTheDlerrorText) {
  const auto r = query("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.library, "/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.error,
            "cannot load NVML: /nonexistent/libnvidia-ml.so.1: cannot open shared "
            "object file: No such file or directory");
}

TEST(NvmlFake, AFileThatIsNotALibraryDoesNotLoad) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "not-a-library.so";
  std::ofstream(path) << "this is not ELF\n";
  const auto r = query(path.string());
  std::filesystem::remove(path);
  EXPECT_FALSE(r.loaded);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->rfind("cannot load NVML: " + path.string(), 0), 0u) << *r.error;
}

TEST(NvmlFake, DefaultNamesAreTheDriversSoname) {
  // This host may or may not have a driver: either it loads, or the error names the soname.
  const auto r = query("");
  if (!r.loaded) {
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.library, "libnvidia-ml.so.1");
    EXPECT_NE(r.error->find("libnvidia-ml.so.1"), std::string::npos) << *r.error;
  } else {
    EXPECT_FALSE(r.library.empty());
  }
}

TEST(NvmlFake, OldLibraryIsReadThroughTheOldLayouts) {
  auto config = fake_hgx(2);
  // A function number that only the bus id text carries (the numeric fields have no function),
  // so reading the old struct with the new layout shows.
  config["gpus"][1]["pci_bus_id"] = "00000000:2A:00.1";
  FakeNvmlConfig fake(config);
  auto lib = NvmlLibrary::open(DLTUNE_FAKE_NVML_OLD);
  ASSERT_TRUE(lib) << lib.error().message();
  EXPECT_EQ((*lib)->name(Sym::kInit), "nvmlInit");
  EXPECT_EQ((*lib)->name(Sym::kPciInfo), "nvmlDeviceGetPciInfo");
  EXPECT_EQ((*lib)->version_index(Sym::kPciInfo), 2);
  EXPECT_EQ((*lib)->name(Sym::kMemoryInfo), "nvmlDeviceGetMemoryInfo");
  EXPECT_EQ((*lib)->name(Sym::kClockEventReasons), "nvmlDeviceGetCurrentClocksThrottleReasons");
  const auto r = dltune::gpu::query_nvml(**lib);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.cuda_driver_version, "12.4");
  EXPECT_EQ(r.devices[1].pci_bus_id, "0000:2a:00.1");
  EXPECT_EQ(r.devices[1].memory_total_bytes, 85520809984ull);
  EXPECT_EQ(r.devices[1].memory_used_bytes, 553648129ull);
  EXPECT_EQ(r.devices[1].clock_event_reasons, 1u);
  EXPECT_EQ(r.devices[1].nvlinks[2].remote_pci_bus_id, "0000:c2:00.0");
  EXPECT_TRUE(r.devices[1].errors.empty());
}

TEST(NvmlFake, NewLibraryResolvesTheNewestNames) {
  FakeNvmlConfig fake(fake_hgx(1));
  auto lib = NvmlLibrary::open(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(lib) << lib.error().message();
  EXPECT_EQ((*lib)->name(Sym::kInit), "nvmlInit_v2");
  EXPECT_EQ((*lib)->name(Sym::kPciInfo), "nvmlDeviceGetPciInfo_v3");
  EXPECT_EQ((*lib)->name(Sym::kMemoryInfo), "nvmlDeviceGetMemoryInfo_v2");
  EXPECT_EQ((*lib)->name(Sym::kClockEventReasons), "nvmlDeviceGetCurrentClocksEventReasons");
  EXPECT_EQ((*lib)->name(Sym::kNvLinkRemotePciInfo), "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  EXPECT_EQ((*lib)->describe(3), "NVML_ERROR_NOT_SUPPORTED (3): Not Supported");
  lib->reset();
  EXPECT_EQ(fake.log(), "nvmlInit_v2\nnvmlShutdown\n");
}

TEST(NvmlFake, MemoryHealthPowerLimitsApplicationClocksAndMigAreRead) {
  auto config = fake_hgx(4);
  config["gpus"][1]["row_remap"] = {
      {"corrected_rows", 2}, {"uncorrected_rows", 1}, {"pending", true}, {"failure", false}};
  // A V100: page retirement instead of row remapping.
  config["gpus"][2].erase("row_remap");
  config["gpus"][2]["retired_pages"] = {
      {"multiple_single_bit", 3}, {"double_bit", 1}, {"pending", true}};
  config["gpus"][2].erase("mig");
  // Capped at 400 W, application clocks lowered; MIG on with two devices at indices 0 and 3.
  config["gpus"][3]["power_limit_milliwatts"] = 400000;
  config["gpus"][3]["power_management_limit_milliwatts"] = 400000;
  config["gpus"][3]["clocks"]["app_sm_mhz"] = 1410;
  config["gpus"][3]["mig"] = {{"enabled", true},
                              {"pending", true},
                              {"max_devices", 7},
                              {"devices",
                               {{{"index", 0},
                                 {"name", "NVIDIA H100 80GB HBM3 MIG 3g.40gb"},
                                 {"uuid", "MIG-11111111-2222-3333-4444-555555555555"},
                                 {"memory_total_bytes", 42949672960ull},
                                 {"gpu_instance_id", 1},
                                 {"compute_instance_id", 0}},
                                {{"index", 3},
                                 {"name", "NVIDIA H100 80GB HBM3 MIG 1g.10gb"},
                                 {"uuid", "MIG-66666666-7777-8888-9999-000000000000"},
                                 {"memory_total_bytes", 10737418240ull},
                                 {"gpu_instance_id", 9},
                                 {"compute_instance_id", 0}}}}};
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_TRUE(r.loaded) << r.error.value_or("");
  ASSERT_EQ(r.devices.size(), 4u);
  const auto& ok = r.devices[0];
  ASSERT_TRUE(ok.row_remap);
  EXPECT_FALSE(ok.row_remap->pending);
  EXPECT_FALSE(ok.retired_pages.multiple_single_bit);  // not asked when rows are remapped
  EXPECT_EQ(ok.power_default_limit_watts, 700.0);
  EXPECT_EQ(ok.power_management_limit_watts, 700.0);
  EXPECT_EQ(ok.power_min_limit_watts, 200.0);
  EXPECT_EQ(ok.power_max_limit_watts, 700.0);
  EXPECT_EQ(ok.app_sm_clock_mhz, 1980u);
  EXPECT_EQ(ok.default_app_memory_clock_mhz, 2619u);
  EXPECT_EQ(ok.mig_enabled, false);
  EXPECT_EQ(ok.mig_pending_enabled, false);
  EXPECT_TRUE(ok.mig_devices.empty());
  EXPECT_TRUE(ok.errors.empty()) << ok.errors.front();

  const auto& remap = r.devices[1].row_remap;
  ASSERT_TRUE(remap);
  EXPECT_EQ(remap->corrected_rows, 2u);
  EXPECT_EQ(remap->uncorrected_rows, 1u);
  EXPECT_TRUE(remap->pending);
  EXPECT_FALSE(remap->failure);

  const auto& v100 = r.devices[2];
  EXPECT_FALSE(v100.row_remap);
  EXPECT_EQ(v100.retired_pages.multiple_single_bit, 3u);
  EXPECT_EQ(v100.retired_pages.double_bit, 1u);
  EXPECT_EQ(v100.retired_pages.pending, true);
  EXPECT_FALSE(v100.mig_enabled);
  EXPECT_TRUE(v100.errors.empty()) << v100.errors.front();

  const auto& mig = r.devices[3];
  EXPECT_EQ(mig.power_limit_watts, 400.0);
  EXPECT_EQ(mig.app_sm_clock_mhz, 1410u);
  EXPECT_EQ(mig.default_app_sm_clock_mhz, 1980u);
  EXPECT_EQ(mig.mig_enabled, true);
  ASSERT_EQ(mig.mig_devices.size(), 2u);
  EXPECT_EQ(mig.mig_devices[0].index, 0u);
  EXPECT_EQ(mig.mig_devices[0].name, "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
  EXPECT_EQ(mig.mig_devices[0].memory_total_bytes, 42949672960ull);
  EXPECT_EQ(mig.mig_devices[1].index, 3u);  // indices 1 and 2 hold no device
  EXPECT_EQ(mig.mig_devices[1].uuid, "MIG-66666666-7777-8888-9999-000000000000");
  EXPECT_EQ(mig.mig_devices[1].gpu_instance_id, 9u);
  EXPECT_EQ(mig.mig_devices[1].compute_instance_id, 0u);
  EXPECT_TRUE(mig.errors.empty()) << mig.errors.front();
  // What the round trip through --json (capture, env --root) keeps.
  const auto back = dltune::gpu::report_from_json(dltune::gpu::to_json(r).dump());
  EXPECT_TRUE(back.issues.empty()) << back.issues.front();
  EXPECT_EQ(dltune::gpu::to_json(back.report), dltune::gpu::to_json(r));
}

TEST(NvmlFake, AFailingRemapQueryIsKeptAsAnErrorAndThePagesAreAskedInstead) {
  auto config = fake_hgx(1);
  config["gpus"][0]["fail"] = {{"nvmlDeviceGetRemappedRows", 15}};
  config["gpus"][0]["retired_pages"] = {{"multiple_single_bit", 0}, {"double_bit", 0}};
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_FALSE(r.devices[0].row_remap);
  EXPECT_TRUE(has_error_about(r.devices[0].errors, "nvmlDeviceGetRemappedRows"));
  EXPECT_EQ(r.devices[0].retired_pages.multiple_single_bit, 0u);
  EXPECT_FALSE(r.devices[0].retired_pages.pending);  // not supported: left out
}

TEST(NvmlFake, NvLinkDetailsAndTheTopologyOfEveryPair) {
  auto config = fake_hgx(4);
  config["gpus"][1]["nvlinks"][5]["errors"] = {
      {"replay", 12}, {"recovery", 1}, {"crc_flit", 30}, {"crc_data", 2}};
  // GPUs 2 and 3: PCIe cards without NVLink behind one switch; 3 cannot reach 0 peer to peer.
  for (int i : {2, 3}) config["gpus"][i].erase("nvlinks");
  config["topology"]["level"][2][3] = config["topology"]["level"][3][2] = 10;
  for (int i : {2, 3})
    for (int k = 0; k < 4; ++k)
      if (i != k)
        config["topology"]["p2p_nvlink"][i][k] = config["topology"]["p2p_nvlink"][k][i] = 2;
  config["topology"]["p2p_read"][0][3] = config["topology"]["p2p_read"][3][0] = 5;
  FakeNvmlConfig fake(config);
  const auto r = query(DLTUNE_FAKE_NVML);
  ASSERT_EQ(r.devices.size(), 4u);
  const auto& l = r.devices[1].nvlinks[5];
  EXPECT_EQ(l.version, 4u);
  EXPECT_EQ(l.remote_type, "switch");
  EXPECT_EQ(l.replay_errors, 12u);
  EXPECT_EQ(l.recovery_errors, 1u);
  EXPECT_EQ(l.crc_flit_errors, 30u);
  EXPECT_EQ(l.crc_data_errors, 2u);
  EXPECT_EQ(dltune::gpu::nvlink_text(r.devices[1]),
            "18 links active, version 4, to NVSwitch; errors: 12 replay, 1 recovery, 32 CRC");
  // Six pairs, a < b, each with its path as nvidia-smi topo -m names it.
  ASSERT_EQ(r.topology.size(), 6u);
  std::map<std::string, std::string> path;
  for (const auto& p : r.topology) path[fmt::format("{}-{}", p.a, p.b)] = path_name(p);
  EXPECT_EQ(path["0-1"], "NV18");  // through the NVSwitches
  EXPECT_EQ(path["2-3"], "PIX");
  EXPECT_EQ(path["0-2"], "NODE");
  EXPECT_EQ(r.topology[2].a, 0u);
  EXPECT_EQ(r.topology[2].b, 3u);
  EXPECT_EQ(r.topology[2].p2p_read, false);
  EXPECT_EQ(r.topology[2].p2p_nvlink, false);
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  const auto matrix = dltune::gpu::topology_matrix(r);
  ASSERT_EQ(matrix.size(), 5u);
  EXPECT_EQ(matrix[0], "        GPU0  GPU1  GPU2  GPU3");
  EXPECT_EQ(matrix[1], "GPU0       X  NV18  NODE  NODE");
  EXPECT_EQ(matrix[3], "GPU2    NODE  NODE     X   PIX");
  const auto back = dltune::gpu::report_from_json(dltune::gpu::to_json(r).dump());
  EXPECT_TRUE(back.issues.empty()) << back.issues.front();
  EXPECT_EQ(dltune::gpu::to_json(back.report), dltune::gpu::to_json(r));
}

}  // namespace nvml_test

#pragma once
// Describing the fake libnvidia-ml.so's system to it (tests/fakes/nvml/README.md).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"

namespace dltune::testing {

// How often the fake (loaded in this process by the code under test, from DLTUNE_FAKE_NVML) saw
// `fn` called since its last init from zero (tests/fakes/nvml/README.md, fake_nvml_calls).
inline unsigned long long fake_nvml_calls(const char* fn) {
  void* lib = ::dlopen(DLTUNE_FAKE_NVML, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr) << "the fake is not loaded";
  if (lib == nullptr) return 0;
  using CallsFn = unsigned long long (*)(const char*);
  const auto calls = reinterpret_cast<CallsFn>(::dlsym(lib, "fake_nvml_calls"));
  EXPECT_NE(calls, nullptr);
  const auto n = calls != nullptr ? calls(fn) : 0;
  ::dlclose(lib);
  return n;
}

// Bus numbers of the eight GPUs of an HGX H100 board, as NVML writes their ids.
inline constexpr unsigned kHgxBuses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

// A realistic H100 SXM as the fake's config describes it; `bus` is its PCI bus number.
inline nlohmann::json fake_h100(unsigned index, unsigned bus) {
  nlohmann::json links = nlohmann::json::array();
  for (unsigned l = 0; l < 18; ++l)  // 18 NVLink 4 links, each to one of four NVSwitches
    links.push_back(
        {{"active", true},
         {"remote_pci_bus_id", fmt::format("00000000:{:02X}:00.0", 0xc0 + l % 4)},
         {"version", 4},
         {"remote_type", 2},  // NVML_NVLINK_DEVICE_TYPE_SWITCH
         {"errors", {{"replay", 0}, {"recovery", 0}, {"crc_flit", 0}, {"crc_data", 0}}}});
  return {
      {"name", "NVIDIA H100 80GB HBM3"},
      {"uuid", fmt::format("GPU-{:08x}-aaaa-bbbb-cccc-{:012x}", 0x8c7d1f00 + index, index)},
      {"pci_bus_id", fmt::format("00000000:{:02X}:00.0", bus)},
      {"memory_total_bytes", 85520809984ull},
      {"memory_used_bytes", 553648128ull + index},
      {"persistence_mode", index % 2 == 0},
      {"ecc_enabled", true},
      {"ecc_errors",
       {{"volatile_corrected", 0},
        {"volatile_uncorrected", 0},
        {"aggregate_corrected", index},
        {"aggregate_uncorrected", 0}}},
      {"row_remap",
       {{"corrected_rows", 0}, {"uncorrected_rows", 0}, {"pending", false}, {"failure", false}}},
      {"clocks",
       {{"sm_mhz", 345 + index},
        {"memory_mhz", 2619},
        {"max_sm_mhz", 1980},
        {"max_memory_mhz", 2619},
        {"app_sm_mhz", 1980},
        {"app_memory_mhz", 2619},
        {"default_app_sm_mhz", 1980},
        {"default_app_memory_mhz", 2619}}},
      {"clock_event_reasons", 1},  // GpuIdle
      {"pcie", {{"generation", 5}, {"width", 16}, {"max_generation", 5}, {"max_width", 16}}},
      {"temperature_celsius", 30 + index},
      {"power_milliwatts", 69000 + index},
      {"power_limit_milliwatts", 700000},
      {"power_management_limit_milliwatts", 700000},
      {"power_default_limit_milliwatts", 700000},
      {"power_limit_constraints_milliwatts", {{"min", 200000}, {"max", 700000}}},
      {"mig", {{"enabled", false}, {"pending", false}, {"max_devices", 7}}},
      {"nvlinks", links},
  };
}

inline nlohmann::json fake_hgx(unsigned gpus = 8) {
  nlohmann::json j = {{"driver_version", "550.54.15"},
                      {"nvml_version", "12.550.54.15"},
                      {"cuda_driver_version", 12040},
                      {"gpus", nlohmann::json::array()}};
  for (unsigned i = 0; i < gpus; ++i) j["gpus"].push_back(fake_h100(i, kHgxBuses[i % 8]));
  // GPUs 0-3 on NUMA node 0, 4-7 on node 1 (nvmlGpuTopologyLevel_t NODE 40, SYSTEM 50); peer
  // access over NVLink and PCIe works between all (nvmlGpuP2PStatus_t OK 0).
  nlohmann::json level = nlohmann::json::array(), p2p = nlohmann::json::array();
  for (unsigned a = 0; a < gpus; ++a) {
    level.push_back(nlohmann::json::array());
    p2p.push_back(nlohmann::json::array());
    for (unsigned b = 0; b < gpus; ++b) {
      level[a].push_back(a == b ? 0 : (a / 4 == b / 4 ? 40 : 50));
      p2p[a].push_back(0);
    }
  }
  j["topology"] = {{"level", level}, {"p2p_nvlink", p2p}, {"p2p_read", p2p}};
  return j;
}

// Writes `config` to a file and points FAKE_NVML_CONFIG (and FAKE_NVML_LOG, FAKE_NVML_STATE) at
// it for as long as it lives.
class FakeNvmlConfig {
 public:
  explicit FakeNvmlConfig(const nlohmann::json& config) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto base =
        std::filesystem::path(::testing::TempDir()) /
        fmt::format("fake_nvml_{}_{}_{}", ::getpid(), test->test_suite_name(), test->name());
    path_ = base.string() + ".json";
    log_ = base.string() + ".log";
    state_ = base.string() + ".state.json";
    std::ofstream(path_) << config.dump();
    std::filesystem::remove(log_);
    std::filesystem::remove(state_);
    ::setenv("FAKE_NVML_CONFIG", path_.c_str(), 1);
    ::setenv("FAKE_NVML_LOG", log_.c_str(), 1);
    ::setenv("FAKE_NVML_STATE", state_.c_str(), 1);
  }
  ~FakeNvmlConfig() {
    ::unsetenv("FAKE_NVML_CONFIG");
    ::unsetenv("FAKE_NVML_LOG");
    ::unsetenv("FAKE_NVML_STATE");
    std::filesystem::remove(path_);
    std::filesystem::remove(log_);
    std::filesystem::remove(state_);
  }
  FakeNvmlConfig(const FakeNvmlConfig&) = delete;
  FakeNvmlConfig& operator=(const FakeNvmlConfig&) = delete;

  const std::string& path() const { return path_; }
  const std::string& log_path() const { return log_; }
  // FAKE_NVML_STATE: what the set-calls changed, per GPU UUID (tests/fakes/nvml/README.md).
  const std::string& state_path() const { return state_; }
  nlohmann::json state() const {
    std::ifstream in(state_);
    if (!in) return nlohmann::json::object();
    return nlohmann::json::parse(in, nullptr, false);
  }
  // Changes a GPU's persistence mode behind dltune's back, as another tool would.
  void set_persistence(const std::string& uuid, bool on) const {
    auto j = state();
    j[uuid]["persistence_mode"] = on;
    std::ofstream(state_) << j.dump();
  }
  // The init and shutdown calls the fake saw, one a line.
  std::string log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::string path_;
  std::string log_;
  std::string state_;
};

}  // namespace dltune::testing

// `dltune env --json` as a user runs it, the NVML library named by DLTUNE_NVML_LIBRARY: the fake
// one (tests/fakes/nvml), and one without NVML's symbols.
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/gpu/fake_nvml_config.hpp"

namespace env_nvml_cli_test {

using nlohmann::json;

namespace {

// `dltune env --json` with DLTUNE_NVML_LIBRARY=`library`, the rest of the environment as ours.
dltune::testing::RunResult env_json(const std::string& library) {
  return dltune::testing::run({DLTUNE_BINARY, "env", "--json"}, {{"DLTUNE_NVML_LIBRARY", library}});
}

}  // namespace

TEST(EnvCommand, ShowsTheFakeNvmlGpus) {
  dltune::testing::FakeNvmlConfig fake(dltune::testing::fake_hgx(8));
  const auto r = env_json(DLTUNE_FAKE_NVML);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto& out = r.out;
  const auto j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out.substr(0, 500);
  const auto& nvml = j["gpu"]["nvml"];
  EXPECT_EQ(nvml["loaded"], true);
  EXPECT_EQ(nvml["library"], DLTUNE_FAKE_NVML);
  EXPECT_EQ(nvml["driver_version"], "550.54.15");
  EXPECT_EQ(nvml["cuda_driver_version"], "12.4");
  ASSERT_EQ(nvml["devices"].size(), 8u);
  EXPECT_EQ(nvml["devices"][7]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(nvml["devices"][7]["pci_bus_id"], "0000:db:00.0");
  EXPECT_EQ(nvml["devices"][7]["nvlinks"].size(), 18u);
  EXPECT_EQ(nvml["devices"][7]["nvlinks"][0]["remote_type"], "switch");
  ASSERT_EQ(nvml["topology"].size(), 28u);  // every pair of 8
  EXPECT_EQ(nvml["topology"][0]["path"], "NV18");
  EXPECT_EQ(nvml["topology"][0]["level"], 40);
  EXPECT_EQ(j["gpu"]["nvml_source"], "live");
  EXPECT_EQ(j["gpu"]["driver"]["user_library_version"], "550.54.15");
  EXPECT_EQ(fake.log(), "nvmlInit_v2\nnvmlShutdown\n");
}

TEST(EnvCommand, ABrokenLibraryLeavesTheErrorAndTheRest) {
  const auto r = env_json(DLTUNE_FAKE_NVML_NOSYMS);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto& out = r.out;
  const auto j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out.substr(0, 500);
  EXPECT_EQ(j["gpu"]["nvml"]["loaded"], false);
  EXPECT_NE(j["gpu"]["nvml"]["error"].get<std::string>().find("required NVML symbol not found"),
            std::string::npos);
  EXPECT_TRUE(j["gpu"]["devices"].is_array());
}

TEST(EnvCommand, SaysTheMemoryHealthPowerLimitsAndMigOfEachGpu) {
  auto config = dltune::testing::fake_hgx(2);
  config["gpus"][1]["row_remap"] = {
      {"corrected_rows", 0}, {"uncorrected_rows", 1}, {"pending", true}, {"failure", false}};
  config["gpus"][1]["power_limit_milliwatts"] = 450000;
  config["gpus"][1]["power_management_limit_milliwatts"] = 450000;
  config["gpus"][1]["mig"] = {{"enabled", true},
                              {"pending", true},
                              {"max_devices", 7},
                              {"devices",
                               {{{"name", "NVIDIA H100 80GB HBM3 MIG 7g.80gb"},
                                 {"uuid", "MIG-11111111-2222-3333-4444-555555555555"}}}}};
  dltune::testing::FakeNvmlConfig fake(config);
  const auto r =
      dltune::testing::run({DLTUNE_BINARY, "env"}, {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // "    Remapped rows  0 rows ...": a label, spaces to the column, the value.
  auto row = [&](const std::string& label, const std::string& value) {
    for (auto at = r.out.find("    " + label + "  "); at != std::string::npos;
         at = r.out.find("    " + label + "  ", at + 1)) {
      const auto eol = r.out.find('\n', at);
      if (r.out.substr(at, eol - at).find(value) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(row("Remapped rows",
                  "0 rows for corrected, 1 for uncorrected errors; a remap waits for a GPU reset"))
      << r.out;
  EXPECT_TRUE(row("Power", "(limit 450 W, default 700 W, settable 200-700 W)"));
  EXPECT_TRUE(row("MIG",
                  "on, 1 device: NVIDIA H100 80GB HBM3 MIG 7g.80gb "
                  "MIG-11111111-2222-3333-4444-555555555555"));
  EXPECT_TRUE(row("MIG", "off"));  // GPU 0
  EXPECT_TRUE(row("NVLink", "18 links active, version 4, to NVSwitch; errors: 0 replay"));
  EXPECT_NE(r.out.find("GPU topology (nvidia-smi topo -m)"), std::string::npos);
  EXPECT_NE(r.out.find("GPU1    NV18     X"), std::string::npos) << r.out;
  // check judges the same facts: the pending remap is critical, the cap and MIG warnings.
  const auto c = dltune::testing::run(
      {DLTUNE_BINARY, "check", "--json", "--only", "gpu.ecc,gpu.power_limit,gpu.mig"},
      {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}});
  EXPECT_EQ(c.exit_code, 2) << c.err;
  const auto j = json::parse(c.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << c.out.substr(0, 500);
  std::map<std::string, std::string> seen;  // "id GPU" -> severity
  for (const auto& f : j["findings"])
    seen[f["id"].get<std::string>() + " " + f["summary"].get<std::string>().substr(0, 5)] =
        f["severity"];
  EXPECT_EQ(seen["gpu.ecc GPU 0"], "ok");
  EXPECT_EQ(seen["gpu.ecc GPU 1"], "critical");
  EXPECT_EQ(seen["gpu.power_limit GPU 0"], "ok");
  EXPECT_EQ(seen["gpu.power_limit GPU 1"], "warn");
  EXPECT_EQ(seen["gpu.mig GPU 1"], "warn");
}

}  // namespace env_nvml_cli_test

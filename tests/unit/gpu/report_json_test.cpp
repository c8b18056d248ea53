// gpu::Report to JSON and back: what `capture` writes and `env --root` reads.
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "fake_nvml_config.hpp"
#include "gpu/nvml_backend.hpp"
#include "gpu/report_json.hpp"
#include "support/build_paths.hpp"

namespace report_json_test {

using dltune::gpu::report_from_json;
using dltune::gpu::to_json;

TEST(ReportJson, RoundTripKeepsEveryField) {
  auto config = dltune::testing::fake_hgx(8);
  config["gpus"][3]["fail"] = {{"nvmlDeviceGetUUID", 15}};
  config["gpus"][5]["nvlinks"] = nlohmann::json::array({{{"active", false}}});
  dltune::testing::FakeNvmlConfig fake(config);
  const auto r = dltune::gpu::NvmlBackend(DLTUNE_FAKE_NVML).query();
  ASSERT_TRUE(r.loaded);
  const auto j = to_json(r);
  const auto back = report_from_json(j.dump());
  EXPECT_TRUE(back.issues.empty()) << back.issues.front();
  EXPECT_EQ(to_json(back.report), j);
  EXPECT_EQ(back.report.devices[3].errors.size(), 1u);
  EXPECT_EQ(back.report.devices[5].nvlinks.size(), 1u);
  EXPECT_FALSE(back.report.devices[5].nvlinks[0].active);
}

TEST(ReportJson, ShapeOfADevice) {
  dltune::testing::FakeNvmlConfig fake(dltune::testing::fake_hgx(1));
  const auto j = to_json(dltune::gpu::NvmlBackend(DLTUNE_FAKE_NVML).query());
  EXPECT_EQ(j["loaded"], true);
  EXPECT_EQ(j["cuda_driver_version"], "12.4");
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["pci_bus_id"], "0000:18:00.0");
  EXPECT_EQ(d["memory_total_bytes"], 85520809984ull);
  EXPECT_EQ(d["ecc"]["enabled"], true);
  EXPECT_EQ(d["ecc"]["aggregate_corrected"], 0);
  EXPECT_EQ(d["clocks"]["max_sm_mhz"], 1980);
  EXPECT_EQ(d["clock_event_reasons"]["names"], nlohmann::ordered_json::array({"GpuIdle"}));
  EXPECT_EQ(d["pcie"]["max_generation"], 5);
  EXPECT_EQ(d["power_limit_watts"], 700.0);
  EXPECT_EQ(d["nvlinks"].size(), 18u);
  EXPECT_TRUE(d["errors"].empty());
}

TEST(ReportJson, NotLoadedKeepsTheError) {
  const auto j = to_json(dltune::gpu::NvmlBackend("/nonexistent/libnvidia-ml.so.1").query());
  EXPECT_EQ(j["loaded"], false);
  EXPECT_EQ(j["library"], "/nonexistent/libnvidia-ml.so.1");
  EXPECT_NE(j["error"].get<std::string>().find("cannot open shared object file"),
            std::string::npos);
  EXPECT_TRUE(j["devices"].empty());
  const auto back = report_from_json(j.dump());
  EXPECT_FALSE(back.report.loaded);
  EXPECT_EQ(back.report.error, j["error"]);
}

TEST(ReportJson, GarbageIsAnIssueNotACrash) {
  for (const char* text : {"", "not json{", "[]", "42", "{\"devices\": {}}", "\xff\xfe{"}) {
    const auto r = report_from_json(text);
    EXPECT_FALSE(r.report.loaded) << text;
    EXPECT_FALSE(r.issues.empty()) << text;
    EXPECT_TRUE(r.report.devices.empty()) << text;
  }
}

TEST(ReportJson, FieldsOfTheWrongTypeAreNamedAndSkipped) {
  const auto r = report_from_json(R"({
    "loaded": true, "library": 5, "driver_version": "550.54.15", "device_count": -1,
    "devices": [
      7,
      {"index": 1, "name": 3, "uuid": "GPU-1", "memory_total_bytes": -5,
       "clocks": {"sm_mhz": "fast", "max_sm_mhz": 1980}, "pcie": [],
       "nvlinks": [{"link": 0}, {"link": 1, "active": true, "remote_pci_bus_id": 4}, "x"],
       "errors": ["kept", 5]}
    ]})");
  EXPECT_TRUE(r.report.loaded);
  EXPECT_EQ(r.report.driver_version, "550.54.15");
  EXPECT_FALSE(r.report.device_count);
  ASSERT_EQ(r.report.devices.size(), 1u);
  const auto& d = r.report.devices[0];
  EXPECT_EQ(d.index, 1u);
  EXPECT_FALSE(d.name);
  EXPECT_EQ(d.uuid, "GPU-1");
  EXPECT_FALSE(d.memory_total_bytes);
  EXPECT_FALSE(d.sm_clock_mhz);
  EXPECT_EQ(d.max_sm_clock_mhz, 1980u);
  ASSERT_EQ(d.nvlinks.size(), 1u);  // link 0 has no state; link 1's remote id is not a string
  EXPECT_EQ(d.nvlinks[0].link, 1u);
  EXPECT_FALSE(d.nvlinks[0].remote_pci_bus_id);
  EXPECT_EQ(d.errors, std::vector<std::string>{"kept"});
  const auto has = [&](const std::string& s) {
    for (const auto& i : r.issues)
      if (i == s) return true;
    return false;
  };
  EXPECT_TRUE(has("library: expected a string"));
  EXPECT_TRUE(has("device_count: expected an unsigned integer"));
  EXPECT_TRUE(has("devices[0]: expected an object"));
  EXPECT_TRUE(has("devices[1].name: expected a string"));
  EXPECT_TRUE(has("devices[1].clocks.sm_mhz: expected an unsigned integer"));
  EXPECT_TRUE(has("devices[1].pcie: expected an object"));
  EXPECT_TRUE(has("devices[1].nvlinks[2]: expected an object"));
}

}  // namespace report_json_test

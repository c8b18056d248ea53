// `dltune serve --once` (text and JSON) on this host with the fake libnvidia-ml.so, and the
// refusals of bad input. The HTTP side is tested live (tests/integration/serve_live_test.cpp).
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../gpu/fake_nvml_config.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/serve/exposition_parser.hpp"

namespace serve_cli_test {

using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using dltune::testing::run;

namespace {

const std::map<std::string, std::string> kFakeNvml = {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}};

TEST(ServeCli, OncePrintsTheHostItsGpusAndTheCheck) {
  auto config = fake_hgx(2);
  config["gpus"][0]["utilization"] = {{"gpu", 87}, {"memory", 40}};
  config["gpus"][0]["xid_events"] = {79};
  config["gpus"][0]["pcie_replay_count"] = 3;
  config["gpus"][0]["memory_used_bytes"] = 1073741824;
  config["gpus"][0]["memory_reserved_bytes"] = 536870912;
  config["gpus"][1]["minor_number"] = 6;  // /dev/nvidia6: not NVML's order
  config["gpus"][0]["ecc_errors"]["volatile_corrected"] = 4;
  config["gpus"][0]["ecc_errors"]["volatile_uncorrected"] = 1;
  FakeNvmlConfig fake(config);
  const auto r = run({DLTUNE_BINARY, "serve", "--once", "--interval", "200ms"}, kFakeNvml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = dltune::serve::testing::parse_exposition(r.out);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << r.out;
  EXPECT_EQ(e.find("dltune_nvml_up")->value_text, "1");
  using dltune::serve::testing::gpu_labels;
  const auto host = dltune::serve::testing::this_hostname();
  const auto g0 = gpu_labels(0, config["gpus"][0]["uuid"], config["gpus"][0]["name"], host);
  for (const auto* name : {"dltune_gpu_memory_total_bytes", "dltune_gpu_utilization_ratio",
                           "dltune_gpu_power_watts", "dltune_gpu_pcie_replays_total"})
    ASSERT_TRUE(e.find(name, g0)) << name << "\n" << r.out;
  EXPECT_EQ(e.find("dltune_gpu_memory_total_bytes", g0)->value_text, "85520809984");
  EXPECT_EQ(e.find("dltune_gpu_utilization_ratio", g0)->value_text, "0.87");
  EXPECT_EQ(e.find("dltune_gpu_power_watts", g0)->value_text, "69");
  EXPECT_EQ(e.find("dltune_gpu_pcie_replays_total", g0)->value_text, "3");
  // NVML's free (nvmlMemory_v2_t): total less used and the driver's reserve.
  ASSERT_TRUE(e.find("dltune_gpu_memory_free_bytes", g0)) << r.out;
  EXPECT_EQ(e.find("dltune_gpu_memory_free_bytes", g0)->value_text,
            std::to_string(85520809984ULL - 1073741824ULL - 536870912ULL));
  // The device node, as dcgm-exporter's `device` label: nvmlDeviceGetMinorNumber.
  auto node0 = g0;
  node0["device"] = "nvidia0";
  EXPECT_EQ(e.all("dltune_gpu_info", node0).size(), 1u) << r.out;
  auto node1 = gpu_labels(1, config["gpus"][1]["uuid"], config["gpus"][1]["name"], host);
  node1["device"] = "nvidia6";
  EXPECT_EQ(e.all("dltune_gpu_info", node1).size(), 1u) << r.out;
  for (const auto& [type, count] :
       std::map<std::string, std::string>{{"corrected", "4"}, {"uncorrected", "1"}}) {
    auto l = g0;
    l["type"] = type;
    const auto* ecc = e.find("dltune_gpu_ecc_errors_total", l);
    ASSERT_TRUE(ecc) << type << "\n" << r.out;
    EXPECT_EQ(ecc->value_text, count) << type;
  }
  // Registered for Xid events: a count (events are drained at NVML's next reading, a second
  // later: the live test sees them), and no last Xid before one came.
  ASSERT_TRUE(e.find("dltune_gpu_xid_errors_total", g0));
  EXPECT_FALSE(e.find("dltune_gpu_xid_errors_total",
                      gpu_labels(1, config["gpus"][1]["uuid"], config["gpus"][1]["name"], host)))
      << "a GPU that refuses event registration has no count";
  auto idle = g0;
  idle["reason"] = "gpu_idle";
  EXPECT_EQ(e.find("dltune_gpu_throttled", idle)->value_text, "1");
  EXPECT_EQ(e.all("dltune_gpu_info").size(), 2u);
  EXPECT_EQ(e.find("dltune_samples_total")->value_text, "2");
  EXPECT_EQ(e.find("dltune_scrapes_total")->value_text, "0");
  ASSERT_TRUE(e.find("dltune_check_up")) << r.out;
  EXPECT_EQ(e.find("dltune_check_up")->value_text, "1") << r.err;
  EXPECT_EQ(e.all("dltune_check_findings").size(), 4u);
  EXPECT_GT(std::stod(e.find("dltune_memory_total_bytes")->value_text), 0);
}

// A GPU that NVML says is lost: the check cannot judge its ECC or clocks, which serve exports as
// unknown with the profile's stakes, and gpu.health is critical for it.
TEST(ServeCli, OnceExportsWhatTheCheckCouldNotJudge) {
  auto config = fake_hgx(2);
  config["gpus"][1]["fail"] = {{"nvmlDeviceGetMemoryInfo", 15}};  // NVML_ERROR_GPU_IS_LOST
  FakeNvmlConfig fake(config);
  const auto r = run({DLTUNE_BINARY, "serve", "--once", "--interval", "200ms"}, kFakeNvml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = dltune::serve::testing::parse_exposition(r.out);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << r.out;
  ASSERT_EQ(e.find("dltune_check_up")->value_text, "1") << r.err;
  const auto* ecc =
      e.find("dltune_check_unknown", {{"id", "gpu.ecc"}, {"stakes", "critical"}, {"area", "gpu"}});
  ASSERT_TRUE(ecc) << r.out;
  EXPECT_EQ(ecc->value_text, "1");
  EXPECT_GE(std::stoi(e.find("dltune_check_unknown_findings")->value_text), 2) << r.out;
  EXPECT_EQ(e.all("dltune_check_finding", {{"id", "gpu.health"}, {"severity", "critical"}}).size(),
            1u)
      << r.out;
}

// A host with AMD GPUs alone (the amd-mi210x4 tree): their series come from amdgpu's sysfs,
// NVML is not up, and what sysfs does not give has no series.
TEST(ServeCli, OnceOnAnAmdHostReadsAmdgpuSysfs) {
  const auto r = run({DLTUNE_BINARY, "serve", "--once", "--interval", "200ms", "--no-check",
                      "--root", std::string(DLTUNE_FIXTURES) + "/roots/amd-mi210x4"},
                     {{"DLTUNE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = dltune::serve::testing::parse_exposition(r.out);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << r.out;
  EXPECT_EQ(e.find("dltune_nvml_up")->value_text, "0");
  EXPECT_EQ(e.all("dltune_gpu_info").size(), 4u);
  const auto g3 = dltune::serve::testing::gpu_labels(3, "46f0a3db9e18c27a", "AMD Instinct MI210",
                                                     "mi210-node-01");
  auto info = g3;
  info["name"] = "AMD Instinct MI210";
  info["pci_bus_id"] = "0000:63:00.0";
  info["vendor"] = "amd";
  ASSERT_TRUE(e.find("dltune_gpu_info", info)) << r.out;
  EXPECT_EQ(e.find("dltune_gpu_utilization_ratio", g3)->value_text, "0.96");
  EXPECT_EQ(e.find("dltune_gpu_memory_used_bytes", g3)->value_text, "53687091200");
  EXPECT_EQ(e.find("dltune_gpu_power_watts", g3)->value_text, "257");
  EXPECT_EQ(e.find("dltune_gpu_temperature_celsius", g3)->value_text, "81");  // the junction
  auto ue = g3;
  ue["type"] = "uncorrected";
  ASSERT_TRUE(e.find("dltune_gpu_ecc_errors_total", ue)) << r.out;
  EXPECT_EQ(e.find("dltune_gpu_ecc_errors_total", ue)->value_text, "1");
  EXPECT_TRUE(e.all("dltune_gpu_xid_errors_total").empty());
  EXPECT_TRUE(e.all("dltune_gpu_compute_processes").empty());
  // Every card bound to amdgpu answers through its sysfs: up, by its sysfs address.
  const auto up = e.all("dltune_gpu_up");
  ASSERT_EQ(up.size(), 4u) << r.out;
  for (const auto* s : up) EXPECT_EQ(s->value_text, "1") << s->labels.at("pci_bus_id");
  EXPECT_EQ(e.all("dltune_gpu_up", {{"pci_bus_id", "0000:63:00.0"}, {"vendor", "amd"}}).size(), 1u);
}

// An 8-GPU host (the gpu8-numa2-cgv2 tree's PCI bus) whose NVML lists seven: the eighth, which
// fell off the bus, is 0 under the address NVML would give it; the others are 1. With NVML not
// loading at all, all eight are 0.
TEST(ServeCli, AGpuOnPciThatNvmlDoesNotListIsDown) {
  const std::vector<std::string> argv = {
      DLTUNE_BINARY, "serve",
      "--once",      "--interval",
      "200ms",       "--no-check",
      "--root",      std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2"};
  FakeNvmlConfig fake(fake_hgx(7));
  auto r = run(argv, kFakeNvml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto e = dltune::serve::testing::parse_exposition(r.out);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << r.out;
  const auto up = e.all("dltune_gpu_up");
  ASSERT_EQ(up.size(), 8u) << r.out;
  std::vector<std::string> down;
  for (const auto* s : up)
    if (s->value_text == "0") down.push_back(s->labels.at("pci_bus_id"));
  EXPECT_EQ(down, std::vector<std::string>{"00000000:DB:00.0"});
  EXPECT_EQ(e.all("dltune_gpu_info").size(), 7u);

  auto broken = fake_hgx(7);
  broken["init_error"] = 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  FakeNvmlConfig none(broken);
  r = run(argv, kFakeNvml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e = dltune::serve::testing::parse_exposition(r.out);
  ASSERT_EQ(e.all("dltune_gpu_up").size(), 8u) << r.out;
  for (const auto* s : e.all("dltune_gpu_up")) EXPECT_EQ(s->value_text, "0");
  EXPECT_EQ(e.find("dltune_nvml_up")->value_text, "0");
}

TEST(ServeCli, OnceJsonHasTheSameFamiliesAndEveryKeyIsDocumented) {
  const auto text =
      run({DLTUNE_BINARY, "serve", "--once", "--interval", "100ms", "--no-gpus", "--no-check"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto r = run({DLTUNE_BINARY, "serve", "--once", "--json", "--interval", "100ms",
                      "--no-gpus", "--no-check"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "dltune.serve/1");
  std::vector<std::string> names;
  for (const auto& f : j["families"]) names.push_back(f["name"]);
  EXPECT_EQ(names, dltune::serve::testing::parse_exposition(text.out).families);
  // docs/json.md: every key of the schema in its section.
  std::ifstream in(std::string(DLTUNE_SOURCE_DIR) + "/docs/json.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const auto at = doc.find("schema `dltune.serve/1`");
  ASSERT_NE(at, std::string::npos);
  const auto section = doc.substr(at, doc.find("\n## ", at) - at);
  for (const auto* key :
       {"schema", "families", "name", "type", "help", "samples", "labels", "value"})
    EXPECT_NE(section.find(std::string("`") + key + "`"), std::string::npos) << key;
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  for (const auto& [k, v] : j["families"][0].items()) keys.insert(k);
  for (const auto& [k, v] : j["families"][0]["samples"][0].items()) keys.insert(k);
  for (const auto& k : keys) EXPECT_NE(section.find("`" + k + "`"), std::string::npos) << k;
}

TEST(ServeCli, ReadsAHostTreeGivenWithRoot) {
  const std::string root = std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2";
  const auto r =
      run({DLTUNE_BINARY, "serve", "--once", "--no-gpus", "--interval", "100ms", "--root", root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = dltune::serve::testing::parse_exposition(r.out);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  ASSERT_TRUE(e.find("dltune_memory_total_bytes"));
  EXPECT_EQ(e.find("dltune_memory_total_bytes")->value_text,
            std::to_string(1056412596ull * 1024));  // the tree's MemTotal, not this VM's
  ASSERT_TRUE(e.find("dltune_check_up"));
  EXPECT_EQ(e.find("dltune_check_up")->value_text, "1");
  // What the tree lacks is said once, on stderr.
  EXPECT_NE(r.err.find("no /proc/diskstats"), std::string::npos) << r.err;
}

TEST(ServeCli, RefusesBadInput) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--listen", "9464"}, "expected HOST:PORT"},
      {{"--listen", "127.0.0.1:99999"}, "expected HOST:PORT"},
      {{"--listen", "::1:9464"}, "expected HOST:PORT"},
      // Not an address of this host (TEST-NET-1): it cannot be bound, which is the user's to fix.
      {{"--no-check", "--no-gpus", "--listen", "192.0.2.1:9464"}, "192.0.2.1:9464"},
      // Checked with --once too, where no socket is opened.
      {{"--once", "--listen", "1.2.3:99999"}, "expected HOST:PORT"},
      {{"--once", "--max-connections", "0"}, "--max-connections 0: too small (at least 1)"},
      {{"--interval", "10ms"}, "--interval 10ms: too short (at least 100ms)"},
      {{"--check-interval", "0s"}, "--check-interval 0s: too short (at least 1s)"},
      {{"--check-interval", "2d"}, "--check-interval 2d: too long (at most 1d)"},
      {{"--json"}, "--json goes with --once"},
      {{"--max-connections", "-5"}, "--max-connections -5: too small (at least 1)"},
      {{"--max-connections", "many"}, "expected a whole number from 1 to 256"},
      {{"--cgroup", "relative/path"}, "absolute cgroup path"},
      {{"--profile", "no-such-profile"}, "--profile"},
      {{"--no-check", "--profile", "training"}, "do not go together"},
      {{"--root", "/nonexistent-tree"}, "--root"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "serve"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << c.args.front() << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(ServeCli, HelpShowsAScrapeConfigAndCurl) {
  const auto r = run({DLTUNE_BINARY, "serve", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  for (const auto* s : {"scrape_configs:", "curl -s http://127.0.0.1:9464/metrics", "/healthz",
                        "--max-connections", "promtool check metrics"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

}  // namespace

}  // namespace serve_cli_test

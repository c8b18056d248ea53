// serve's exposition of a synthetic snapshot: each family's HELP and TYPE, the values in base
// units by hand-computable numbers, absent values leaving no series, label escaping with hostile
// names, the throttle reason bits and the check findings; the whole text read back by a strict
// parser (exposition_parser.hpp).
#include <gtest/gtest.h>

#include "gpu/nvml_types.hpp"
#include "serve/exposition.hpp"
#include "unit/serve/exposition_parser.hpp"
#include "unit/serve/snapshot_fixture.hpp"

namespace dltune::serve::exposition_test {
namespace {

using testing::full_fixture;
using testing::parse_exposition;

std::string render_text(const Snapshot& s, std::uint64_t scrapes = 1) {
  std::string out;
  TextSink sink(out);
  render(s, sink);
  render_scrapes(scrapes, sink);
  return out;
}

// The text of one sample line, as written.
void expect_line(const std::string& text, const std::string& line) {
  EXPECT_NE(text.find("\n" + line + "\n"), std::string::npos) << "no line: " << line;
}

TEST(Exposition, IsWellFormedAndHasHelpAndTypeForEveryFamily) {
  const auto f = full_fixture();
  const auto text = render_text(f.snapshot());
  const auto e = parse_exposition(text);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << "\n" << text;
  for (const auto& name : e.families) {
    EXPECT_TRUE(name.starts_with("dltune_")) << name;
    EXPECT_FALSE(e.help.at(name).empty()) << name;
  }
  EXPECT_GE(e.families.size(), 85u);
  EXPECT_EQ(e.type.at("dltune_cpu_seconds_total"), "counter");
  EXPECT_EQ(e.type.at("dltune_memory_total_bytes"), "gauge");
  EXPECT_EQ(e.type.at("dltune_gpu_energy_joules_total"), "counter");
  EXPECT_EQ(e.type.at("dltune_job_memory_limit_bytes"), "gauge");
  EXPECT_EQ(e.type.at("dltune_check_finding"), "gauge");
  EXPECT_EQ(e.families.front(), "dltune_build_info");
  EXPECT_EQ(e.families.back(), "dltune_scrapes_total");
  expect_line(text, "# TYPE dltune_scrapes_total counter");
}

TEST(Exposition, HostCountersInBaseUnits) {
  const auto f = full_fixture();
  const auto text = render_text(f.snapshot());
  // 12345 ticks at 100 per second
  expect_line(text, R"(dltune_cpu_seconds_total{cpu="0",mode="user"} 123.45)");
  expect_line(text, R"(dltune_cpu_seconds_total{cpu="1",mode="user"} 0.5)");
  expect_line(text, R"(dltune_cpu_seconds_total{cpu="0",mode="idle"} 1000)");
  expect_line(text, R"(dltune_cpu_seconds_total{cpu="0",mode="steal"} 0.02)");
  expect_line(text, "dltune_cpus 2");
  expect_line(text, "dltune_context_switches_total 10742364");
  expect_line(text, "dltune_forks_total 155580");
  expect_line(text, "dltune_procs_blocked 1");
  expect_line(text, "dltune_memory_total_bytes 25276063744");  // 24683656 kB
  expect_line(text, "dltune_memory_available_bytes 23670792192");
  expect_line(text, "dltune_swap_total_bytes 1073741824");
  expect_line(text, "dltune_swap_in_bytes_total 12288");   // 3 pages of 4096
  expect_line(text, "dltune_swap_out_bytes_total 20480");  // 5 pages
  expect_line(text, "dltune_major_page_faults_total 25514");
  expect_line(text, "dltune_oom_kills_total 29");
  // PSI total= is in microseconds
  expect_line(text,
              R"(dltune_pressure_stall_seconds_total{resource="cpu",kind="some"} 6899.256696)");
  expect_line(text, R"(dltune_pressure_stall_seconds_total{resource="cpu",kind="full"} 0)");
  expect_line(text,
              R"(dltune_pressure_stall_seconds_total{resource="memory",kind="some"} 76.118475)");
  // 512-byte sectors; io_ms in milliseconds
  expect_line(text, R"(dltune_disk_read_bytes_total{device="vda"} 7679714304)");
  expect_line(text, R"(dltune_disk_written_bytes_total{device="vda"} 110715514880)");
  expect_line(text, R"(dltune_disk_io_time_seconds_total{device="vda"} 204.068)");
  expect_line(text, R"(dltune_disk_io_in_progress{device="vda"} 2)");
  expect_line(text, R"(dltune_network_receive_bytes_total{device="eth0"} 67578305)");
  expect_line(text, R"(dltune_network_transmit_drop_total{device="eth0"} 4)");
  expect_line(text, R"(dltune_build_info{version="0.1.0",Hostname="gpu-node-07"} 1)");
  expect_line(text, "dltune_sample_timestamp_seconds 1700000000.5");
  expect_line(text, "dltune_sample_duration_seconds 0.0125");
  expect_line(text, "dltune_samples_total 3");
  expect_line(text, "dltune_scrapes_total 1");
  // A resource or a line the kernel did not give leaves no series.
  const auto e = parse_exposition(text);
  EXPECT_FALSE(
      e.find("dltune_pressure_stall_seconds_total", {{"resource", "memory"}, {"kind", "full"}}));
  EXPECT_TRUE(e.all("dltune_pressure_stall_seconds_total", {{"resource", "io"}}).empty());
  EXPECT_EQ(e.all("dltune_cpu_seconds_total").size(), 16u);  // 2 CPUs, 8 modes
}

TEST(Exposition, GpuValuesAndLabels) {
  const auto f = full_fixture();
  const auto text = render_text(f.snapshot());
  const auto e = parse_exposition(text);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  // dltune's labels and those dcgm-exporter users join on (UUID, modelName, Hostname).
  const std::map<std::string, std::string> g0 = {
      {"gpu", "0"},
      {"uuid", "GPU-8c7d1f00-aaaa-bbbb-cccc-000000000000"},
      {"UUID", "GPU-8c7d1f00-aaaa-bbbb-cccc-000000000000"},
      {"modelName", testing::kHostileName},
      {"Hostname", "gpu-node-07"}};
  auto value = [&](const char* name) -> std::string {
    const auto* s = e.find(name, g0);
    return s ? s->value_text : "(none)";
  };
  EXPECT_EQ(value("dltune_gpu_utilization_ratio"), "0.87");
  EXPECT_EQ(value("dltune_gpu_memory_utilization_ratio"), "0.4");
  EXPECT_EQ(value("dltune_gpu_sm_active_ratio"), "0.155");
  EXPECT_EQ(value("dltune_gpu_sm_occupancy_ratio"), "0.08");
  EXPECT_EQ(value("dltune_gpu_tensor_active_ratio"), "0.03");
  EXPECT_EQ(value("dltune_gpu_dram_active_ratio"), "0.2");
  EXPECT_EQ(value("dltune_gpu_memory_used_bytes"), "553648128");
  EXPECT_EQ(value("dltune_gpu_memory_total_bytes"), "85520809984");
  EXPECT_EQ(value("dltune_gpu_memory_free_bytes"), "84430290944");
  EXPECT_EQ(value("dltune_gpu_power_watts"), "69.5");
  EXPECT_EQ(value("dltune_gpu_energy_joules_total"), "123456.789");  // mJ / 1000
  EXPECT_EQ(value("dltune_gpu_temperature_celsius"), "35");
  EXPECT_EQ(value("dltune_gpu_sm_clock_hertz"), "1980000000");
  EXPECT_EQ(value("dltune_gpu_memory_clock_hertz"), "2619000000");
  EXPECT_EQ(value("dltune_gpu_clock_event_reasons"), "68");
  EXPECT_EQ(value("dltune_gpu_pcie_transmit_bytes_per_second"), "1228800");  // 1200 KB/s
  EXPECT_EQ(value("dltune_gpu_pcie_receive_bytes_per_second"), "358400000");
  EXPECT_EQ(value("dltune_gpu_pcie_replays_total"), "7");
  EXPECT_EQ(value("dltune_gpu_xid_errors_total"), "2");
  EXPECT_EQ(value("dltune_gpu_last_xid"), "79");
  // By code, with the severity of dltune's Xid table (knowledge/xid.toml).
  EXPECT_EQ(e.type.at("dltune_gpu_xid_events_total"), "counter");
  for (const auto& [xid, severity] : std::map<std::string, std::string>{
           {"13", "warning"}, {"79", "critical"}, {"4000", "unknown"}}) {
    auto l = g0;
    l["xid"] = xid;
    l["severity"] = severity;
    EXPECT_TRUE(e.find("dltune_gpu_xid_events_total", l)) << xid << " " << severity;
  }
  EXPECT_EQ(e.all("dltune_gpu_xid_events_total").size(), 3u);
  EXPECT_EQ(value("dltune_gpu_compute_processes"), "2");
  // NVLink's data counters in bytes (KiB times 1024), one series per direction.
  expect_line(text,
              R"(dltune_gpu_nvlink_bytes_total{gpu="0",uuid="GPU-8c7d1f00-aaaa-bbbb-cccc-)"
              R"(000000000000",UUID="GPU-8c7d1f00-aaaa-bbbb-cccc-000000000000",modelName=)"
              R"("NVIDIA \"H100\" \\ 80GB\nHBM3",Hostname="gpu-node-07",direction="tx"} 5120000)");
  EXPECT_EQ(e.type.at("dltune_gpu_nvlink_bytes_total"), "counter");
  auto with_direction = g0;
  with_direction["direction"] = "rx";
  ASSERT_TRUE(e.find("dltune_gpu_nvlink_bytes_total", with_direction));
  EXPECT_EQ(e.find("dltune_gpu_nvlink_bytes_total", with_direction)->value_text, "0");
  EXPECT_EQ(e.all("dltune_gpu_nvlink_bytes_total").size(), 2u);  // the bare GPU has none
  ASSERT_TRUE(e.find("dltune_nvml_up"));
  EXPECT_EQ(e.find("dltune_nvml_up")->value_text, "1");
  // The name with quotes, a backslash and a newline reads back as it was.
  const auto info = e.all("dltune_gpu_info", g0);
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0]->labels.at("name"), testing::kHostileName);
  EXPECT_EQ(info[0]->labels.at("pci_bus_id"), "00000000:18:00.0");
  EXPECT_EQ(info[0]->labels.at("device"), "nvidia3");  // dcgm-exporter's: /dev/nvidia3
  EXPECT_NE(text.find(R"(name="NVIDIA \"H100\" \\ 80GB\nHBM3")"), std::string::npos);
  // The bare GPU: listed, nothing else; its NaN power is not written.
  EXPECT_EQ(e.all("dltune_gpu_info", {{"gpu", "1"}}).size(), 1u);
  for (const auto& s : e.series) {
    if (s.name != "dltune_gpu_info" && s.labels.count("gpu")) {
      EXPECT_EQ(s.labels.at("gpu"), "0") << s.name << " for the GPU that gave nothing";
    }
  }
}

// One series per GPU on PCI, labelled by its address alone: 0 for the one NVML does not list.
TEST(Exposition, GpuUpForEveryGpuOnPci) {
  const auto f = full_fixture();
  auto e = parse_exposition(render_text(f.snapshot()));
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  const auto up = e.all("dltune_gpu_up");
  ASSERT_EQ(up.size(), 3u);
  EXPECT_EQ(up[0]->labels, (std::map<std::string, std::string>{{"pci_bus_id", "00000000:18:00.0"},
                                                               {"vendor", "nvidia"},
                                                               {"Hostname", "gpu-node-07"}}));
  EXPECT_EQ(up[0]->value_text, "1");
  EXPECT_EQ(up[2]->labels.at("pci_bus_id"), "00000000:9A:00.0");
  EXPECT_EQ(up[2]->value_text, "0");
  EXPECT_EQ(e.type.at("dltune_gpu_up"), "gauge");
  // The address joins to dltune_gpu_info's for a GPU NVML lists.
  EXPECT_EQ(e.all("dltune_gpu_info", {{"pci_bus_id", "00000000:18:00.0"}}).size(), 1u);
  // --no-gpus: GPUs are not read, so none is said to be down.
  e = parse_exposition(render_text(f.snapshot(false)));
  EXPECT_TRUE(e.all("dltune_gpu_up").empty());
}

TEST(Exposition, ThrottleReasonsAreNvmlsBits) {
  auto f = full_fixture();
  const auto e = parse_exposition(render_text(f.snapshot()));
  std::map<std::string, std::string> set;
  for (const auto* s : e.all("dltune_gpu_throttled", {{"gpu", "0"}}))
    set[s->labels.at("reason")] = s->value_text;
  ASSERT_EQ(set.size(), 9u);
  for (const auto& [reason, v] : set)
    EXPECT_EQ(v, reason == "sw_power_cap" || reason == "hw_thermal" ? "1" : "0") << reason;
  // The same bits as the NVML table the rest of dltune uses (gpu/nvml_types.hpp), in order.
  ASSERT_EQ(std::size(kThrottleReasons), std::size(gpu::nvml::kClockEventReasons));
  for (std::size_t i = 0; i < std::size(kThrottleReasons); ++i)
    EXPECT_EQ(kThrottleReasons[i].bit, gpu::nvml::kClockEventReasons[i].bit);
  // Every bit once, each label once.
  std::uint64_t all = 0;
  for (const auto& r : kThrottleReasons) {
    EXPECT_EQ(all & r.bit, 0u);
    all |= r.bit;
  }
  EXPECT_EQ(all, 0x1FFu);
}

TEST(Exposition, JobValuesAndAHostilePath) {
  const auto f = full_fixture();
  const auto e = parse_exposition(render_text(f.snapshot()));
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  const std::map<std::string, std::string> j = {{"cgroup", "/dltune/job-1"}};
  auto value = [&](const char* name) -> std::string {
    const auto* s = e.find(name, j);
    return s ? s->value_text : "(none)";
  };
  EXPECT_EQ(value("dltune_job_cpu_seconds_total"), "34891.912642");  // us / 1e6
  EXPECT_EQ(value("dltune_job_cpu_user_seconds_total"), "31745.28");
  EXPECT_EQ(value("dltune_job_cpu_system_seconds_total"), "3146.62");
  EXPECT_EQ(value("dltune_job_cpu_quota_cpus"), "1.5");
  EXPECT_EQ(value("dltune_job_cpus"), "6");
  EXPECT_EQ(value("dltune_job_cpu_periods_total"), "200");
  EXPECT_EQ(value("dltune_job_cpu_throttled_periods_total"), "50");
  EXPECT_EQ(value("dltune_job_cpu_throttled_seconds_total"), "1.5");
  EXPECT_EQ(value("dltune_job_memory_bytes"), "4100096");
  EXPECT_EQ(value("dltune_job_memory_limit_bytes"), "536870912");
  EXPECT_EQ(value("dltune_job_memory_peak_bytes"), "5242880");
  EXPECT_EQ(value("dltune_job_swap_bytes"), "4096");
  EXPECT_EQ(value("dltune_job_memory_anon_bytes"), "1873568");
  EXPECT_EQ(value("dltune_job_memory_file_bytes"), "976544");
  EXPECT_EQ(value("dltune_job_memory_limit_hits_total"), "43");
  EXPECT_EQ(value("dltune_job_oom_events_total"), "1");
  EXPECT_EQ(value("dltune_job_oom_kills_total"), "2");
  EXPECT_EQ(value("dltune_job_workingset_refault_file_total"), "27");
  EXPECT_EQ(value("dltune_job_major_page_faults_total"), "5");
  EXPECT_EQ(value("dltune_job_processes"), "3");
  const auto* io = e.find("dltune_job_pressure_stall_seconds_total",
                          {{"cgroup", "/dltune/job-1"}, {"resource", "io"}, {"kind", "full"}});
  ASSERT_TRUE(io);
  EXPECT_EQ(io->value_text, "0.125");
  // The group with only its memory: that series, under its path as it is, and nothing else.
  std::vector<std::string> weird;
  for (const auto& s : e.series)
    if (s.labels.count("cgroup") && s.labels.at("cgroup") == testing::kHostileCgroup)
      weird.push_back(s.name);
  EXPECT_EQ(weird, std::vector<std::string>{"dltune_job_memory_bytes"});
}

TEST(Exposition, CheckFindings) {
  auto f = full_fixture();
  auto e = parse_exposition(render_text(f.snapshot()));
  const auto findings = e.all("dltune_check_finding");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0]->labels,
            (std::map<std::string, std::string>{
                {"id", "vm.swappiness"}, {"severity", "warn"}, {"area", "memory"}}));
  EXPECT_EQ(findings[0]->value_text, "1");
  EXPECT_EQ(e.find("dltune_check_findings", {{"severity", "ok"}})->value_text, "10");
  EXPECT_EQ(e.find("dltune_check_findings", {{"severity", "info"}})->value_text, "0");
  EXPECT_EQ(e.find("dltune_check_findings", {{"severity", "critical"}})->value_text, "1");
  EXPECT_EQ(e.find("dltune_check_up")->value_text, "1");
  // Two GPUs' ECC could not be judged: unknown, with what the profile would have said.
  const auto unknown = e.all("dltune_check_unknown");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0]->labels, (std::map<std::string, std::string>{
                                    {"id", "gpu.ecc"}, {"stakes", "critical"}, {"area", "gpu"}}));
  EXPECT_EQ(unknown[0]->value_text, "2");
  EXPECT_EQ(e.find("dltune_check_unknown_findings")->value_text, "2");
  EXPECT_EQ(e.find("dltune_check_last_run_timestamp_seconds")->value_text, "1700000100");
  EXPECT_EQ(e.find("dltune_check_duration_seconds")->value_text, "0.25");

  // A check that could not run: no findings, four zero counts, up 0; the last completed run's
  // time stays.
  f.check.ok = false;
  e = parse_exposition(render_text(f.snapshot()));
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  EXPECT_TRUE(e.all("dltune_check_finding").empty());
  ASSERT_EQ(e.all("dltune_check_findings").size(), 4u);
  for (const auto* s : e.all("dltune_check_findings")) EXPECT_EQ(s->value_text, "0");
  EXPECT_TRUE(e.all("dltune_check_unknown").empty());
  EXPECT_EQ(e.find("dltune_check_unknown_findings")->value_text, "0");
  EXPECT_EQ(e.find("dltune_check_up")->value_text, "0");
  EXPECT_TRUE(e.find("dltune_check_last_run_timestamp_seconds"));

  // Before the first run has finished, and with --no-check: no check family at all.
  f.check = CheckState{};
  e = parse_exposition(render_text(f.snapshot()));
  for (const auto& name : e.families) EXPECT_FALSE(name.starts_with("dltune_check")) << name;
  e = parse_exposition(render_text(f.snapshot(true, false)));
  for (const auto& name : e.families) EXPECT_FALSE(name.starts_with("dltune_check")) << name;
}

TEST(Exposition, AbsentValuesGiveNoSeriesAndNoFamily) {
  testing::Fixture f;  // an empty host: no CPUs, disks, GPUs or jobs
  f.sample.ticks_per_second = 100;
  auto e = parse_exposition(render_text(f.snapshot(false, false)));
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  for (const auto* name :
       {"dltune_cpu_seconds_total", "dltune_disk_read_bytes_total",
        "dltune_pressure_stall_seconds_total", "dltune_gpu_info", "dltune_job_memory_bytes"})
    EXPECT_FALSE(e.help.count(name)) << name;
  ASSERT_TRUE(e.find("dltune_nvml_up"));
  EXPECT_EQ(e.find("dltune_nvml_up")->value_text, "0");
  EXPECT_EQ(e.find("dltune_cpus")->value_text, "0");

  // --no-gpus: the GPUs in the sample are not exported.
  const auto full = full_fixture();
  e = parse_exposition(render_text(full.snapshot(false)));
  EXPECT_FALSE(e.help.count("dltune_gpu_info"));
  EXPECT_EQ(e.find("dltune_nvml_up")->value_text, "0");

  // Before the first sample: only what is known.
  Snapshot none;
  none.version = "0.1.0";
  e = parse_exposition(render_text(none, 0));
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  EXPECT_EQ(e.families, (std::vector<std::string>{"dltune_build_info", "dltune_samples_total",
                                                  "dltune_scrapes_total"}));
}

TEST(Exposition, EscapesAndNumbers) {
  std::string out;
  append_escaped_label(out, "a\\b\"c\nd");
  EXPECT_EQ(out, "a\\\\b\\\"c\\nd");
  out.clear();
  append_escaped_label(out, "plain");
  EXPECT_EQ(out, "plain");
  for (const auto& [v, text] : std::vector<std::pair<double, std::string>>{
           {0.1, "0.1"}, {5.0, "5"}, {1e20, "1e+20"}, {123456.789, "123456.789"}, {-0.5, "-0.5"}}) {
    out.clear();
    append_double(out, v);
    EXPECT_EQ(out, text);
  }
  // The shortest text reads back as the same double.
  out.clear();
  append_double(out, 1.0 / 3.0);
  EXPECT_EQ(std::strtod(out.c_str(), nullptr), 1.0 / 3.0) << out;
  out.clear();
  TextSink sink(out);
  sink.family("dltune_x", MetricType::kGauge, "help with \\ and\nnewline");
  sink.sample({}, std::numeric_limits<double>::infinity());
  sink.sample({}, std::nan(""));
  EXPECT_EQ(out, "") << "no family for values that cannot be written";
  sink.sample({{"a", "1"}}, 2.5);
  EXPECT_EQ(out,
            "# HELP dltune_x help with \\\\ and\\nnewline\n# TYPE dltune_x gauge\n"
            "dltune_x{a=\"1\"} 2.5\n");
}

}  // namespace
}  // namespace dltune::serve::exposition_test

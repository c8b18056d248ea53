// make_sections: which charts are drawn, which become one line of text (every series zero or
// absent), which series idle devices leave out, the axis titles, and the GPU throttle bands.
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "report/output.hpp"
#include "report/sections.hpp"
#include "report/series.hpp"

namespace dltune::report::report_sections_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Five samples a second apart.
ReportData five_samples() {
  ReportData d;
  for (std::int64_t k = 0; k < 5; ++k) d.time_ms.push_back(1'000'000 + k * 1000);
  d.from_ms = d.time_ms.front();
  d.to_ms = d.time_ms.back();
  d.window_samples = d.time_ms.size();
  return d;
}

void add(ReportData& d, const std::string& id, const std::string& unit,
         std::vector<double> values) {
  Series s;
  s.id = id;
  s.label = id;
  s.unit = unit;
  s.values = std::move(values);
  d.series.push_back(std::move(s));
}

const std::vector<double> kZero{kNull, 0, 0, 0, 0};
const std::vector<double> kSome{kNull, 0, 1500, 0, 20};

// The host's series, with swap and faults as given; the rest busy.
ReportData host(const std::vector<double>& swap_in, const std::vector<double>& faults) {
  ReportData d = five_samples();
  add(d, "cpu.user_pct", "percent", {kNull, 30, 30, 30, 30});
  add(d, "memory.used_bytes", "bytes", {1, 2, 3, 4, 5});
  add(d, "swap.in_bytes_s", "bytes/s", swap_in);
  add(d, "swap.out_bytes_s", "bytes/s", kZero);
  add(d, "memory.major_faults_s", "1/s", faults);
  return d;
}

const Chart* find_chart(const std::vector<Section>& sections, const std::string& id) {
  for (const auto& s : sections)
    for (const auto& c : s.charts)
      if (c.id == id) return &c;
  return nullptr;
}

SectionFacts facts() {
  SectionFacts f;
  f.scope = "host";
  return f;
}

TEST(ReportSections, ABusyChartIsDrawnWithAxisTitlesInItsUnits) {
  const auto d = host(kSome, kSome);
  const auto sections = make_sections(d, facts());
  const Chart* paging = find_chart(sections, "paging");
  ASSERT_NE(paging, nullptr);
  EXPECT_EQ(paging->empty, "");
  EXPECT_EQ(paging->note, "");
  EXPECT_THAT(paging->series,
              ElementsAre("swap.in_bytes_s", "swap.out_bytes_s", "memory.major_faults_s"));
  EXPECT_THAT(paging->axes, ElementsAre("bytes/s", "faults/s"));
  const Chart* cpu = find_chart(sections, "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_THAT(cpu->axes, ElementsAre("% of all CPUs"));
  EXPECT_THAT(find_chart(sections, "memory")->axes, ElementsAre("bytes"));
}

TEST(ReportSections, SwapWithoutTrafficIsANoteAndAllZeroIsOneLine) {
  {
    // No swap traffic, some major faults: the swap lines are left out, the note says so.
    const auto sections = make_sections(host(kZero, kSome), facts());
    const Chart* paging = find_chart(sections, "paging");
    ASSERT_NE(paging, nullptr);
    EXPECT_EQ(paging->empty, "");
    EXPECT_THAT(paging->series, ElementsAre("memory.major_faults_s"));
    EXPECT_THAT(paging->note, HasSubstr("Swap: none used"));
  }
  {
    // Every series zero: the chart is one line of text.
    const auto sections = make_sections(host(kZero, kZero), facts());
    const Chart* paging = find_chart(sections, "paging");
    ASSERT_NE(paging, nullptr);
    EXPECT_THAT(paging->empty, HasSubstr("Swap: none used"));
    EXPECT_THAT(paging->empty, HasSubstr("in this window"));
  }
  {
    // All absent (a single sample: no rates): no chart at all, as before.
    ReportData d = five_samples();
    add(d, "memory.used_bytes", "bytes", {1, 2, 3, 4, 5});
    const auto sections = make_sections(d, facts());
    EXPECT_EQ(find_chart(sections, "paging"), nullptr);
    ASSERT_NE(find_chart(sections, "memory"), nullptr);
  }
}

// eth0 busy, docker0 and veth1 idle (zero, or no value at all).
ReportData network(bool eth0_busy) {
  ReportData d = five_samples();
  const auto& eth0 = eth0_busy ? kSome : kZero;
  add(d, "net.rx_bytes_s", "bytes/s", eth0);
  add(d, "net.tx_bytes_s", "bytes/s", kZero);
  add(d, "net.eth0.rx_bytes_s", "bytes/s", eth0);
  add(d, "net.eth0.tx_bytes_s", "bytes/s", kZero);
  add(d, "net.docker0.rx_bytes_s", "bytes/s", kZero);
  add(d, "net.docker0.tx_bytes_s", "bytes/s", kZero);
  // veth1 has no series: it appeared in one sample only (no rate).
  return d;
}

SectionFacts net_facts() {
  SectionFacts f = facts();
  f.nets = {"docker0", "eth0", "veth1"};
  return f;
}

TEST(ReportSections, IdleInterfacesAreLeftOutOfTheLegendAndNamedInANote) {
  const auto sections = make_sections(network(true), net_facts());
  const Chart* net = find_chart(sections, "net");
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->empty, "");
  // One busy interface: the totals are its lines; the idle ones are in the note only.
  EXPECT_THAT(net->series, ElementsAre("net.rx_bytes_s", "net.tx_bytes_s"));
  EXPECT_EQ(net->note, "No traffic on docker0, veth1 in this window (left out).");
  EXPECT_THAT(net->axes, ElementsAre("bytes/s"));
}

TEST(ReportSections, TwoBusyInterfacesKeepTheirOwnLines) {
  ReportData d = network(true);
  for (auto& s : d.series)
    if (s.id == "net.docker0.tx_bytes_s") s.values = kSome;
  const auto sections = make_sections(d, net_facts());
  const Chart* net = find_chart(sections, "net");
  ASSERT_NE(net, nullptr);
  EXPECT_THAT(net->series,
              ElementsAre("net.rx_bytes_s", "net.tx_bytes_s", "net.docker0.rx_bytes_s",
                          "net.docker0.tx_bytes_s", "net.eth0.rx_bytes_s", "net.eth0.tx_bytes_s"));
  EXPECT_EQ(net->note, "No traffic on veth1 in this window (left out).");
}

TEST(ReportSections, ANetworkWithoutTrafficIsOneLine) {
  const auto sections = make_sections(network(false), net_facts());
  const Chart* net = find_chart(sections, "net");
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->empty, "Network: no traffic on docker0, eth0, veth1 in this window");
  // The section still has its chart (as a line): it is not "absent".
  for (const auto& s : sections)
    if (s.id == "io") EXPECT_EQ(s.absent, "");
}

ReportData gpu(const std::vector<double>& power_cap, const std::vector<double>& thermal) {
  ReportData d = five_samples();
  add(d, "gpu.0.util_pct", "percent", {90, 60, 60, 90, 90});
  add(d, "gpu.0.sm_clock_mhz", "MHz", {1980, 1400, 1400, 1980, 1980});
  add(d, "gpu.0.power_w", "watts", {300, 300, 300, 300, 300});
  add(d, "gpu.0.temperature_c", "celsius", {60, 60, 60, 60, 60});
  add(d, "gpu.held.power_cap", "count", power_cap);
  add(d, "gpu.held.thermal", "count", thermal);
  add(d, "gpu.held.hw_slowdown", "count", {0, 0, 0, 0, 0});
  add(d, "gpu.held.settings", "count", {0, 0, 0, 0, 0});
  return d;
}

SectionFacts gpu_facts() {
  SectionFacts f = facts();
  f.saw_gpu = true;
  f.gpus = {0};
  return f;
}

TEST(ReportSections, ThrottleReasonsAreBandsOnTheUtilisationAndClockCharts) {
  const auto d = gpu({0, 1, 1, 0, 0}, {0, 0, 0, 0, 2});
  const auto sections = make_sections(d, gpu_facts());
  for (const char* id : {"gpu_util", "gpu_clocks"}) {
    const Chart* c = find_chart(sections, id);
    ASSERT_NE(c, nullptr) << id;
    ASSERT_EQ(c->bands.size(), 2u) << id;
    // Power cap from the sample that showed it to the next sample, which did not.
    EXPECT_EQ(c->bands[0].series, "gpu.held.power_cap");
    EXPECT_EQ(c->bands[0].label, "power cap");
    EXPECT_EQ(c->bands[0].from_ms, d.time_ms[1]);
    EXPECT_EQ(c->bands[0].to_ms, d.time_ms[3]);
    // Thermal at the last sample: a band that ends there.
    EXPECT_EQ(c->bands[1].series, "gpu.held.thermal");
    EXPECT_EQ(c->bands[1].from_ms, d.time_ms[4]);
    EXPECT_EQ(c->bands[1].to_ms, d.time_ms[4]);
  }
  EXPECT_THAT(find_chart(sections, "gpu_util")->axes, ElementsAre("% of time"));
  EXPECT_THAT(find_chart(sections, "gpu_clocks")->axes, ElementsAre("MHz"));
  EXPECT_THAT(find_chart(sections, "gpu_power")->axes, ElementsAre("W"));
  EXPECT_THAT(find_chart(sections, "gpu_temperature")->axes, ElementsAre("°C"));
  EXPECT_TRUE(find_chart(sections, "gpu_power")->bands.empty());
  const Chart* held = find_chart(sections, "gpu_held");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->empty, "");
  EXPECT_THAT(held->axes, ElementsAre("GPUs"));
}

TEST(ReportSections, GpusNeverHeldHaveNoBandsAndTheHeldChartIsOneLine) {
  const auto sections = make_sections(gpu(kZero, kZero), gpu_facts());
  EXPECT_TRUE(find_chart(sections, "gpu_util")->bands.empty());
  const Chart* held = find_chart(sections, "gpu_held");
  ASSERT_NE(held, nullptr);
  EXPECT_THAT(held->empty, HasSubstr("never held down"));
}

// The JSON says it all: every chart has its axes' titles, an empty chart its line, a chart with
// idle interfaces its note, the GPU charts their bands.
TEST(ReportSections, TheJsonCarriesAxesEmptyNotesAndBands) {
  ReportData d = gpu({0, 1, 1, 0, 0}, kZero);
  for (auto& s : network(true).series) d.series.push_back(s);
  for (auto& s : host(kZero, kZero).series) d.series.push_back(s);
  SectionFacts f = gpu_facts();
  f.nets = net_facts().nets;
  d.sections = make_sections(d, f);
  std::ostringstream out;
  write_json(d, out, {});
  const auto j = nlohmann::json::parse(out.str());
  std::size_t charts = 0;
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& s : j["sections"])
    for (const auto& c : s["charts"]) {
      ++charts;
      by_id[c["id"]] = c;
      ASSERT_TRUE(c.contains("axes")) << c["id"];
      EXPECT_EQ(c["axes"]["x"], "time") << c["id"];
      ASSERT_TRUE(c["axes"].contains("y")) << c["id"];
      EXPECT_FALSE(c["axes"]["y"].get<std::string>().empty()) << c["id"];
      // One title per unit: the left axis, and the right one when there is a second unit.
      std::set<std::string> units;
      for (const auto& id : c["series"]) {
        const Series* s = d.find(id.get<std::string>());
        ASSERT_NE(s, nullptr) << id;
        units.insert(s->unit);
      }
      EXPECT_EQ(c["axes"].contains("y1"), units.size() > 1) << c["id"];
    }
  EXPECT_GE(charts, 8u);
  EXPECT_THAT(by_id["paging"]["empty"].get<std::string>(), HasSubstr("Swap: none used"));
  EXPECT_FALSE(by_id["cpu"].contains("empty"));
  EXPECT_EQ(by_id["net"]["note"], "No traffic on docker0, veth1 in this window (left out).");
  ASSERT_EQ(by_id["gpu_util"]["bands"].size(), 1u);
  EXPECT_EQ(by_id["gpu_util"]["bands"][0]["series"], "gpu.held.power_cap");
  EXPECT_EQ(by_id["gpu_util"]["bands"][0]["from_ms"], d.time_ms[1]);
  EXPECT_EQ(by_id["gpu_util"]["bands"][0]["to_ms"], d.time_ms[3]);
}

// The page: an empty chart is its line of text, not a canvas; a note sits under its chart.
TEST(ReportSections, ThePageSaysAnEmptyChartInWordsAndShowsTheNote) {
  ReportData d = network(true);
  for (auto& s : host(kZero, kZero).series) d.series.push_back(s);
  d.sections = make_sections(d, net_facts());
  std::ostringstream out;
  write_html(d, out);
  const std::string page = out.str();
  EXPECT_THAT(page, HasSubstr("<p class=\"chart-empty\" id=\"empty-paging\">Swap: none used"));
  EXPECT_EQ(page.find("id=\"chart-paging\""), std::string::npos);
  EXPECT_THAT(page, HasSubstr("id=\"chart-net\""));
  EXPECT_THAT(page, HasSubstr("No traffic on docker0, veth1 in this window (left out)."));
}

}  // namespace
}  // namespace dltune::report::report_sections_test

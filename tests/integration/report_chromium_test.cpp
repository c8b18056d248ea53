// `dltune report` on a real recording of this host, opened in a real headless Chromium (Debian's
// chromium): the page loads without console errors or uncaught exceptions, every chart draws, and
// a screenshot is kept as a test artifact (build/<preset>/test-artifacts/report.png). The host has
// no GPU: two come from the fake libnvidia-ml.so (tests/fakes/nvml), loaded as the real one is,
// so that the GPU charts are drawn too.
//
// What the page did is read from the test's side: a copy of the report gets a checker script
// first in <head> (it counts console.error calls and uncaught errors) and one at the end of
// <body> that, on load, reads every canvas's pixels and each chart's drawn points and writes the
// result as JSON into a <pre>; Chromium's --dump-dom prints the DOM after load.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/recording.hpp"
#include "support/build_paths.hpp"
#include "support/chromium.hpp"
#include "support/run.hpp"
#include "unit/gpu/fake_nvml_config.hpp"

namespace report_chromium_test {

namespace fs = std::filesystem;
using dltune::testing::run;

namespace {

using dltune::testing::chromium;
using dltune::testing::Exit;
using dltune::testing::kChromium;
using dltune::testing::read_bytes;
using dltune::testing::run_group;

constexpr const char* kHeadChecker = R"(<script>
window.__dltuneErrors = [];
(function () {
  const error = console.error;
  console.error = function () {
    window.__dltuneErrors.push('console.error: ' + Array.from(arguments).map(String).join(' '));
    return error.apply(console, arguments);
  };
  window.addEventListener('error', (e) => window.__dltuneErrors.push('uncaught: ' + e.message));
  window.addEventListener('unhandledrejection',
                          (e) => window.__dltuneErrors.push('rejection: ' + e.reason));
})();
</script>
)";

constexpr const char* kBodyChecker = R"(<script>
window.addEventListener('load', () => {
  const canvases = Array.from(document.querySelectorAll('canvas')).map((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) painted++;
    const chart = Chart.getChart(c);
    let points = 0;
    if (chart) {
      const area = chart.chartArea;
      chart.data.datasets.forEach((ds, i) => {
        for (const el of chart.getDatasetMeta(i).data)
          if (!el.skip && el.x >= area.left - 1 && el.x <= area.right + 1 &&
              el.y >= area.top - 1 && el.y <= area.bottom + 1) points++;
      });
    }
    // The tooltip at the middle of the plot: the report's own interaction mode picks each
    // line's nearest point, and the tooltip's callbacks format them.
    let tooltip = [];
    if (chart) {
      const area = chart.chartArea;
      const at = {x: (area.left + area.right) / 2, y: (area.top + area.bottom) / 2};
      const items = Chart.Interaction.modes[chart.options.interaction.mode](chart, at, {}, false);
      chart.tooltip.setActiveElements(items, at);
      chart.update();
      tooltip = (chart.tooltip.title || []).concat(
          (chart.tooltip.body || []).map((b) => b.lines.join(' ')));
    }
    const titles = chart ? Object.keys(chart.options.scales).map(
        (k) => chart.options.scales[k].title.display ? chart.options.scales[k].title.text : '') : [];
    const legend = chart && chart.legend ? chart.legend.legendItems.map((i) => i.text) : [];
    return {id: c.id, width: c.width, height: c.height, painted: painted,
            datasets: chart ? chart.data.datasets.length : 0, points: points, tooltip: tooltip,
            titles: titles, legend: legend};
  });
  const out = document.createElement('pre');
  out.id = 'dltune-check';
  out.textContent = JSON.stringify({errors: window.__dltuneErrors, report: window.dltuneReport || null,
                                    canvases: canvases});
  document.body.appendChild(out);
});
</script>
)";

std::string unescape_html(std::string s) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"},
                                 {"&gt;", ">"},
                                 {"&quot;", "\""},
                                 {"&nbsp;", " "},
                                 {"&amp;", "&"}}) {
    for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
      s.replace(pos, from.size(), to);
  }
  return s;
}

class ReportChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / fmt::format("report_chromium_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReportChromium, TheReportOfARealRecordingLoadsWithoutErrorsAndDrawsEveryChart) {
  if (::access(kChromium, X_OK) != 0)
    GTEST_SKIP() << kChromium << " is missing (apt-get install chromium)";
  auto gpus = dltune::testing::fake_hgx(2);
  for (unsigned i = 0; i < 2; ++i) {
    gpus["gpus"][i]["utilization"] = {{"gpu", 87 - 20 * i}, {"memory", 40}};
    gpus["gpus"][i]["pcie_throughput_kbs"] = {{"tx", 1200}, {"rx", 350000}};
    // NVLink's data counters, growing at each reading (NVML is read once a second).
    gpus["gpus"][i]["nvlink_throughput_kib"] = {{"tx", 1000}, {"rx", 2000}};
    gpus["gpus"][i]["nvlink_throughput_kib_step"] = {{"tx", 4096 * (i + 1)}, {"rx", 1024}};
  }
  gpus["gpus"][1]["clock_event_reasons"] = 0x4;  // SwPowerCap: one GPU held by its power cap
  dltune::testing::FakeNvmlConfig fake(gpus);
  const auto db = (dir_ / "run.db").string();
  // 3.6 s: NVLink's rates need two readings of the GPUs (a second apart), and the checker's
  // tooltip at the middle of each chart needs a point there.
  auto r = run(
      {DLTUNE_BINARY, "record", "-o", db, "--interval", "200ms", "-q", "--", "/bin/sleep", "3.6"},
      {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto html = dir_ / "report.html";
  r = run({DLTUNE_BINARY, "report", db, "-o", html.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({DLTUNE_BINARY, "report", db, "-o", "-", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);

  // What the recording should give: the host's three charts, pressure when the host has PSI,
  // disks and network, eight for the two GPUs (utilisation, memory, power, temperature, clocks,
  // held below their clocks by reason, PCIe and NVLink throughput),
  // the job's two (sleep is its main process) and those of the cgroup's figures that were there.
  auto rec = dltune::store::Recording::open(db);
  ASSERT_TRUE(rec) << rec.error().message();
  auto first = (*rec)->at(0);
  ASSERT_TRUE(first);
  // A chart whose series all stayed at zero (no swap, an idle network) is one line of text in
  // the page, not a canvas: `total` counts the charts drawn.
  std::map<std::string, std::size_t> charts;
  std::map<std::string, nlohmann::json> by_id;
  std::vector<std::string> empty;
  std::size_t total = 0;
  for (const auto& s : doc["sections"]) {
    charts[s["id"]] = s["charts"].size();
    for (const auto& c : s["charts"]) {
      by_id[c["id"]] = c;
      if (c.contains("empty"))
        empty.push_back(c["id"]);
      else
        ++total;
      EXPECT_EQ(c["axes"]["x"], "time") << c["id"];
      EXPECT_FALSE(c["axes"]["y"].get<std::string>().empty()) << c["id"];
    }
  }
  EXPECT_EQ(charts["host"], 3u);
  EXPECT_EQ(charts["pressure"], first->system.pressure.io ? 1u : 0u);
  EXPECT_EQ(charts["io"],
            (first->system.disks.empty() ? 0u : 1u) + (first->system.net.empty() ? 0u : 1u));
  // NVML is read on a thread of its own: the first samples may come before its first reading.
  auto last = (*rec)->at((*rec)->size() - 1);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->gpus.size(), 2u);
  EXPECT_EQ(charts["gpu"], 8u);
  // GPU 1 is held by its power cap throughout: a band on the utilisation and clock charts.
  ASSERT_TRUE(by_id["gpu_util"].contains("bands")) << by_id["gpu_util"].dump();
  EXPECT_EQ(by_id["gpu_util"]["bands"][0]["series"], "gpu.held.power_cap");
  EXPECT_EQ(charts["job"], 2u);
  if (!first->cgroup) {
    EXPECT_EQ(charts["cgroup"], 0u);
  }

  // (a) the page in Chromium, through the checker.
  std::string page = read_bytes(html);
  const auto head = page.find("<head>");
  const auto body_end = page.rfind("</body>");
  ASSERT_NE(head, std::string::npos);
  ASSERT_NE(body_end, std::string::npos);
  page.insert(body_end, kBodyChecker);
  page.insert(head + 6, kHeadChecker);
  const auto checked = dir_ / "checked.html";
  std::ofstream(checked, std::ios::binary) << page;
  const auto dom = run_group(
      chromium(dir_ / "profile-1", {"--dump-dom", "file://" + checked.string()}), dir_, 90);
  ASSERT_EQ(dom.code, 0) << dom.err;
  const std::string open_tag = "<pre id=\"dltune-check\">";
  const auto at = dom.out.find(open_tag);
  ASSERT_NE(at, std::string::npos) << "no checker result in the DOM (the load handler never ran)\n"
                                   << dom.out.substr(0, 2000) << "\n"
                                   << dom.err;
  const auto begin = at + open_tag.size();
  const auto result = nlohmann::json::parse(
      unescape_html(dom.out.substr(begin, dom.out.find("</pre>", begin) - begin)));
  EXPECT_EQ(result["errors"].size(), 0u) << result["errors"].dump(2);
  ASSERT_TRUE(result["report"].is_object()) << "the report's script did not finish";
  EXPECT_EQ(result["report"]["charts"], total);
  EXPECT_EQ(result["report"]["failures"].size(), 0u) << result["report"]["failures"];
  ASSERT_EQ(result["canvases"].size(), total);
  for (const auto& c : result["canvases"]) {
    const double pixels = c["width"].get<double>() * c["height"].get<double>();
    EXPECT_GT(c["width"].get<int>(), 600) << c["id"];
    EXPECT_GT(c["painted"].get<double>(), pixels * 0.01) << c["id"] << " is (nearly) blank";
    EXPECT_GE(c["datasets"].get<int>(), 1) << c["id"];
    EXPECT_GE(c["points"].get<int>(), 2) << c["id"] << " drew no line";
    // A title (the time) and at least one line with a value and its unit.
    ASSERT_GE(c["tooltip"].size(), 2u) << c["id"] << ": " << c["tooltip"].dump();
    EXPECT_NE(c["tooltip"][1].get<std::string>().find(": "), std::string::npos) << c["tooltip"];
    // Every axis has its title (time, and the unit of the y axes).
    ASSERT_GE(c["titles"].size(), 2u) << c["id"];
    for (const auto& t : c["titles"]) EXPECT_FALSE(t.get<std::string>().empty()) << c["id"];
  }
  for (const auto& c : result["canvases"])
    if (c["id"] == "chart-gpu_util")
      EXPECT_NE(c["legend"].dump().find("clocks held: power cap"), std::string::npos) << c;
  for (const auto& id : empty)
    EXPECT_NE(dom.out.find("id=\"empty-" + id + "\""), std::string::npos) << id << " has no line";
  std::printf("report in Chromium: %zu charts drawn in %.0f ms of page time\n", total,
              result["report"]["draw_ms"].get<double>());

  // (b) a screenshot of the report as it is, kept for people to look at.
  const auto artifacts = fs::path(DLTUNE_BINARY).parent_path() / "test-artifacts";
  fs::create_directories(artifacts);
  const auto png = artifacts / "report.png";
  fs::remove(png);
  const auto shot = run_group(
      chromium(dir_ / "profile-2", {"--screenshot=" + png.string(), "--window-size=1280,3000",
                                    "file://" + html.string()}),
      dir_, 90);
  ASSERT_EQ(shot.code, 0) << shot.err;
  ASSERT_TRUE(fs::exists(png)) << shot.err;
  const std::string bytes = read_bytes(png);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(bytes.size(), 50'000u) << "a 1280x3000 page of charts is more than a blank image";
  std::printf("screenshot: %s (%zu bytes)\n", png.c_str(), bytes.size());
}

}  // namespace

}  // namespace report_chromium_test

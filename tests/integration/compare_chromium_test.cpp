// The page of `dltune compare` (report/compare_html.hpp) opened in a real headless Chromium
// (Debian's chromium): the charts draw without a script error, the verdict is there, and text
// from the document (a label with a <script> element in it) is shown as text, never run.
//
// The page says what it did on <body>: data-charts (the number drawn) and data-error (any script
// error); Chromium's --dump-dom prints the DOM after load. The launcher is a copy of
// report_chromium_test.cpp's, kept minimal.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/compare_html.hpp"
#include "support/build_paths.hpp"
#include "support/chromium.hpp"

namespace compare_chromium_test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kInjected = "<script>alert(1)</script>";

using dltune::testing::chromium;
using dltune::testing::Exit;
using dltune::testing::kChromium;
using dltune::testing::read_bytes;
using dltune::testing::run_group;

// The value of `attribute` on the page's <body>, or nullopt. The page's own text never holds
// `data-...="`, so the first one in the DOM is <body>'s.
std::optional<std::string> body_attribute(const std::string& dom, const std::string& attribute) {
  const std::string key = attribute + "=\"";
  const auto at = dom.find(key);
  if (at == std::string::npos) return std::nullopt;
  const auto begin = at + key.size();
  return dom.substr(begin, dom.find('"', begin) - begin);
}

// Appended to a copy of the page: on load, each chart's tooltip for each of its points, as
// Chart.js formats it (title, before, lines, after), written as JSON into a <pre>. A callback
// that throws reaches the page's error handler, and so data-error.
constexpr const char* kTooltipChecker = R"(<script>
window.addEventListener('load', () => {
  const out = {};
  for (const id of ['chart-runs', 'chart-ratios']) {
    const chart = Chart.getChart(document.getElementById(id));
    if (!chart) continue;
    out[id] = [];
    chart.data.datasets.forEach((ds, i) => {
      chart.getDatasetMeta(i).data.forEach((el, j) => {
        chart.tooltip.setActiveElements([{datasetIndex: i, index: j}], {x: el.x, y: el.y});
        chart.update();
        const body = (chart.tooltip.body || []).map((b) => b.before.concat(b.lines, b.after));
        out[id].push((chart.tooltip.title || []).concat(...body).join(' | '));
      });
    });
  }
  const pre = document.createElement('pre');
  pre.id = 'tooltips';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
)";

std::string unescape_html(std::string s) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"},
                                 {"&gt;", ">"},
                                 {"&quot;", "\""},
                                 {"&amp;", "&"}}) {
    for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
      s.replace(pos, from.size(), to);
  }
  return s;
}

// Whether one of `lines` holds every one of `texts`.
bool any_contains(const json& lines, std::initializer_list<std::string_view> texts) {
  for (const auto& l : lines) {
    const auto line = l.get<std::string>();
    bool all = true;
    for (auto t : texts) all = all && line.find(t) != std::string::npos;
    if (all) return true;
  }
  return false;
}

json run(const char* side, int pair, const char* recording, double rate, double wall,
         double swap_in) {
  return {{"side", side},
          {"pair", pair},
          {"warmup", false},
          {"recording", recording},
          {"used", true},
          {"log", fmt::format("{}.log", fs::path(recording).stem().string())},
          {"exit_status", 0},
          {"metrics", {{"rate", rate}, {"wall_seconds", wall}, {"swap_in_bytes", swap_in}}}};
}

// What `dltune bench` writes for 6 rounds of A and B after a warm-up pair, where B's round 4
// failed (so its partner is left out too): B is slower, with an interval on the rate and on wall
// time, none on swap-ins (zero in some runs).
json six_rounds() {
  json runs = json::array();
  runs.push_back(run("A", 0, "A-00.db", 15.2, 6.3, 0));
  runs.back()["warmup"] = true;
  runs.back()["used"] = false;
  runs.back()["excluded"] = "warm-up run";
  runs.push_back(run("B", 0, "B-00.db", 8.1, 11.9, 0));
  runs.back()["warmup"] = true;
  runs.back()["used"] = false;
  runs.back()["excluded"] = "warm-up run";
  const double rate_a[] = {17.1, 16.9, 17.0, 17.3, 16.8, 17.2};
  const double rate_b[] = {8.7, 8.9, 8.6, 4.1, 8.8, 8.7};
  for (int i = 0; i < 6; ++i) {
    runs.push_back(run("A", i + 1, fmt::format("A-{:02}.db", i + 1).c_str(), rate_a[i],
                       100 / rate_a[i], i % 2 == 0 ? 0 : 4096.0 * i));
    runs.push_back(run("B", i + 1, fmt::format("B-{:02}.db", i + 1).c_str(), rate_b[i],
                       100 / rate_b[i], 3.5e8 + 1e7 * i));
  }
  // Round 4: B exited with status 1 (after a while: it has a rate), A goes with it.
  json& b4 = runs[2 + 2 * 3 + 1];
  b4["used"] = false;
  b4["exit_status"] = 1;
  b4["excluded"] = "the job exited with status 1: a failed run is left out";
  json& a4 = runs[2 + 2 * 3];
  a4["used"] = false;
  a4["excluded"] = "its partner (B, round 4) was left out";
  return {{"schema", "dltune.compare/1"},
          {"a", "current host (nothing changed)"},
          {"b", std::string("training --only vm.swappiness ") + kInjected},
          {"paired", true},
          {"confidence", 0.95},
          {"used_a", 5},
          {"used_b", 5},
          {"primary", "rate"},
          {"method", "signed-rank"},
          {"method_text", "Wilcoxon signed-rank interval on the log ratios of the pairs"},
          {"verdict",
           {{"text", "B is slower by 49% (48%\u201350%)"},
            {"metric", "rate"},
            {"kind", "b-worse"},
            {"effect", -0.49},
            {"effect_low", -0.50},
            {"effect_high", -0.48}}},
          {"metrics",
           {{{"id", "rate"},
             {"label", "throughput"},
             {"unit", "it/s"},
             {"higher_is_better", true},
             {"a", {17.1, 16.9, 17.0, 16.8, 17.2}},
             {"b", {8.7, 8.9, 8.6, 8.8, 8.7}},
             {"median_a", 17.0},
             {"median_b", 8.7},
             {"ratio", 0.512},
             {"low", 0.503},
             {"high", 0.521},
             {"achieved_confidence", 0.938},
             {"method", "signed-rank"},
             {"verdict", "worse"}},
            {{"id", "wall_seconds"},
             {"label", "wall time"},
             {"unit", "s"},
             {"higher_is_better", false},
             {"a", {5.85, 5.92, 5.88, 5.95, 5.81}},
             {"b", {11.49, 11.24, 11.63, 11.36, 11.49}},
             {"median_a", 5.88},
             {"median_b", 11.49},
             {"ratio", 1.954},
             {"low", 1.91},
             {"high", 1.99},
             {"achieved_confidence", 0.938},
             {"method", "signed-rank"},
             {"verdict", "worse"}},
            {{"id", "swap_in_bytes"},
             {"label", "swap-ins (host)"},
             {"unit", "B"},
             {"higher_is_better", false},
             {"a", {0, 4096, 0, 16384, 0}},
             {"b", {3.5e8, 3.6e8, 3.7e8, 3.9e8, 4.0e8}},
             {"median_a", 0},
             {"median_b", 3.7e8},
             {"note", "zero in some runs: no ratio"}}}},
          {"runs", runs},
          {"notes",
           {"B's round 4 failed: its output is in B-04.log", std::string("a note ") + kInjected}}};
}

// Two rounds, one of B failed: no interval anywhere, no verdict.
json too_few_runs() {
  json doc = six_rounds();
  json runs = json::array();
  for (const auto& r : doc["runs"])
    if (!r["warmup"].get<bool>() && r["pair"].get<int>() <= 2) runs.push_back(r);
  runs[3]["used"] = false;
  runs[3]["exit_status"] = 137;
  runs[3]["excluded"] = "the job exited with status 137: a failed run is left out";
  runs[2]["used"] = false;
  runs[2]["excluded"] = "its partner (B, round 2) was left out";
  doc["runs"] = runs;
  doc["used_a"] = 1;
  doc["used_b"] = 1;
  doc.erase("method");
  doc.erase("method_text");
  doc["verdict"] = {{"text",
                     "no verdict: 1 usable run of A and 1 of B (1 left out); a confidence "
                     "interval needs at least 3 of each"},
                    {"metric", "rate"},
                    {"kind", "too-few-runs"}};
  for (auto& m : doc["metrics"]) {
    for (const char* k : {"ratio", "low", "high", "achieved_confidence", "method", "verdict"})
      m.erase(k);
    m["note"] = "too few runs";
  }
  return doc;
}

class CompareChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kChromium, X_OK) != 0)
      GTEST_SKIP() << kChromium << " is missing (apt-get install chromium)";
    dir_ = fs::path(::testing::TempDir()) / fmt::format("compare_chromium_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // The DOM Chromium made of the page in `html`.
  std::string dom_of(const fs::path& html) {
    const auto dom = run_group(chromium(dir_ / ("profile-" + html.stem().string()),
                                        {"--dump-dom", "file://" + html.string()}),
                               dir_, 90);
    EXPECT_EQ(dom.code, 0) << dom.err;
    return dom.out;
  }
  fs::path dir_;
};

TEST_F(CompareChromium, SixRoundsDrawBothChartsAndShowUserTextAsText) {
  const auto html = dir_ / "compare.html";
  const std::string page = dltune::report::compare_html(six_rounds());
  std::ofstream(html, std::ios::binary) << page;
  std::string checked = page;
  const auto body_end = checked.rfind("</body>");
  ASSERT_NE(body_end, std::string::npos);
  checked.insert(body_end, kTooltipChecker);
  std::ofstream(dir_ / "checked.html", std::ios::binary) << checked;
  const std::string dom = dom_of(dir_ / "checked.html");
  ASSERT_NE(dom.find("</body>"), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(body_attribute(dom, "data-error"), std::nullopt);
  EXPECT_EQ(body_attribute(dom, "data-charts"), "2");
  EXPECT_NE(dom.find("<canvas id=\"chart-runs\""), std::string::npos);
  EXPECT_NE(dom.find("<canvas id=\"chart-ratios\""), std::string::npos);
  EXPECT_EQ(dom.find("no confidence interval"), std::string::npos);
  EXPECT_NE(dom.find("B is slower by 49% (48%\u201350%)"), std::string::npos);
  EXPECT_NE(dom.find("data-kind=\"b-worse\""), std::string::npos);
  EXPECT_NE(dom.find("the job exited with status 1: a failed run is left out"), std::string::npos);
  EXPECT_NE(dom.find("zero in some runs: no ratio"), std::string::npos);
  // The label and the note as text, escaped in the serialised DOM; no element made of them (in
  // the data script every '<' is \u003c).
  EXPECT_NE(dom.find("training --only vm.swappiness &lt;script&gt;alert(1)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(dom.find("a note &lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(dom.find("<script>alert(1)"), std::string::npos);

  // The tooltips: a left-out run's says why; a ratio's gives its interval.
  const std::string open_tag = "<pre id=\"tooltips\">";
  const auto at = dom.find(open_tag);
  ASSERT_NE(at, std::string::npos) << "the tooltip checker did not run";
  const auto begin = at + open_tag.size();
  const auto tips =
      json::parse(unescape_html(dom.substr(begin, dom.find("</pre>", begin) - begin)));
  EXPECT_TRUE(any_contains(tips["chart-runs"], {"round 4 |", "B left out: 4.1 it/s (B-04.db) |",
                                                "left out: the job exited with status 1"}))
      << tips.dump(1);
  EXPECT_TRUE(any_contains(tips["chart-runs"], {"round 6 |", "B: 8.7 it/s (B-06.db)"}))
      << tips.dump(1);
  EXPECT_TRUE(any_contains(
      tips["chart-ratios"],
      {"throughput (verdict) |", "B/A 0.512, 95% interval 0.503\u20130.521 (achieved 93.8%)"}))
      << tips.dump(1);

  // A screenshot, kept for people to look at (build/<preset>/test-artifacts/compare.png).
  const auto artifacts = fs::path(DLTUNE_BINARY).parent_path() / "test-artifacts";
  fs::create_directories(artifacts);
  const auto png = artifacts / "compare.png";
  fs::remove(png);
  const auto shot = run_group(
      chromium(dir_ / "profile-shot", {"--screenshot=" + png.string(), "--window-size=1280,1600",
                                       "file://" + html.string()}),
      dir_, 90);
  ASSERT_EQ(shot.code, 0) << shot.err;
  EXPECT_TRUE(fs::exists(png)) << shot.err;
}

TEST_F(CompareChromium, TooFewRunsDrawTheRunsAndSayWhyThereIsNoInterval) {
  const auto html = dir_ / "too-few.html";
  std::ofstream(html, std::ios::binary) << dltune::report::compare_html(too_few_runs());
  const std::string dom = dom_of(html);
  ASSERT_NE(dom.find("</body>"), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(body_attribute(dom, "data-error"), std::nullopt);
  EXPECT_EQ(body_attribute(dom, "data-charts"), "1");
  EXPECT_NE(dom.find("<canvas id=\"chart-runs\""), std::string::npos);
  EXPECT_EQ(dom.find("<canvas id=\"chart-ratios\""), std::string::npos);
  EXPECT_NE(dom.find("no confidence interval: no verdict: 1 usable run of A and 1 of B (1 left "
                     "out); a confidence interval needs at least 3 of each"),
            std::string::npos);
  EXPECT_NE(dom.find("data-kind=\"too-few-runs\""), std::string::npos);
}

}  // namespace

}  // namespace compare_chromium_test

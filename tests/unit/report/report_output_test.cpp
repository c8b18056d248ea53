// Decimation, the JSON document and the HTML page (output.hpp, decimate.hpp).
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "core/local_file.hpp"
#include "report/assets.hpp"
#include "report/decimate.hpp"
#include "report/output.hpp"
#include "unit/report/report_samples.hpp"

namespace dltune::report::report_output_test {
namespace {

using dltune::testing::TempDir;
using dltune::testing::write_recording;
using ::testing::HasSubstr;
using ::testing::Not;

ReportData extract_file(const std::string& path) {
  auto rec = store::Recording::open(path);
  EXPECT_TRUE(rec) << rec.error().message();
  auto d = extract(**rec, {});
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : ReportData{};
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// ---- decimation ------------------------------------------------------------------------------

TEST(ReportDecimate, EachBucketKeepsItsMinimumAndMaximumAtTheirTimes) {
  const std::size_t n = 1000, max_points = 100;
  std::vector<std::int64_t> t(n);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = static_cast<std::int64_t>(i) * 1000;
    v[i] = std::sin(static_cast<double>(i) / 37.0) * 10;
  }
  v[433] = 500;   // a one-sample spike
  v[871] = -300;  // and a one-sample dip
  std::vector<std::int64_t> ot;
  std::vector<double> ov;
  decimate_series(t, v, max_points, ot, ov);
  ASSERT_EQ(ot.size(), ov.size());
  EXPECT_LE(ov.size(), max_points);
  EXPECT_GE(ov.size(), max_points / 2);
  // Every bucket of 20 samples: its min and max are there, at their own times.
  const std::size_t buckets = max_points / 2;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
    const auto mn = std::min_element(v.begin() + lo, v.begin() + hi) - v.begin();
    const auto mx = std::max_element(v.begin() + lo, v.begin() + hi) - v.begin();
    for (auto i : {mn, mx}) {
      const auto at = std::find(ot.begin(), ot.end(), t[i]);
      ASSERT_NE(at, ot.end()) << "bucket " << b << " lost sample " << i;
      EXPECT_EQ(ov[at - ot.begin()], v[i]);
    }
  }
  EXPECT_TRUE(std::is_sorted(ot.begin(), ot.end()));
  EXPECT_EQ(*std::max_element(ov.begin(), ov.end()), 500);
  EXPECT_EQ(*std::min_element(ov.begin(), ov.end()), -300);
}

TEST(ReportDecimate, AllNullBucketsStayAGapAndShortSeriesAreKept) {
  std::vector<std::int64_t> t(40);
  std::vector<double> v(40, 1.0);
  for (std::size_t i = 0; i < 40; ++i) t[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = 10; i < 20; ++i) v[i] = kNull;  // buckets 1 of 4 (10 samples each)
  std::vector<std::int64_t> ot;
  std::vector<double> ov;
  decimate_series(t, v, 8, ot, ov);
  ASSERT_EQ(ov.size(), 4u) << "flat buckets keep one point; the null bucket one null";
  EXPECT_TRUE(std::isnan(ov[1]));
  EXPECT_EQ(ot[1], 10);
  decimate_series(t, v, 40, ot, ov);
  EXPECT_EQ(ov.size(), 40u);
}

TEST(ReportDecimate, TheReportKeepsTheBoundOnEverySeries) {
  TempDir dir;
  write_recording(dir.file("run.db"), 50);
  auto d = extract_file(dir.file("run.db"));
  decimate(d, 10);
  EXPECT_TRUE(d.decimated);
  EXPECT_TRUE(d.time_ms.empty());
  for (const auto& s : d.series) {
    EXPECT_LE(s.values.size(), 10u) << s.id;
    EXPECT_EQ(s.values.size(), s.time_ms.size()) << s.id;
  }
  auto small = extract_file(dir.file("run.db"));
  decimate(small, 4000);
  EXPECT_FALSE(small.decimated);
  EXPECT_EQ(small.time_ms.size(), 50u);
}

// ---- JSON ------------------------------------------------------------------------------------

TEST(ReportJson, RoundTripsTheSeriesWithNullsAndTheMarkers) {
  TempDir dir;
  write_recording(dir.file("run.db"), 8);
  const auto d = extract_file(dir.file("run.db"));
  std::ostringstream out;
  write_json(d, out);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "dltune.report/1");
  EXPECT_EQ(j["recording"]["hostname"], "testhost");
  EXPECT_EQ(j["recording"]["samples"], 8);
  EXPECT_EQ(j["window"]["samples"], 8);
  EXPECT_EQ(j["decimation"]["decimated"], false);
  ASSERT_EQ(j["time_ms"].size(), 8u);
  EXPECT_EQ(j["time_ms"][3].get<std::int64_t>(), d.time_ms[3]);
  ASSERT_EQ(j["series"].size(), d.series.size());
  for (std::size_t k = 0; k < d.series.size(); ++k) {
    const auto& s = d.series[k];
    const auto& js = j["series"][k];
    EXPECT_EQ(js["id"], s.id);
    EXPECT_EQ(js["unit"], s.unit);
    EXPECT_FALSE(js.contains("time_ms"));
    ASSERT_EQ(js["values"].size(), s.values.size());
    for (std::size_t i = 0; i < s.values.size(); ++i) {
      if (std::isnan(s.values[i])) {
        EXPECT_TRUE(js["values"][i].is_null()) << s.id << "[" << i << "]";
      } else {
        EXPECT_NEAR(js["values"][i].get<double>(), s.values[i], std::fabs(s.values[i]) * 1e-5)
            << s.id << "[" << i << "]";
      }
    }
  }
  ASSERT_EQ(j["markers"].size(), d.markers.size());
  EXPECT_EQ(j["markers"][0]["kind"], d.markers[0].kind);
  EXPECT_EQ(j["sections"][0]["charts"][0]["id"], "cpu");
}

TEST(ReportJson, DecimatedSeriesCarryTheirOwnTimes) {
  TempDir dir;
  write_recording(dir.file("run.db"), 30);
  auto d = extract_file(dir.file("run.db"));
  decimate(d, 6);
  std::ostringstream out;
  write_json(d, out);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_FALSE(j.contains("time_ms"));
  EXPECT_EQ(j["decimation"]["max_points"], 6);
  EXPECT_EQ(j["window"]["samples"], 30);
  for (const auto& s : j["series"]) {
    ASSERT_TRUE(s.contains("time_ms")) << s["id"];
    EXPECT_EQ(s["time_ms"].size(), s["values"].size());
    EXPECT_LE(s["values"].size(), 6u);
  }
}

// ---- HTML ------------------------------------------------------------------------------------

const std::string kHostile = "</script><script>alert(1)</script>";

std::string hostile_page() {
  TempDir dir;
  store::RecordingInfo info;
  info.command = {"python", kHostile};
  info.hostname = "<b>host</b>";
  const nlohmann::json events =
      nlohmann::json::array({{{"time_ns", dltune::testing::kT0 + 1'000'000'000},
                              {"kind", kHostile},
                              {"text", kHostile}}});
  const nlohmann::json check = {
      {"profile", "training"},
      {"summary", {{"critical", 1}, {"warn", 0}, {"info", 0}, {"ok", 3}}},
      {"findings", nlohmann::json::array(
                       {{{"id", "vm.swappiness"},
                         {"severity", "critical"},
                         {"summary", kHostile},
                         {"fix", {{"command", "dltune tune apply --only vm.swappiness"}}}}})}};
  const nlohmann::json profile = {{"verdict", kHostile},
                                  {"evidence", nlohmann::json::array({kHostile})}};
  write_recording(dir.file("run.db"), 5, {}, info,
                  {{"events", events}, {"check", check}, {"profile", profile}});
  const auto d = extract_file(dir.file("run.db"));
  std::ostringstream out;
  write_html(d, out, {.recording_path = "/tmp/" + kHostile});
  return out.str();
}

TEST(ReportHtml, EveryRecordedStringIsEscaped) {
  const auto page = hostile_page();
  EXPECT_THAT(page, Not(HasSubstr("<script>alert(1)")));
  EXPECT_THAT(page, Not(HasSubstr("<b>host</b>")));
  EXPECT_THAT(page, HasSubstr("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(page, HasSubstr("&lt;b&gt;host&lt;/b&gt;"));
  // Exactly the page's own three scripts: the data, Chart.js and the report's.
  EXPECT_EQ(count(page, "<script"), 3u);
  EXPECT_EQ(count(page, "</script"), 3u);
  // The data element holds the hostile text as \u003c, and parses back to it.
  const auto open = page.find("<script type=\"application/json\" id=\"dltune-data\">");
  ASSERT_NE(open, std::string::npos);
  const auto begin = page.find('>', open) + 1;
  const auto json =
      nlohmann::json::parse(page.substr(begin, page.find("</script>", begin) - begin));
  EXPECT_EQ(json["recording"]["command"][1], kHostile);
  EXPECT_EQ(json["markers"][1]["text"], kHostile);
}

TEST(ReportHtml, NothingIsLoadedFromTheNetwork) {
  const auto page = hostile_page();
  // No element that fetches: scripts are inline, there are no links, images or frames.
  EXPECT_FALSE(std::regex_search(page, std::regex(R"(<script[^>]*\ssrc\s*=)", std::regex::icase)));
  for (const char* tag : {"<link", "<img", "<iframe", "<object", "<embed", "@import", "url("})
    EXPECT_EQ(page.find(tag), std::string::npos) << tag;
  EXPECT_FALSE(std::regex_search(
      page, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
}

TEST(ReportHtml, ShowsTheFactsFindingsVerdictAndOneCanvasPerChart) {
  const auto page = hostile_page();
  EXPECT_THAT(page, HasSubstr("Check findings"));
  EXPECT_THAT(page, HasSubstr("dltune tune apply --only vm.swappiness"));
  EXPECT_THAT(page, HasSubstr("sev-critical"));
  EXPECT_THAT(page, HasSubstr("Bottleneck verdict"));
  EXPECT_THAT(page, HasSubstr("Chart.js v3.9.1"));
  EXPECT_EQ(count(page, "<canvas"), 16u);  // every section of the known samples: see series test
}

// A distributed job's saved profile: its ranks in a table, the straggler's row marked with its
// cause and action.
TEST(ReportHtml, TheRanksOfASavedProfileWithTheStragglerMarked) {
  TempDir dir;
  const nlohmann::json rank0 = {{"verdict", "Compute-bound"},
                                {"job", {{"pid", 4100}, {"rank", 0}}},
                                {"signals", {{"main.on_cpu", {{"value", 2.5}}}}}};
  const nlohmann::json rank1 = {{"verdict", "Compute-bound " + kHostile},
                                {"job", {{"pid", 4101}, {"rank", 1}}},
                                {"signals", {{"main.on_cpu", {{"value", 99.4}}}}}};
  const nlohmann::json profile = {
      {"verdict", "Compute-bound"},
      {"ranks", nlohmann::json::array({rank0, rank1})},
      {"ranks_compared", "the straggler is rank 1 (pid 4101)"},
      {"straggler",
       {{"pid", 4101}, {"cause", "it does more work per step"}, {"action", "even out the work"}}}};
  write_recording(dir.file("run.db"), 5, {}, {}, {{"profile", profile}});
  std::ostringstream out;
  write_html(extract_file(dir.file("run.db")), out, {});
  const auto page = out.str();
  EXPECT_THAT(page, HasSubstr("<h3>Ranks</h3>"));
  EXPECT_THAT(page, HasSubstr("the straggler is rank 1 (pid 4101)"));
  EXPECT_EQ(count(page, "<tr class=\"straggler\">"), 1u);
  EXPECT_THAT(page, HasSubstr("<tr class=\"straggler\"><td>1</td><td>4101</td>"));
  EXPECT_THAT(page, HasSubstr("<tr><td>0</td><td>4100</td>"));
  EXPECT_THAT(page, HasSubstr("straggler: it does more work per step Action: even out the work"));
  EXPECT_NE(page.find("<td>2%</td>"), std::string::npos) << "2.5% of rank 4100";
  EXPECT_THAT(page, Not(HasSubstr("<script>alert(1)")));
}

TEST(ReportHtml, TheInlinedScriptsCannotEndTheirElement) {
  for (auto text : {chartjs_source(), page_script()}) {
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    EXPECT_EQ(lower.find("</script"), std::string::npos);
    EXPECT_EQ(lower.find("<!--"), std::string::npos);
    EXPECT_GT(text.size(), 1000u);
  }
  EXPECT_THAT(std::string(chartjs_source().substr(0, 200)), HasSubstr("Chart.js v3."));
  EXPECT_EQ(std::string(page_style()).find("</"), std::string::npos);
}

TEST(ReportHtml, EscapesTheFiveCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

// ---- writing ---------------------------------------------------------------------------------

TEST(ReportWrite, RefusesAnExistingFileUnlessForcedAndLeavesNoTemporaryFile) {
  TempDir dir;
  const auto path = dir.file("out.html");
  std::ofstream(path) << "old";
  auto r = dltune::local_file::write(path, false, [](std::ostream& o) { o << "new"; });
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("--force"));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "old");
  ASSERT_TRUE(dltune::local_file::write(path, true, [](std::ostream& o) { o << "new"; }));
  std::ifstream again(path);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), "new");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    ++files;
  EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace dltune::report::report_output_test

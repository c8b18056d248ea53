// The flame graph of a report's window (report/flame.hpp).
#include "report/flame.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace flame_test {

using namespace dltune;

namespace {

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

store::PythonStacks two_stacks() {
  store::PythonStacks p;
  p.interpreter = "CPython 3.11.2";
  for (const auto& [file, fn] : std::vector<std::pair<std::string, std::string>>{
           {"/work/train.py", "main"},
           {"/x/torch/utils/data/_utils/fetch.py", "fetch"},
           {"/work/train.py", "Samples.__getitem__"},
           {"/x/torch/nn/modules/module.py", "Module._call_impl"}}) {
    pystack::Frame f;
    f.file = file;
    f.function = fn;
    p.frames.push_back(f);
  }
  p.stacks = {{2, 1, 0}, {3, 0}};
  p.totals = {75, 25, 0};
  for (std::int64_t t : {1'000, 2'000}) {
    store::StackInterval iv;
    iv.wall_ns = t;
    store::StackCount a;
    a.stack = t == 1'000 ? 0 : 1;
    a.running = t == 1'000 ? 75 : 25;
    iv.counts = {a};
    p.intervals.push_back(iv);
  }
  return p;
}

double width_of(const std::string& svg, const std::string& label) {
  // <title>LABEL — ...</title><rect x=".." y=".." width="W"
  const std::regex re("<title>" + label +
                      " — [^<]*</title><rect x=\"[0-9.]+\" y=\"[0-9]+\" width=\"([0-9.]+)\"");
  std::smatch m;
  if (!std::regex_search(svg, m, re)) return -1;
  return std::stod(m[1].str());
}

}  // namespace

TEST(Flame, FramesAreAsWideAsTheirShareAndColouredByActivity) {
  const auto svg = report::flame_svg(two_stacks(), 0, 10'000);
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(svg.rfind("<svg class=\"flame\"", 0), 0u) << svg;
  // all, main, fetch, __getitem__, _call_impl: five frames.
  EXPECT_EQ(count(svg, "<g class=\"frame\">"), 5u) << svg;
  const double all = width_of(svg, "all");
  const double getitem = width_of(svg, "Samples.__getitem__ \\(train.py\\)");
  const double model = width_of(svg, "Module._call_impl \\(module.py\\)");
  ASSERT_GT(all, 0);
  EXPECT_NEAR(getitem / all, 0.75, 0.01);
  EXPECT_NEAR(model / all, 0.25, 0.01);
  EXPECT_NE(svg.find("#f28e2b"), std::string::npos) << "loading's colour";
  EXPECT_NE(svg.find("#4e79a7"), std::string::npos) << "the model's colour";
  EXPECT_NE(svg.find("75 samples (75.0%)"), std::string::npos);
}

TEST(Flame, OnlyTheWindowsIntervalsAndNothingWhenNoneIsIn) {
  const auto late = report::flame_svg(two_stacks(), 1'500, 10'000);  // the second interval only
  EXPECT_EQ(width_of(late, "Samples.__getitem__ \\(train.py\\)"), -1) << late;
  EXPECT_GT(width_of(late, "Module._call_impl \\(module.py\\)"), 0) << late;
  EXPECT_TRUE(report::flame_svg(two_stacks(), 5'000, 6'000).empty());
  EXPECT_TRUE(report::flame_svg(store::PythonStacks{}, 0, 10'000).empty());
}

TEST(Flame, NamesAreEscaped) {
  auto p = two_stacks();
  p.frames[2].function = "<lambda>&";
  const auto svg = report::flame_svg(p, 0, 10'000);
  EXPECT_EQ(svg.find("<lambda>&"), std::string::npos);
  EXPECT_NE(svg.find("&lt;lambda&gt;&amp;"), std::string::npos);
}

}  // namespace flame_test

// The same families through the JSON sink, docs/metrics.md against what is written, and a
// render into a warm buffer that allocates nothing.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "serve/exposition.hpp"
#include "support/allocations.hpp"
#include "support/build_paths.hpp"
#include "unit/serve/exposition_parser.hpp"
#include "unit/serve/snapshot_fixture.hpp"

namespace dltune::serve::exposition_outputs_test {
namespace {

using testing::full_fixture;
using testing::parse_exposition;

std::string render_text(const Snapshot& s) {
  std::string out;
  TextSink sink(out);
  render(s, sink);
  render_scrapes(1, sink);
  return out;
}

TEST(ExpositionJson, HoldsTheSameFamiliesAndValues) {
  const auto f = full_fixture();
  const auto text = parse_exposition(render_text(f.snapshot()));
  JsonSink sink;
  render(f.snapshot(), sink);
  render_scrapes(1, sink);
  const auto j = sink.take();
  EXPECT_EQ(j["schema"], "dltune.serve/1");
  ASSERT_EQ(j["families"].size(), text.families.size());
  std::size_t k = 0, series = 0;
  for (const auto& fam : j["families"]) {
    const std::string name = fam["name"];
    EXPECT_EQ(name, text.families[k++]);
    EXPECT_EQ(fam["type"], text.type.at(name));
    EXPECT_FALSE(fam["help"].get<std::string>().empty());
    for (const auto& s : fam["samples"]) {
      std::map<std::string, std::string> labels;
      for (const auto& [lk, lv] : s["labels"].items()) labels[lk] = lv.get<std::string>();
      const auto* t = text.find(name, labels);
      ASSERT_TRUE(t) << name << " " << s.dump();
      EXPECT_DOUBLE_EQ(s["value"].get<double>(), t->value) << name;
      ++series;
    }
  }
  EXPECT_EQ(series, text.series.size());
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ExpositionDocs, MetricsMdDocumentsEveryFamilyAndNoOther) {
  const auto doc = slurp(std::string(DLTUNE_SOURCE_DIR) + "/docs/metrics.md");
  ASSERT_FALSE(doc.empty());
  std::set<std::string> documented;
  const std::regex name("`(dltune_[a-z0-9_]+)`");
  for (std::sregex_iterator it(doc.begin(), doc.end(), name), end; it != end; ++it)
    documented.insert((*it)[1].str());
  const auto f = full_fixture();
  const auto e = parse_exposition(render_text(f.snapshot()));
  std::set<std::string> written(e.families.begin(), e.families.end());
  for (const auto& n : written)
    EXPECT_TRUE(documented.count(n)) << n << " is not in docs/metrics.md";
  for (const auto& n : documented)
    EXPECT_TRUE(written.count(n)) << n << " is documented, not written";
  // The documented order is the order written (the rows of the tables, top to bottom).
  std::vector<std::string> rows;
  const std::regex row(R"(^\| `(dltune_[a-z0-9_]+)`)");
  std::istringstream lines(doc);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows.push_back(m[1].str());
  }
  EXPECT_EQ(rows, e.families);
}

TEST(ExpositionCost, AWarmRenderAllocatesNothing) {
  const auto f = full_fixture();
  const auto s = f.snapshot();
  std::string out;
  {
    TextSink sink(out);
    render(s, sink);  // the buffer grows to its size
  }
  const auto size = out.size();
  out.clear();
  dltune::testing::start_counting_allocations();
  {
    TextSink sink(out);
    render(s, sink);
  }
  const long n = dltune::testing::stop_counting_allocations();
  EXPECT_EQ(n, 0) << "allocations in a render into a warm buffer";
  EXPECT_EQ(out.size(), size);
}

}  // namespace
}  // namespace dltune::serve::exposition_outputs_test

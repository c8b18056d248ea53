// bench's options checked into its request before anything is changed: each bad one named.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/bench_choices.hpp"
#include "bench/files.hpp"
#include "support/temp_tree.hpp"

namespace bench_choices_test {

using dltune::bench::BenchChoices;
using dltune::bench::make_request;
using ::testing::HasSubstr;

namespace {

const std::map<std::string, std::string> kEnv = {{"PATH", "/usr/bin:/bin"}};

// Run options as run takes them, here only "--cpu-quota=Q" (enough to tell the sides apart).
dltune::Result<dltune::launch::RunRequest> parse_run(const std::vector<std::string>& args) {
  dltune::launch::RunRequest r;
  r.options.command = {"true"};
  for (const auto& a : args) {
    if (!a.starts_with("--cpu-quota=")) return dltune::fail("run options: unknown", a);
    r.options.cpu_quota = a.substr(12);
  }
  return r;
}

BenchChoices choices() {
  BenchChoices c;
  c.command = {"true"};
  c.b.sets = {"vm.swappiness=10"};
  return c;
}

}  // namespace

TEST(BenchChoices, TheChoicesBecomeTheRequest) {
  auto c = choices();
  c.run_args = {"--cpu-quota=0.5"};
  c.runs = 4;
  c.warmup = 0;
  c.order = "ab";
  c.confidence = 90;
  c.interval_ns = 500'000'000;
  c.rate_regex = R"(([0-9.]+) it/s)";
  auto r = make_request(dltune::host::Root(), c, kEnv, {}, parse_run);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->command, c.command);
  EXPECT_EQ(r->runs, 4);
  EXPECT_EQ(r->warmup, 0);
  EXPECT_FALSE(r->abba);
  EXPECT_DOUBLE_EQ(r->confidence, 0.90);
  EXPECT_EQ(r->interval_ns, 500'000'000);
  EXPECT_TRUE(r->rate_regex.has_value());
  EXPECT_EQ(r->a.run.options.cpu_quota, "0.5") << "--run is for both sides";
  EXPECT_EQ(r->b.run.options.cpu_quota, "0.5");
  EXPECT_TRUE(r->b.plan.has_value()) << "B's --set is planned from the host";
}

TEST(BenchChoices, EachBadChoiceIsNamed) {
  const dltune::testing::TempTree tree;
  const std::string existing = (tree.dir() / "old.html").string();
  std::ofstream(existing) << "x";
  struct Case {
    void (*set)(BenchChoices&, const std::string&);
    const char* expected;
  };
  const Case cases[] = {
      {[](BenchChoices& c, const std::string&) { c.command.clear(); }, "COMMAND"},
      {[](BenchChoices& c, const std::string&) { c.command = {"dltune-no-such-program"}; },
       "dltune-no-such-program"},
      {[](BenchChoices& c, const std::string&) { c.rate_regex = "(["; }, "--rate-regex"},
      {[](BenchChoices& c, const std::string& f) { c.html = f; }, "--html"},
      {[](BenchChoices& c, const std::string&) { c.b.profile = "no-such-profile"; },
       "no-such-profile"},
      {[](BenchChoices& c, const std::string&) { c.a.run_args = {"--nope"}; }, "--nope"},
  };
  for (const auto& k : cases) {
    auto c = choices();
    k.set(c, existing);
    auto r = make_request(dltune::host::Root(), c, kEnv, {}, parse_run);
    ASSERT_FALSE(r) << k.expected;
    EXPECT_THAT(r.error().message(), HasSubstr(k.expected));
  }
}

}  // namespace bench_choices_test

namespace bench_choices_test {

// compare's --html is checked before anything is read: never one of the inputs, an existing file
// only with --force.
TEST(CompareChoices, HtmlIsCheckedFirst) {
  const dltune::testing::TempTree tree;
  const std::string tmpl = tree.dir().string();
  const std::string a = tmpl + "/a.db", b = tmpl + "/b.db";
  std::ofstream(a) << "not a recording";
  std::ofstream(b) << "not a recording";
  dltune::bench::CompareChoices c;
  c.paths = {a, b};
  c.html = a;
  auto same = dltune::bench::compare_choices(c);
  ASSERT_FALSE(same);
  EXPECT_THAT(same.error().message(), HasSubstr("--html"));
  c.force = true;
  auto forced = dltune::bench::compare_choices(c);
  ASSERT_FALSE(forced);
  EXPECT_THAT(forced.error().message(), HasSubstr("--html")) << "an input, --force or not";
  c.html = b;
  c.paths = {a};
  c.a = {a};
  c.b = {a};
  c.force = false;
  auto existing = dltune::bench::compare_choices(c);
  ASSERT_FALSE(existing);
  EXPECT_THAT(existing.error().message(), HasSubstr("--html"));
  // With a free output the inputs themselves are read, and refused for what they are.
  c.html = tmpl + "/page.html";
  c.paths = {a, b};
  c.a.clear();
  c.b.clear();
  auto read = dltune::bench::compare_choices(c);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message(), ::testing::Not(HasSubstr("--html")));
  std::ifstream in(a);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "not a recording");
}

}  // namespace bench_choices_test

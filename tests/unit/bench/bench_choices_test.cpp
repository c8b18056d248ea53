// bench's options checked into its request before anything is changed: each bad one named.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/bench_choices.hpp"

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
  std::string tmpl = ::testing::TempDir() + "dltune_bench_choices_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string existing = tmpl + "/old.html";
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
  ::unlink(existing.c_str());
  ::rmdir(tmpl.c_str());
}

}  // namespace bench_choices_test

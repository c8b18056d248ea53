// run's options checked into the request run_job takes: every option is checked before anything
// is done, and an error names the option.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "record/run_invocation.hpp"
#include "support/temp_tree.hpp"

namespace run_invocation_test {

using dltune::record::make_invocation;
using dltune::record::RunChoices;
using dltune::record::RunContext;
using ::testing::HasSubstr;

namespace {

const std::vector<std::string> kCommand = {"python3", "train.py"};

}  // namespace

TEST(RunInvocation, TheChoicesBecomeTheRequest) {
  RunChoices c;
  c.options.cpus = "0-1";
  c.options.memory = "4G";
  c.as_root = true;
  c.watch_stdout = true;
  c.rate_regex = R"(([0-9.]+) it/s)";
  c.json_path = "-";
  RunContext context;
  context.environment = {{"PATH", "/usr/bin"}};
  auto inv = make_invocation(c, kCommand, dltune::host::Root(), context);
  ASSERT_TRUE(inv) << inv.error().message();
  EXPECT_EQ(inv->request.options.command, kCommand);
  EXPECT_EQ(inv->request.options.cpus, "0-1");
  EXPECT_EQ(inv->request.options.memory, "4G");
  EXPECT_TRUE(inv->request.keep_root);
  EXPECT_TRUE(inv->request.watch_stdout);
  EXPECT_TRUE(inv->request.rate_regex.has_value());
  ASSERT_TRUE(inv->request.profile.has_value());
  EXPECT_EQ(inv->request.environment.at("PATH"), "/usr/bin");
  EXPECT_FALSE(inv->request.unique.empty());
  EXPECT_EQ(inv->json_path, "-");
  EXPECT_TRUE(inv->request.stdout_to_stderr) << "--json -: the job's output goes to stderr";
  EXPECT_FALSE(inv->recording.has_value());
}

TEST(RunInvocation, ARecordingIsAFileWithTheIntervalAndNoticeGiven) {
  const dltune::testing::TempTree tree;
  const std::string dir = tree.dir().string();
  RunChoices c;
  c.record = dir + "/job.db";
  c.record_interval_ns = 250'000'000;
  std::string said;
  RunContext context;
  context.notice = [&](const std::string& n) { said = n; };
  auto inv = make_invocation(c, kCommand, dltune::host::Root(), context);
  ASSERT_TRUE(inv) << inv.error().message();
  ASSERT_TRUE(inv->recording.has_value());
  EXPECT_EQ(inv->recording->setup.path, dir + "/job.db");
  EXPECT_EQ(inv->recording->setup.interval_ns, 250'000'000);
  ASSERT_TRUE(inv->recording->setup.notice);
  inv->recording->setup.notice("hello");
  EXPECT_EQ(said, "hello");
  EXPECT_FALSE(inv->request.stdout_to_stderr);
}

TEST(RunInvocation, EachBadOptionIsNamed) {
  const dltune::testing::TempTree tree;
  const std::string existing = (tree.dir() / "old.db").string();
  std::ofstream(existing) << "x";
  struct Case {
    void (*set)(RunChoices&, const std::string&);
    std::string expected;
  };
  const Case cases[] = {
      {[](RunChoices& c, const std::string&) { c.record = "-"; }, "--record -"},
      {[](RunChoices& c, const std::string& f) { c.record = f; }, "--record: "},
      {[](RunChoices& c, const std::string& f) { c.json_path = f; }, "--json: "},
      {[](RunChoices& c, const std::string&) { c.profile = "no-such-profile"; }, "profile: "},
      {[](RunChoices& c, const std::string&) { c.rate_regex = "([0-9"; }, "--rate-regex"},
  };
  for (const auto& k : cases) {
    RunChoices c;
    k.set(c, existing);
    auto inv = make_invocation(c, kCommand, dltune::host::Root(), {});
    ASSERT_FALSE(inv) << k.expected;
    EXPECT_THAT(inv.error().message(), HasSubstr(k.expected));
  }
  // --force lets both outputs replace the file.
  RunChoices c;
  c.record = existing;
  c.json_path = existing;
  c.force = true;
  EXPECT_TRUE(make_invocation(c, kCommand, dltune::host::Root(), {}));
  std::ifstream in(existing);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "x") << "nothing was written";
}

}  // namespace run_invocation_test

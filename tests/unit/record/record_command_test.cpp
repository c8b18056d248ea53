// `record`'s choices: each bad one refused before any file is made, a job that cannot start
// leaves none, and a job's exit status is the command's.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "record/record_command.hpp"
#include "support/temp_tree.hpp"

namespace record_command_test {

using dltune::record::record_command;
using dltune::record::RecordChoices;
using dltune::record::RecordContext;
using ::testing::HasSubstr;

namespace {

bool exists(const std::string& p) {
  return ::access(p.c_str(), F_OK) == 0;
}

RecordContext context() {
  RecordContext c;
  c.environment = {{"PATH", "/usr/bin:/bin"}};
  return c;
}

}  // namespace

TEST(RecordCommand, EachBadChoiceIsRefusedAndNoFileIsMade) {
  const dltune::testing::TempTree tree;
  const std::string out = (tree.dir() / "r.db").string();
  struct Case {
    void (*set)(RecordChoices&);
    const char* expected;
  };
  const Case cases[] = {
      {[](RecordChoices& c) { c.output.clear(); }, "-o FILE"},
      {[](RecordChoices& c) { c.output = "-"; }, "not a stream"},
      {[](RecordChoices& c) { c.pid = ::getpid(); }, "not both"},
      {[](RecordChoices& c) { c.cgroup = "relative/path"; }, "--cgroup"},
      {[](RecordChoices& c) { c.command = {"dltune-no-such-program"}; }, "dltune-no-such-program"},
  };
  for (const auto& k : cases) {
    RecordChoices c;
    c.output = out;
    c.command = {"true"};
    c.gpus = false;
    k.set(c);
    if (std::string(k.expected) == "--cgroup") c.command.clear();
    auto r = record_command(dltune::host::Root(), c, context());
    ASSERT_FALSE(r) << k.expected;
    EXPECT_TRUE(r.error().bad_input);
    EXPECT_THAT(r.error().error.message(), HasSubstr(k.expected));
    EXPECT_FALSE(exists(out)) << k.expected;
  }
  // An existing file is kept without --force.
  std::ofstream(out) << "x";
  RecordChoices c;
  c.output = out;
  c.command = {"true"};
  auto kept = record_command(dltune::host::Root(), c, context());
  ASSERT_FALSE(kept);
  std::ifstream in(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "x");
}

TEST(RecordCommand, AJobIsRecordedAndItsExitStatusIsTheCommands) {
  const dltune::testing::TempTree tree;
  const std::string dir = tree.dir().string();
  for (const auto& [program, status] : {std::pair{"true", 0}, std::pair{"false", 1}}) {
    RecordChoices c;
    c.output = dir + "/" + program + ".db";
    c.command = {program};
    c.interval_ns = 50'000'000;
    c.gpus = false;
    c.quiet = true;
    auto r = record_command(dltune::host::Root(), c, context());
    ASSERT_TRUE(r) << r.error().error.message();
    EXPECT_EQ(*r, status) << program;
    EXPECT_TRUE(exists(c.output)) << program;
  }
}

}  // namespace record_command_test

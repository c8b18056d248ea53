// core/program: a real program run with argv, its output and status read, a deadline kept.
#include "core/program.hpp"

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace program_test {

using dltune::program::Options;
using dltune::program::run;
using ::testing::HasSubstr;

TEST(Program, ReadsBothStreamsAndTheExitStatusWithoutAShell) {
  // The words reach the program as they are: no shell expands "$HOME" or splits "a b".
  const auto r =
      run({"sh", "-c", "printf '%s|' \"$0\" \"$1\"; echo oops >&2; exit 3", "$HOME", "a b"});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->out, "$HOME|a b|");
  EXPECT_EQ(r->err, "oops\n");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->failure("sh"), "sh: exit 3: oops");
}

TEST(Program, AProgramPastItsDeadlineIsKilled) {
  Options o;
  o.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const auto r = run({"sleep", "30"}, o);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, 9);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_THAT(r->failure("sleep"), HasSubstr("did not answer in time"));
}

TEST(Program, AMissingProgramIsAnErrorNamingIt) {
  const auto r = run({"dltune-no-such-program"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "cannot run dltune-no-such-program: No such file or directory");
  EXPECT_FALSE(run({}));
}

TEST(Program, TheEnvironmentIsTheOneGivenAndOutputBeyondTheCapIsDropped) {
  Options o;
  o.env = std::map<std::string, std::string>{{"ONLY", "this"}, {"PATH", "/usr/bin:/bin"}};
  o.max_output = 10;
  const auto r = run({"sh", "-c", "echo \"$ONLY $HOME\"; head -c 100000 /dev/zero"}, o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->out, "this \n" + std::string(4, '\0'));
  EXPECT_EQ(r->exit_code, 0);
}

}  // namespace program_test

// The job's command line taken out of the program's arguments before CLI11 parses them.
#include <gtest/gtest.h>

#include "options/options.hpp"

namespace dashdash_test {

using dltune::options::take_after_dashdash;

TEST(TakeAfterDashdash, OnlyAfterACommandThatRunsAJobAndOnlyTheFirst) {
  const std::vector<std::string> jobs = {"run", "record", "profile", "bench"};
  std::vector<std::string> args = {"run", "--cpus", "0-3", "--", "python", "-m", "x", "--", "y"};
  const auto job = take_after_dashdash(args, jobs);
  ASSERT_TRUE(job);
  EXPECT_EQ(*job, (std::vector<std::string>{"python", "-m", "x", "--", "y"}));
  EXPECT_EQ(args, (std::vector<std::string>{"run", "--cpus", "0-3"}));
  // "--" alone at the end: an empty command (run refuses it itself).
  std::vector<std::string> bare = {"record", "-o", "f", "--"};
  EXPECT_EQ(take_after_dashdash(bare, jobs), std::vector<std::string>{});
  EXPECT_EQ(bare.size(), 3u);
  // Another command's "--" is CLI11's to parse; no "--" at all: nothing taken.
  for (std::vector<std::string> other :
       {std::vector<std::string>{"check", "--", "run"}, std::vector<std::string>{"run", "x"}}) {
    const auto before = other;
    EXPECT_FALSE(take_after_dashdash(other, jobs));
    EXPECT_EQ(other, before);
  }
}

}  // namespace dashdash_test

// The job's command: what came after "--", and any word CLI11 left refused, named.
TEST(JobCommand, TheWordsAfterDashdashAndNothingLeftOver) {
  using dltune::options::job_command;
  const std::vector<std::string> job = {"python3", "train.py", "--lr", "1"};
  EXPECT_EQ(job_command({}, job, "run").value(), job);
  EXPECT_EQ(job_command({}, std::nullopt, "record").value(), std::vector<std::string>{});
  const struct {
    std::vector<std::string> remaining;
    bool dashdash;
    const char* expected;
  } cases[] = {
      {{"--nope"}, true, "unknown option --nope (dltune run --help"},
      {{"--nope"}, false, "unknown option --nope (dltune run --help"},
      {{"extra"}, true, "unexpected extra before --"},
      {{"python3"}, false, "unexpected python3: the job's COMMAND comes after -- (dltune run"},
  };
  for (const auto& c : cases) {
    auto r = job_command(c.remaining, c.dashdash ? std::optional(job) : std::nullopt, "run");
    ASSERT_FALSE(r) << c.expected;
    EXPECT_NE(r.error().message().find(c.expected), std::string::npos) << r.error().message();
  }
}

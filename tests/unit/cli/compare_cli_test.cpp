// `dltune compare` on recordings made with `record --pid` (the way its own error suggests): a
// process dltune did not start has no exit status, and that is not a failure.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace compare_cli_test {

namespace {

using dltune::testing::run;
using dltune::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

// A recording of a running process for one second, as a user makes one by hand.
void record_pid(const std::string& path) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::execl("/bin/sleep", "sleep", "30", nullptr);
    ::_exit(127);
  }
  const auto r = run({DLTUNE_BINARY, "record", "--pid", std::to_string(child), "--duration", "1s",
                      "--interval", "200ms", "--no-gpus", "-q", "-o", path});
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(CompareCli, RecordingsOfARunningProcessArePairedInTurnAndNotFailures) {
  TempDir dir;
  // A B A B, one after the other.
  for (const char* name : {"a1.db", "b1.db", "a2.db", "b2.db"}) record_pid(dir.file(name));
  const auto r = run({DLTUNE_BINARY, "compare", "--json", "-a", dir.file("a1.db"), "-a",
                      dir.file("a2.db"), "-b", dir.file("b1.db"), "-b", dir.file("b2.db")});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // two runs a side: the table, no verdict
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j["paired"], true);
  EXPECT_EQ(j["used_a"], 2);
  EXPECT_EQ(j["used_b"], 2);
  for (const auto& run : j["runs"]) {
    EXPECT_TRUE(run["used"].get<bool>()) << run.dump();
    EXPECT_TRUE(run["exit_status"].is_null()) << run.dump();
  }
  EXPECT_THAT(j.dump(), Not(HasSubstr("exited with status")));
  EXPECT_THAT(j.dump(), Not(HasSubstr("not made in turn")));
  EXPECT_THAT(j["verdict"]["text"].get<std::string>(), HasSubstr("at least 3"));
}

}  // namespace

}  // namespace compare_cli_test

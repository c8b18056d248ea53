// `--root DIR` means that tree and nothing else: no fact of the live host (hwloc's topology
// included) comes into a report on a sparse tree, and an empty or non-tree path is bad input.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace root_cli_test {

namespace {

namespace fs = std::filesystem;
using dltune::testing::run;
using dltune::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(RootCli, ATreeWithAnEmptyProcGivesUnknownsNeverTheLiveHostsFacts) {
  TempDir dir;
  fs::create_directories(dir.file("tree/proc"));
  const auto r = run({DLTUNE_BINARY, "env", "--json", "--root", dir.file("tree")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("hwloc")));  // no library's own messages
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  // This machine has CPUs, a hostname and a kernel; the tree has none of them.
  EXPECT_FALSE(j["cpu"].contains("threads")) << j["cpu"].dump();
  EXPECT_FALSE(j["cpu"].contains("cores")) << j["cpu"].dump();
  EXPECT_TRUE(!j["cpu"].contains("numa_nodes") || j["cpu"]["numa_nodes"].empty());
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  EXPECT_THAT(r.out, Not(HasSubstr("\"" + std::string(host) + "\"")));
  EXPECT_FALSE(j["os"].contains("kernel_release")) << j["os"].dump();
}

// hwloc gives up on a CPU directory without topology files and falls back to counting this
// machine's CPUs: such a tree has no topology, and hwloc says nothing on stderr.
TEST(RootCli, ACpuDirectoryWithoutTopologyFilesGivesNoTopology) {
  TempDir dir;
  fs::create_directories(dir.file("tree/sys/devices/system/cpu/cpu0/cpufreq"));
  std::ofstream(dir.file("tree/sys/devices/system/cpu/online")) << "0\n";
  const auto r = run({DLTUNE_BINARY, "env", "--json", "--root", dir.file("tree")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("hwloc")));
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_FALSE(j["cpu"].contains("threads")) << j["cpu"].dump();
  EXPECT_EQ(j["cpu"]["online"], "0");
}

TEST(RootCli, AnEmptyOrNonTreeRootIsBadInputForEveryCommandThatTakesOne) {
  TempDir dir;
  fs::create_directories(dir.file("not-a-tree/data"));
  for (const std::string command : {"env", "check", "doctor"})
    for (const auto& bad : {std::string(), dir.file("not-a-tree"), dir.file("missing")}) {
      const auto r = run({DLTUNE_BINARY, command, "--root", bad});
      EXPECT_EQ(r.exit_code, 2) << command << " --root '" << bad << "': " << r.err;
      EXPECT_THAT(r.err, HasSubstr("dltune " + command + ": --root")) << command;
      EXPECT_TRUE(r.out.empty()) << command << " --root '" << bad << "'";
    }
  const auto tune = run({DLTUNE_BINARY, "tune", "plan", "--root", ""});
  EXPECT_EQ(tune.exit_code, 2) << tune.err;
  EXPECT_THAT(tune.err, HasSubstr("--root ''"));
}

}  // namespace

}  // namespace root_cli_test

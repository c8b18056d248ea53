// The real binary: exit codes and errors for bad input, and the text and JSON outputs.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "support/temp_tree.hpp"

namespace env_cli_test {

using dltune::testing::run;

TEST(EnvCli, RootThatDoesNotExistIsBadInput) {
  const auto r = run({DLTUNE_BINARY, "env", "--root", "/nonexistent/host/tree"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("--root"), std::string::npos);
  EXPECT_NE(r.err.find("/nonexistent/host/tree"), std::string::npos);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos);
  // One error, one line.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(EnvCli, RootThatIsNotAHostTreeIsBadInput) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "not_a_host_tree";
  std::filesystem::create_directories(dir / "stuff");
  const auto r = run({DLTUNE_BINARY, "env", "--root", dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a host tree"), std::string::npos);
  const auto f = run({DLTUNE_BINARY, "env", "--root", "/etc/hostname"});
  EXPECT_EQ(f.exit_code, 2);
  EXPECT_NE(f.err.find("not a directory"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(EnvCli, UnknownOptionIsBadInput) {
  const auto r = run({DLTUNE_BINARY, "env", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos);
}

TEST(EnvCli, HelpDescribesTheCommand) {
  const auto r = run({DLTUNE_BINARY, "env", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--root"), std::string::npos);
  EXPECT_NE(r.out.find("--json"), std::string::npos);
  EXPECT_NE(r.out.find("DLTUNE_NVML_LIBRARY"), std::string::npos);
}

TEST(EnvCli, GarbledFilesInATreeAreListedAsUnknownAndEverythingElseIsStillThere) {
  dltune::testing::TempTree t;
  t.write("proc/sys/kernel/osrelease", "5.15.0-105-generic\n")
      .write("proc/meminfo", "MemTotal: lots\n")
      .write("proc/self/mountinfo", "garbage\n")
      .unreadable("proc/cmdline");
  const auto r = run({DLTUNE_BINARY, "env", "--root", t.dir().string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("5.15.0-105-generic"), std::string::npos);
  EXPECT_NE(r.out.find("Unknown (could not be read)"), std::string::npos);
  EXPECT_NE(r.out.find("/proc/meminfo"), std::string::npos);
  EXPECT_NE(r.out.find("/proc/cmdline"), std::string::npos);
  const auto j = run({DLTUNE_BINARY, "env", "--json", "--root", t.dir().string()});
  ASSERT_EQ(j.exit_code, 0);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["os"]["kernel_release"], "5.15.0-105-generic");
  std::set<std::string> paths;
  for (const auto& p : doc["problems"]) paths.insert(p["path"].get<std::string>());
  EXPECT_TRUE(paths.count("/proc/meminfo"));
  EXPECT_TRUE(paths.count("/proc/self/mountinfo"));
  EXPECT_TRUE(paths.count("/proc/cmdline"));
}

}  // namespace env_cli_test

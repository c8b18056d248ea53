// Faults at each point of `dltune run`'s cgroup set-up, injected through host::Root
// with DLTUNE_TEST_FAULT at the very system call that would fail on a real host: the mkdir(2) of
// each hierarchy's job group, and the open(2) and write(2) of each limit. Each must stop the run
// before the job starts (exit 1), name the file and the errno, and leave no cgroup behind; and
// `record` must survive a source that fails to read and leave a recording that opens.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/recording.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace run_fault_live_test {

using dltune::testing::run;
using dltune::testing::RunResult;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> leftovers(const std::string& name) {
  std::vector<std::string> out;
  for (const auto& h : fs::directory_iterator("/sys/fs/cgroup"))
    for (const auto& p : {h.path() / "dltune" / name, fs::path("/sys/fs/cgroup/dltune") / name})
      if (fs::exists(p)) out.push_back(p.string());
  return out;
}

// Whether this host's cgroups take an I/O weight (`run --io-weight`): v1's blkio needs an I/O
// scheduler with weights (BFQ: blkio.bfq.weight; CFQ on old kernels: blkio.weight), which a
// kernel without BFQ (this VM's Firecracker kernel) lacks; cgroup v2 with its io controller.
bool host_takes_io_weight() {
  const fs::path blkio = "/sys/fs/cgroup/blkio";
  if (fs::exists(blkio / "blkio.bfq.weight") || fs::exists(blkio / "blkio.weight")) return true;
  std::FILE* f = std::fopen("/sys/fs/cgroup/cgroup.controllers", "r");
  if (f == nullptr) return false;
  char buf[512] = {};
  const auto n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string controllers(buf, n);
  return (" " + controllers).find(" io") != std::string::npos;
}

std::string explain(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstderr:\n" + r.err;
}

class RunFaultLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "run creates cgroups: needs root";
    if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
    name_ = "fault-" + std::to_string(::getpid());
    io_weight_ = host_takes_io_weight();
    if (!io_weight_)
      std::fprintf(stderr,
                   "note: this host's cgroups take no I/O weight (no BFQ): the runs go without "
                   "--io-weight, one limit fewer\n");
  }
  void TearDown() override {
    if (name_.empty()) return;
    const auto left = leftovers(name_);
    EXPECT_TRUE(left.empty()) << left.front();
  }
  // A job with every limit run sets on this host, under `fault`.
  // The I/O weight only where the host takes one (host_takes_io_weight): elsewhere run refuses it
  // before any fault could be reached.
  RunResult run_with(const std::string& fault) const {
    std::vector<std::string> argv = {DLTUNE_BINARY, "run",          "--quiet", "--name",
                                     name_,         "--memory",     "300M",    "--cpu-quota",
                                     "1.5",         "--cpu-weight", "200"};
    if (io_weight_) argv.insert(argv.end(), {"--io-weight", "200"});
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", "echo started > /dev/null"});
    return run(argv, {{"DLTUNE_TEST_FAULT", fault}});
  }
  // The limits written: memory, quota and weight, and the I/O weight where the host takes one.
  int limits_written() const { return io_weight_ ? 4 : 3; }
  // Fails the Nth call of `op` on the job's own files for N = 1, 2, ... until a run gets past
  // every such call; each failed run must say what failed and leave nothing. Returns the number
  // of points that were failed.
  int fail_each(const std::string& op, const std::string& path, const std::string& errno_name,
                const std::string& errno_text) {
    int points = 0;
    for (int n = 1; n <= 40; ++n) {
      const auto r = run_with(op + ":" + path + ":" + errno_name + ":" + std::to_string(n));
      EXPECT_TRUE(leftovers(name_).empty()) << op << " #" << n << " left a cgroup\n" << r.err;
      if (r.exit_code == 0) return points;  // past every call of op
      ++points;
      EXPECT_EQ(r.exit_code, 1) << op << " #" << n << "\n" << explain(r);
      EXPECT_NE(r.err.find(errno_text), std::string::npos) << op << " #" << n << "\n" << r.err;
      EXPECT_NE(r.err.find("/sys/fs/cgroup/"), std::string::npos)
          << op << " #" << n << ": the file is not named\n"
          << r.err;
      EXPECT_NE(r.err.find("nothing was started"), std::string::npos) << r.err;
      if (::testing::Test::HasFailure()) return points;
    }
    ADD_FAILURE() << op << ": still failing after 40 calls";
    return points;
  }

  std::string name_;
  bool io_weight_ = false;
};

TEST_F(RunFaultLive, EachMkdirOfTheJobsGroupsFailingLeavesNothing) {
  // The job's group in each hierarchy it uses (cpu, memory, blkio, cpuset, the cgroup2 mount).
  const int points = fail_each("make_directory", "/sys/fs/cgroup/*dltune/" + name_, "ENOSPC",
                               std::strerror(ENOSPC));
  EXPECT_GE(points, 2) << "expected a group in more than one hierarchy on this v1 host";
}

TEST_F(RunFaultLive, EachLimitTheKernelRefusesLeavesNothing) {
  const int points = fail_each("write_virtual", "/sys/fs/cgroup/*dltune/" + name_ + "/*", "EINVAL",
                               std::strerror(EINVAL));
  EXPECT_GE(points, limits_written()) << "memory, quota, weight (and io weight) are each written";
}

TEST_F(RunFaultLive, EachLimitFileThatCannotBeOpenedLeavesNothing) {
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"EACCES", std::strerror(EACCES)}, {"EROFS", std::strerror(EROFS)}}) {
    const int points =
        fail_each("write_virtual.open", "/sys/fs/cgroup/*dltune/" + name_ + "/*", name, text);
    EXPECT_GE(points, limits_written()) << name;
  }
}

TEST(RecordFaultLive, ASourceThatFailsMidRecordingIsNamedAndTheRecordingKeepsItsSamples) {
  if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
  const auto dir =
      fs::temp_directory_path() / ("dltune-record-fault-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto db = (dir / "r.db").string();
  // The 4th read of /proc/meminfo fails with EIO: record stops there, says why, and what it
  // recorded before stays a recording that opens, finished.
  const auto r = run({DLTUNE_BINARY, "record", "--interval", "100ms", "--duration", "2s", "-o", db},
                     {{"DLTUNE_TEST_FAULT", "read:/proc/meminfo:EIO:4"}});
  EXPECT_EQ(r.exit_code, 1) << explain(r);
  EXPECT_NE(r.err.find("cannot read /proc/meminfo: " + std::string(std::strerror(EIO))),
            std::string::npos)
      << explain(r);
  const auto report = run({DLTUNE_BINARY, "report", "--format", "json", db, "-o", "-"});
  ASSERT_EQ(report.exit_code, 0) << explain(report);
  const auto j = nlohmann::json::parse(report.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << report.out.substr(0, 300);
  EXPECT_GE(j["recording"]["samples"].get<int>(), 2) << report.out.substr(0, 600);
  fs::remove_all(dir);
}

// A source cut short (half of /proc/stat, /proc/meminfo, /proc/vmstat or a process's stat) or
// one that vanishes for a moment (PSI, a process's io): record either goes on or stops naming
// the file, never crashes, and what it wrote is a recording whose every sample reads back.
TEST(RecordFaultLive, ASourceCutShortOrVanishingIsSurvivedOrNamedAndTheRecordingReads) {
  if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
  const auto dir =
      fs::temp_directory_path() / ("dltune-record-short-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> faults = {
      {"read.short:/proc/stat:EIO:4", "/proc/stat"},
      {"read.short:/proc/meminfo:EIO:4", "/proc/meminfo"},
      {"read.short:/proc/vmstat:EIO:4", "/proc/vmstat"},
      {"read.short:/proc/*/stat:EIO:6", "/stat"},
      {"read:/proc/pressure/*:ENOENT:5", "/proc/pressure/"},
      {"read:/proc/*/io:ENOENT:4", "/io"},
  };
  std::string survived, stopped;
  for (const auto& [fault, file] : faults) {
    const auto db = (dir / "r.db").string();
    fs::remove(db);
    const auto r = run({DLTUNE_BINARY, "record", "--interval", "100ms", "--duration", "700ms",
                        "--no-gpus", "-o", db, "--", "/bin/sleep", "1"},
                       {{"DLTUNE_TEST_FAULT", fault}});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << fault << "\n" << explain(r);
    if (r.exit_code == 1) {
      stopped += " " + fault;
      EXPECT_NE(r.err.find(file), std::string::npos) << fault << "\n" << explain(r);
    } else {
      survived += " " + fault;
    }
    auto rec = dltune::store::Recording::open(db);
    ASSERT_TRUE(rec) << fault << ": " << rec.error().message();
    EXPECT_GE((*rec)->size(), 2u) << fault;
    for (std::size_t i = 0; i < (*rec)->size(); ++i) {
      auto s = (*rec)->at(i);
      ASSERT_TRUE(s) << fault << ", sample " << i << ": " << s.error().message();
    }
  }
  std::printf("[ record ] went on past:%s\n[ record ] stopped, naming the file, at:%s\n",
              survived.c_str(), stopped.c_str());
  fs::remove_all(dir);
}

}  // namespace

}  // namespace run_fault_live_test

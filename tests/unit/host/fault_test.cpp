// Fault injection through host::Root (host/fault.hpp): the DLTUNE_TEST_FAULT text, which call
// fails, and that the failure looks exactly like the kernel's.
#include "host/fault.hpp"
#include "support/build_paths.hpp"

#include <cstring>
#include <filesystem>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "host/root.hpp"
#include "support/temp_tree.hpp"

namespace fault_test {

using namespace dltune;
using host::Fault;
using host::FaultOp;
namespace fs = std::filesystem;

TEST(FaultSpec, ParsesEntriesWithColonsInPathsAndAnOptionalCount) {
  auto f = host::parse_faults(
      "write_atomic.rename:/etc/sysctl.d/90-dltune.conf:EIO; "
      "read:/sys/bus/pci/devices/0000:00:1e.0/numa_node:EACCES:3;;remove_file:/etc/x*:EROFS");
  ASSERT_TRUE(f) << f.error().message();
  ASSERT_EQ(f->size(), 3u);
  EXPECT_EQ((*f)[0].op, FaultOp::kAtomicRename);
  EXPECT_EQ((*f)[0].path, "/etc/sysctl.d/90-dltune.conf");
  EXPECT_EQ((*f)[0].err, EIO);
  EXPECT_EQ((*f)[0].nth, 0);
  EXPECT_EQ((*f)[1].op, FaultOp::kRead);
  EXPECT_EQ((*f)[1].path, "/sys/bus/pci/devices/0000:00:1e.0/numa_node");
  EXPECT_EQ((*f)[1].err, EACCES);
  EXPECT_EQ((*f)[1].nth, 3);
  EXPECT_EQ((*f)[2].op, FaultOp::kRemove);
  EXPECT_EQ((*f)[2].err, EROFS);
}

TEST(FaultSpec, EveryOperationNameRoundTrips) {
  for (auto op : {FaultOp::kRead, FaultOp::kWriteVirtualOpen, FaultOp::kWriteVirtual,
                  FaultOp::kAtomicOpen, FaultOp::kAtomicWrite, FaultOp::kAtomicShortWrite,
                  FaultOp::kAtomicFsync, FaultOp::kAtomicRename, FaultOp::kRemove}) {
    const auto name = host::fault_op_name(op);
    EXPECT_NE(name, "?");
    EXPECT_EQ(host::fault_op_from_name(name), op) << name;
  }
  EXPECT_EQ(host::errno_from_name("ENOSPC"), ENOSPC);
  EXPECT_EQ(host::errno_from_name("EROFS"), EROFS);
  EXPECT_EQ(host::errno_from_name("EFOO"), std::nullopt);
  EXPECT_EQ(host::errno_from_name("5"), std::nullopt);
}

TEST(FaultSpec, BadTextIsAnErrorQuotingTheEntry) {
  const struct {
    const char* spec;
    const char* says;
  } cases[] = {
      {"write_atomic.rname:/etc/x:EIO", "unknown operation 'write_atomic.rname'"},
      {"read:/etc/x:EWHAT", "unknown errno name 'EWHAT'"},
      {"read:/etc/x:5", "expected OP:PATH:ERRNO[:N]"},
      {"read:etc/x:EIO", "the path must be absolute"},
      {"read:/etc/x:EIO:0", "N must be a positive integer"},
      {"read", "expected OP:PATH:ERRNO[:N]"},
      {"read:/etc/x", "expected OP:PATH:ERRNO[:N]"},
      {"read:/etc/ok:EIO;oops", "'oops'"},
  };
  for (const auto& c : cases) {
    auto f = host::parse_faults(c.spec);
    ASSERT_FALSE(f) << c.spec;
    const auto msg = f.error().message();
    EXPECT_NE(msg.find(host::kFaultHookVariable), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.says), std::string::npos) << c.spec << " -> " << msg;
  }
}

TEST(FaultTable, TheNthMatchingCallFailsOrEveryOne) {
  host::FaultTable t;
  t.add({FaultOp::kRead, "/proc/sys/vm/*", EIO, 2});
  t.add({FaultOp::kAtomicRename, "/etc/a", EROFS, 0});
  EXPECT_EQ(t.check(FaultOp::kRead, "/proc/sys/vm/swappiness"), 0);
  EXPECT_EQ(t.check(FaultOp::kRead, "/proc/meminfo"), 0);  // no match: not counted
  EXPECT_EQ(t.check(FaultOp::kWriteVirtual, "/proc/sys/vm/swappiness"), 0);  // other operation
  EXPECT_EQ(t.check(FaultOp::kRead, "/proc/sys/vm/dirty_ratio"), EIO);
  EXPECT_EQ(t.check(FaultOp::kRead, "/proc/sys/vm/swappiness"), 0);
  EXPECT_EQ(t.check(FaultOp::kAtomicRename, "/etc/a"), EROFS);
  EXPECT_EQ(t.check(FaultOp::kAtomicRename, "/etc/a"), EROFS);
  EXPECT_EQ(t.check(FaultOp::kAtomicRename, "/etc/ab"), 0);
  EXPECT_EQ(t.fired(), 3);
  t.clear();
  EXPECT_EQ(t.check(FaultOp::kAtomicRename, "/etc/a"), 0);
}

TEST(RootFault, AReadFailsAsTheKernelWouldAndCopiesShareTheFaults) {
  dltune::testing::TempTree tree;
  tree.write("proc/sys/vm/swappiness", "60\n");
  auto root = tree.root();
  EXPECT_EQ(root.faults_fired(), 0);
  root.inject_fault({FaultOp::kRead, "/proc/sys/vm/swappiness", EACCES});
  const auto copy = root;
  auto r = copy.read("/proc/sys/vm/swappiness");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errno_, EACCES);
  EXPECT_EQ(r.error().message(), "cannot read /proc/sys/vm/swappiness: Permission denied");
  EXPECT_EQ(root.faults_fired(), 1);
  root.clear_faults();
  EXPECT_EQ(**copy.read("/proc/sys/vm/swappiness"), "60\n");
  // ENOENT is what a missing file gives: absent, not an error.
  root.inject_fault({FaultOp::kRead, "/proc/sys/vm/swappiness", ENOENT});
  auto absent = root.read("/proc/sys/vm/swappiness");
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->has_value());
  // A Root made elsewhere has none of them.
  EXPECT_TRUE(tree.root().read("/proc/sys/vm/swappiness").value().has_value());
}

TEST(RootFault, AShortReadGivesTheFirstHalfOfTheFileOnce) {
  dltune::testing::TempTree tree;
  const std::string text = "cpu  1 2 3 4\ncpu0 5 6 7 8 9\n";  // 29 bytes: cut mid-line
  const std::string half = "cpu  1 2 3 4\nc";
  tree.write("proc/stat", text);
  auto root = tree.root();
  root.inject_fault({FaultOp::kShortRead, "/proc/stat", EIO, 2});
  EXPECT_EQ(**root.read("/proc/stat"), text);
  EXPECT_EQ(**root.read("/proc/stat"), half);  // the second read only
  EXPECT_EQ(**root.read("/proc/stat"), text);
  EXPECT_EQ(root.faults_fired(), 1);
  // A file kept open (the sampler's) is cut the same way.
  root.inject_fault({FaultOp::kShortRead, "/proc/stat", EIO, 1});
  auto f = root.open("/proc/stat");
  ASSERT_TRUE(f && f->has_value());
  std::string buf;
  EXPECT_EQ(**(*f)->read(buf), half);
  EXPECT_EQ(**(*f)->read(buf), text);
  EXPECT_EQ(host::parse_faults("read.short:/proc/stat:EIO:3").value().front().op,
            FaultOp::kShortRead);
}

TEST(RootFault, EachStageOfAnAtomicWriteLeavesTheOldFileAndNoTemporaryFile) {
  dltune::testing::TempTree tree;
  const std::string old = "kernel.pid_max = 4194304\n";
  tree.write("etc/sysctl.d/90-dltune.conf", old);
  const char* path = "/etc/sysctl.d/90-dltune.conf";
  const struct {
    FaultOp op;
    const char* what;
  } stages[] = {
      {FaultOp::kAtomicOpen, "cannot create a temporary file to replace"},
      {FaultOp::kAtomicWrite, "cannot write"},
      {FaultOp::kAtomicShortWrite, "cannot write"},
      {FaultOp::kAtomicFsync, "cannot sync"},
      {FaultOp::kAtomicRename, "cannot replace"},
  };
  for (const auto& s : stages) {
    auto root = tree.root();
    root.inject_fault({s.op, path, ENOSPC});
    auto w = root.write_atomic(path, std::string(10000, 'x'));
    ASSERT_FALSE(w) << host::fault_op_name(s.op);
    EXPECT_EQ(w.error().message(), std::string(s.what) + " " + path + ": " + std::strerror(ENOSPC));
    EXPECT_EQ(root.faults_fired(), 1);
    EXPECT_EQ(**root.read(path), old);
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tree.dir() / "etc/sysctl.d"))
      names.push_back(e.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"90-dltune.conf"}) << host::fault_op_name(s.op);
  }
  // Without a fault the same write goes through.
  auto root = tree.root();
  ASSERT_TRUE(root.write_atomic(path, "new\n"));
  EXPECT_EQ(**root.read(path), "new\n");
}

TEST(RootFault, WriteVirtualAndRemoveFailWithTheInjectedErrno) {
  dltune::testing::TempTree tree;
  tree.write("proc/sys/vm/swappiness", "60\n").write("etc/security/limits.d/90-dltune.conf", "x");
  auto root = tree.root();
  root.inject_fault({FaultOp::kWriteVirtual, "/proc/sys/vm/swappiness", EINVAL});
  root.inject_fault({FaultOp::kWriteVirtualOpen, "/proc/sys/vm/*", EROFS, 2});
  root.inject_fault({FaultOp::kRemove, "/etc/security/limits.d/90-dltune.conf", EIO});
  auto w = root.write_virtual("/proc/sys/vm/swappiness", "10");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message(),
            "cannot write '10' to /proc/sys/vm/swappiness: " + std::string(std::strerror(EINVAL)));
  w = root.write_virtual("/proc/sys/vm/swappiness", "10");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().errno_, EROFS);
  auto rm = root.remove_file("/etc/security/limits.d/90-dltune.conf");
  ASSERT_FALSE(rm);
  EXPECT_EQ(rm.error().errno_, EIO);
  EXPECT_TRUE(root.exists("/etc/security/limits.d/90-dltune.conf"));
  EXPECT_EQ(root.faults_fired(), 3);
}

// The hooks a test drives (DLTUNE_TEST_FAULT, DLTUNE_TEST_CRASH_AFTER) are only in the test
// build: the release preset (what `make run` builds), the Debian package (debian/rules, what
// `make deb` builds) and `make cpack-deb` turn them off, so that no environment variable can make
// an installed dltune fail on purpose.
TEST(TestHooks, TheReleaseAndThePackageAreBuiltWithout) {
  std::ifstream presets(std::string(DLTUNE_SOURCE_DIR) + "/CMakePresets.json");
  const auto j = nlohmann::json::parse(presets);
  bool release = false;
  for (const auto& p : j["configurePresets"])
    if (p["name"] == "release") {
      release = true;
      EXPECT_EQ(p["cacheVariables"].value("DLTUNE_TEST_HOOKS", ""), "OFF");
    }
  EXPECT_TRUE(release);
  std::ifstream makefile(std::string(DLTUNE_SOURCE_DIR) + "/Makefile");
  const std::string text{std::istreambuf_iterator<char>(makefile), {}};
  const auto deb = text.find("\ncpack-deb:");
  ASSERT_NE(deb, std::string::npos);
  const auto end = text.find("\n\n", deb);
  EXPECT_NE(text.substr(deb, end - deb).find("-DDLTUNE_TEST_HOOKS=OFF"), std::string::npos);
  std::ifstream rules_file(std::string(DLTUNE_SOURCE_DIR) + "/debian/rules");
  const std::string rules{std::istreambuf_iterator<char>(rules_file), {}};
  EXPECT_NE(rules.find("-DDLTUNE_TEST_HOOKS=OFF"), std::string::npos) << rules;
  EXPECT_NE(text.find("\ndeb:"), std::string::npos);
  EXPECT_NE(text.find("dpkg-buildpackage"), std::string::npos);
}

}  // namespace fault_test

// `dltune tune apply` against real faults of this machine, as root: a read-only
// /etc/sysctl.d (EROFS), a full file system under /etc/security/limits.d (ENOSPC), a read-only
// /proc/sys (a container), and an EIO injected on the rename (DLTUNE_TEST_FAULT). Each must stop
// the transaction, name the setting, the file and the errno, and leave every value as it was.
//
// The mounts are made in a private mount namespace of the test process (the dltune it starts
// inherits it), so that no other process on the host ever sees them; they are unmounted at the
// end of each test all the same, and the test checks /proc/self/mountinfo (and PID 1's) for
// anything left behind. Every value a test touches is restored (HostValues).
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/host_values.hpp"
#include "support/run.hpp"

namespace tune_fault_live_test {

using dltune::testing::HostValues;
using dltune::testing::kLimitsDropin;
using dltune::testing::kSysctlDropin;
using dltune::testing::run;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// How many mounts `mountinfo` lists at `dir` (field 5 of each line).
int mounts_at(const std::string& mountinfo, const std::string& dir) {
  std::ifstream in(mountinfo);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string f[5];
    for (auto& x : f) fields >> x;
    if (f[4] == dir) ++n;
  }
  return n;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Mounts made by one test, unmounted (newest first) when it ends, whatever happened.
class Mounts {
 public:
  Mounts() = default;
  Mounts(const Mounts&) = delete;
  Mounts& operator=(const Mounts&) = delete;
  ~Mounts() {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it)
      if (::umount2(it->c_str(), 0) != 0) ::umount2(it->c_str(), MNT_DETACH);
  }
  // `dir` bound on itself, read-only: the same files, and EROFS on any change.
  std::string read_only(const std::string& dir) {
    if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return "bind mount of " + dir + ": " + std::strerror(errno);
    made_.push_back(dir);
    if (::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
      return "read-only remount of " + dir + ": " + std::strerror(errno);
    return {};
  }
  std::string tmpfs(const std::string& dir, const std::string& options) {
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
      return "tmpfs on " + dir + ": " + std::strerror(errno);
    made_.push_back(dir);
    return {};
  }

 private:
  std::vector<std::string> made_;
};

class TuneFaultLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "tune changes /proc/sys and /etc: needs root";
    state_ = fs::path(::testing::TempDir()) / ("tune_fault_state_" + std::to_string(::getpid()));
    fs::remove_all(state_);
    defaults_ = std::make_unique<dltune::testing::KernelDefaults>();
    const auto plan = tune({"plan", "-p", "training", "--persist", "--json"});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    plan_ = json::parse(plan.out);
    ASSERT_FALSE(plan_["items"].empty()) << "nothing to tune: the test would prove nothing";
    host_ = std::make_unique<HostValues>(plan_);
    for (const char* d : {"/etc/sysctl.d", "/etc/security/limits.d", "/proc/sys"}) {
      mounts_before_[d] = {mounts_at("/proc/self/mountinfo", d), mounts_at("/proc/1/mountinfo", d)};
      if (fs::is_directory(d) && std::string(d) != "/proc/sys") listing_before_[d] = names_in(d);
    }
  }
  void TearDown() override {
    mounts_.reset();
    for (const auto& [d, counts] : mounts_before_) {
      EXPECT_EQ(mounts_at("/proc/self/mountinfo", d), counts.first) << "a mount left on " << d;
      EXPECT_EQ(mounts_at("/proc/1/mountinfo", d), counts.second) << "a mount left on " << d;
    }
    host_.reset();  // after the unmount: the drop-ins are written back on the real directories
    defaults_.reset();
    fs::remove_all(state_);
  }
  // A private mount namespace for this process (and the dltune it starts); false after a skip.
  bool private_mounts() {
    if (::unshare(CLONE_NEWNS) != 0) {
      skip_reason_ = std::string("mount is not permitted here (unshare(CLONE_NEWNS): ") +
                     std::strerror(errno) + ")";
      return false;
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      skip_reason_ = std::string("mount is not permitted here (making / private: ") +
                     std::strerror(errno) + ")";
      return false;
    }
    mounts_ = std::make_unique<Mounts>();
    return true;
  }
  dltune::testing::RunResult tune(std::vector<std::string> args,
                                  std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "tune", "--state-dir", state_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, env);
  }
  // The last transaction failed, and every change it journaled was rolled back.
  void expect_failed_and_rolled_back() {
    const auto history = tune({"history", "--json"});
    ASSERT_EQ(history.exit_code, 0) << history.err;
    const auto tx = json::parse(history.out)["transactions"].at(0);
    EXPECT_EQ(tx["state"], "failed") << tx.dump(2);
    for (const auto& c : tx["changes"]) EXPECT_EQ(c["state"], "rolled_back") << c.dump();
    const auto status = tune({"status"});
    EXPECT_EQ(status.exit_code, 0) << status.out << status.err;  // nothing unfinished
  }
  void expect_directories_as_before() {
    for (const auto& [d, names] : listing_before_)
      EXPECT_EQ(names_in(d), names) << d << ": a file left behind or lost";
  }

  fs::path state_;
  json plan_;
  std::unique_ptr<dltune::testing::KernelDefaults> defaults_;  // restored after host_
  std::unique_ptr<HostValues> host_;
  std::unique_ptr<Mounts> mounts_;
  std::string skip_reason_;
  std::map<std::string, std::pair<int, int>> mounts_before_;
  std::map<std::string, std::vector<std::string>> listing_before_;
};

const std::vector<std::string> kApply = {"apply", "-p", "training", "--persist", "--yes"};

// One operation of DLTUNE_TEST_FAULT on the paths a glob matches, failed with an errno whose
// text (strerror) the error must show.
struct FaultPoint {
  const char* op;
  const char* path;
  const char* err;
  const char* text;
  // Only the Nth matching call fails.
  [[nodiscard]] std::string nth(int n) const {
    return fmt::format("{}:{}:{}:{}", op, path, err, n);
  }
};

}  // namespace

TEST_F(TuneFaultLive, AReadOnlySysctlDirectoryStopsApplyAndRestoresEveryValue) {
  if (!private_mounts()) GTEST_SKIP() << skip_reason_;
  const auto err = mounts_->read_only("/etc/sysctl.d");
  if (!err.empty()) GTEST_SKIP() << "mount is not permitted here: " << err;
  ASSERT_NE(::access("/etc/sysctl.d", W_OK), 0);
  ASSERT_EQ(errno, EROFS) << "the bind mount is not read-only";

  const auto r = tune(kApply);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("persist.sysctl: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kSysctlDropin), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("failed and was rolled back"), std::string::npos) << r.err;
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  expect_directories_as_before();
  expect_failed_and_rolled_back();
}

TEST_F(TuneFaultLive, AFullLimitsDirectoryStopsApplyAndRestoresEveryValue) {
  if (!private_mounts()) GTEST_SKIP() << skip_reason_;
  const std::string dir = "/etc/security/limits.d";
  const auto err = mounts_->tmpfs(dir, "size=4k,mode=0755");
  if (!err.empty()) GTEST_SKIP() << "mount is not permitted here: " << err;
  {
    // Fill it: one page, the whole file system.
    std::ofstream fill(dir + "/filler", std::ios::binary);
    fill << std::string(4096, 'x');
  }
  {
    std::ofstream more(dir + "/more", std::ios::binary);
    more << std::string(64, 'y');
    more.flush();
    ASSERT_FALSE(more.good()) << "the tmpfs is not full: the test would prove nothing";
  }
  fs::remove(dir + "/more");
  const auto inside = names_in(dir);

  const auto r = tune(kApply);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("persist.limits: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kLimitsDropin), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("failed and was rolled back"), std::string::npos) << r.err;
  EXPECT_EQ(names_in(dir), inside) << "a temporary file was left behind";
  // The sysctl.d drop-in was written before the limits one failed: it is gone again.
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  expect_failed_and_rolled_back();
}

TEST_F(TuneFaultLive, AReadOnlyProcSysStopsApplyNamingTheSetting) {
  if (!private_mounts()) GTEST_SKIP() << skip_reason_;
  const auto err = mounts_->read_only("/proc/sys");
  if (!err.empty()) GTEST_SKIP() << "mount is not permitted here: " << err;

  const auto r = tune(kApply);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::string first;  // the first live change of the plan is the one that fails
  for (const auto& i : plan_["items"])
    for (const auto& c : i["changes"])
      if (first.empty() && c["kind"] == "sysctl" && c["implied"] == false) first = c["key"];
  ASSERT_FALSE(first.empty());
  EXPECT_NE(r.err.find(first + ": cannot write"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/proc/sys/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  expect_directories_as_before();
  expect_failed_and_rolled_back();
}

TEST_F(TuneFaultLive, AnInjectedEioOnTheRenameStopsApplyAndRestoresEveryValue) {
  if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
  const auto r =
      tune(kApply,
           {{"DLTUNE_TEST_FAULT", std::string("write_atomic.rename:") + kSysctlDropin + ":EIO"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(std::string("persist.sysctl: cannot replace ") + kSysctlDropin +
                       ": Input/output error"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("failed and was rolled back"), std::string::npos) << r.err;
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  expect_directories_as_before();
  expect_failed_and_rolled_back();
}

// Every write of apply failed in turn. DLTUNE_TEST_FAULT fails the Nth call of one
// operation, N = 1, 2, ... until an apply gets past every such call: each live write (the
// sysctls and the sysfs files: EINVAL, as a kernel that refuses the value), and each step of
// each persistent file's atomic write (open: ENOSPC, a short write then ENOSPC, fsync: EIO,
// rename: EIO). Each failed apply must exit 1 naming the errno, and leave every value and every
// file as before with the transaction failed and rolled back.
TEST_F(TuneFaultLive, EachWriteOfApplyFailedInTurnLeavesEveryValueAsBefore) {
  if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
  const FaultPoint points[] = {
      {"write_virtual", "/*", "EINVAL", "Invalid argument"},
      {"write_atomic.open", "/etc/*", "ENOSPC", "No space left on device"},
      {"write_atomic.short_write", "/etc/*", "ENOSPC", "No space left on device"},
      {"write_atomic.fsync", "/etc/*", "EIO", "Input/output error"},
      {"write_atomic.rename", "/etc/*", "EIO", "Input/output error"},
  };
  for (const auto& p : points) {
    int failed = 0;
    for (int n = 1; n <= 40; ++n) {
      const std::string fault = p.nth(n);
      const auto r = tune(kApply, {{"DLTUNE_TEST_FAULT", fault}});
      if (r.exit_code == 0) {  // past the last such call: undo it and go on to the next
        ASSERT_EQ(tune({"rollback"}).exit_code, 0) << fault;
        break;
      }
      ++failed;
      ASSERT_EQ(r.exit_code, 1) << fault << "\n" << r.err;
      EXPECT_NE(r.err.find(p.text), std::string::npos) << fault << "\n" << r.err;
      EXPECT_NE(r.err.find("failed and was rolled back"), std::string::npos) << fault << "\n"
                                                                             << r.err;
      EXPECT_TRUE(host_->changed().empty())
          << fault << ": " << ::testing::PrintToString(host_->changed());
      expect_directories_as_before();
      expect_failed_and_rolled_back();
      if (::testing::Test::HasFailure()) return;
    }
    // Every point of this kind was reached: live writes for each sysctl and sysfs change, and
    // each persistent file at least once.
    EXPECT_GE(failed, 1) << p.op << ": no call was failed: the test would prove nothing";
  }
}

// Every write of a rollback failed in turn. A rollback that cannot restore a value
// names it with the file and the errno, restores the others, exits 1 and leaves the transaction
// needing a rollback (`tune status` says so); the next rollback restores every value.
TEST_F(TuneFaultLive, EachWriteOfRollbackFailedInTurnIsReportedAndTheNextRollbackFinishes) {
  if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
  const FaultPoint points[] = {
      {"write_virtual", "/*", "EIO", "Input/output error"},
      {"remove_file", "/etc/*", "EACCES", "Permission denied"},
  };
  for (const auto& p : points) {
    int failed = 0;
    for (int n = 1; n <= 40; ++n) {
      const auto applied = tune(kApply);
      ASSERT_EQ(applied.exit_code, 0) << applied.err;
      ASSERT_FALSE(host_->changed().empty()) << "apply changed nothing: the test proves nothing";
      const std::string fault = p.nth(n);
      const auto r = tune({"rollback"}, {{"DLTUNE_TEST_FAULT", fault}});
      if (r.exit_code == 0) {
        EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
        break;
      }
      ++failed;
      ASSERT_EQ(r.exit_code, 1) << fault << "\n" << r.err;
      EXPECT_NE(r.err.find(p.text), std::string::npos) << fault << "\n" << r.err;
      EXPECT_NE(r.out.find("could not be"), std::string::npos) << fault << "\n" << r.out;
      EXPECT_NE(r.err.find("run `dltune tune rollback` again"), std::string::npos) << fault << "\n"
                                                                                   << r.err;
      // Exactly one value is left: the one whose write failed; or, when that was a disk's
      // scheduler, the disk's queue too (the kernel resets it with the scheduler, and a queue
      // longer than the device's tags cannot be restored under none).
      const auto left = host_->changed();
      const bool scheduler_and_queue = left.size() == 2 && left[0].starts_with("/sys/block/") &&
                                       left[0].substr(0, left[0].find("/queue/")) ==
                                           left[1].substr(0, left[1].find("/queue/")) &&
                                       (left[0].find("/queue/scheduler:") != std::string::npos ||
                                        left[1].find("/queue/scheduler:") != std::string::npos) &&
                                       (left[0].find("/queue/nr_requests:") != std::string::npos ||
                                        left[1].find("/queue/nr_requests:") != std::string::npos);
      EXPECT_TRUE(left.size() == 1u || scheduler_and_queue)
          << fault << ": " << ::testing::PrintToString(left);
      const auto status = tune({"status"});
      EXPECT_EQ(status.exit_code, 1) << fault << "\n" << status.out;
      const auto again = tune({"rollback"});
      ASSERT_EQ(again.exit_code, 0) << fault << "\n" << again.err;
      EXPECT_TRUE(host_->changed().empty())
          << fault << ": " << ::testing::PrintToString(host_->changed());
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GE(failed, 1) << p.op << ": no call was failed: the test would prove nothing";
  }
}

}  // namespace tune_fault_live_test

// spawn_and_wait as root on the real kernel: the job dropped to another user (nobody) cannot
// get root back, and the child joins a cgroup before it execs. Skipped, with the reason, where
// the test does not run as root or no cgroup hierarchy is mounted.
#include <linux/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "launch/spawn.hpp"
#include "support/in_child.hpp"

namespace dltune::launch::spawn_live_test {
namespace {

namespace fs = std::filesystem;
using dltune::testing::slurp_file;

const std::map<std::string, std::string> kEnv = {
    {"PATH", "/usr/bin:/bin"}, {"HOME", "/root"}, {"USER", "root"}, {"LOGNAME", "root"}};

class Scratch {
 public:
  Scratch() {
    dir_ = fs::path(::testing::TempDir()) /
           (std::string("dltune_spawn_live_") + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::all);  // the job's user writes here
  }
  ~Scratch() { fs::remove_all(dir_); }
  [[nodiscard]] std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

TEST(SpawnLive, DropsToTheSudoUserForGood) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (setuid to another user)";
  const auto as = sudo_user({{"SUDO_UID", "65534"}, {"SUDO_GID", "65534"}});
  if (!as) GTEST_SKIP() << "no user with uid 65534 here: " << as.error().message();
  Scratch s;
  SpawnRequest req;
  req.argv = {"sh", "-c",
              "{ id -u; id -g; id -G; echo \"$HOME $USER $LOGNAME\"; "
              "/usr/bin/python3 -c 'import os; os.setuid(0)' 2>/dev/null && echo regained "
              "|| echo denied; } > \"$1\"",
              "sh", s.file("who")};
  req.env = kEnv;
  req.as = *as;
  const auto r = spawn_and_wait(req);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(slurp_file(s.file("who")),
            "65534\n65534\n65534\n" + (*as)->home + " nobody nobody\ndenied\n");
}

bool has_cap_sys_resource() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CapEff:", 0) == 0)
      return (std::stoull(line.substr(7), nullptr, 16) >> CAP_SYS_RESOURCE) & 1;
  }
  return false;
}

std::pair<std::string, std::string> nofile_seen_by(const std::string& file) {
  std::istringstream f(slurp_file(file).substr(sizeof "Max open files" - 1));
  std::string soft, hard;
  f >> soft >> hard;
  return {soft, hard};
}

SpawnRequest nofile_job(const Scratch& s, const std::optional<Credentials>& as, rlim_t soft,
                        rlim_t hard) {
  SpawnRequest req;
  req.argv = {"sh", "-c", "grep 'Max open files' /proc/self/limits > \"$1\"", "sh",
              s.file("limits")};
  req.env = kEnv;
  req.as = as;
  req.limits.push_back({RLIMIT_NOFILE, "nofile", soft, hard});
  return req;
}

TEST(SpawnLive, LimitsSurviveTheDrop) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (setuid to another user)";
  const auto as = sudo_user({{"SUDO_UID", "65534"}, {"SUDO_GID", "65534"}});
  if (!as) GTEST_SKIP() << "no user with uid 65534 here: " << as.error().message();
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  if (now.rlim_max < 3000) GTEST_SKIP() << "nofile hard limit below 3000 here";
  Scratch s;
  const auto r = spawn_and_wait(nofile_job(s, *as, 1000, 3000));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_EQ(nofile_seen_by(s.file("limits")),
            std::make_pair(std::string("1000"), std::string("3000")));
}

TEST(SpawnLive, AHardLimitIsRaisedBeforeTheDrop) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (setuid to another user)";
  if (!has_cap_sys_resource())
    GTEST_SKIP() << "raising a hard limit needs CAP_SYS_RESOURCE, which this process lacks";
  const auto as = sudo_user({{"SUDO_UID", "65534"}, {"SUDO_GID", "65534"}});
  if (!as) GTEST_SKIP() << "no user with uid 65534 here: " << as.error().message();
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  std::ifstream nr_open("/proc/sys/fs/nr_open");
  rlim_t ceiling = 0;
  nr_open >> ceiling;
  if (now.rlim_max + 1000 > ceiling) GTEST_SKIP() << "nofile hard limit is at fs.nr_open";
  Scratch s;
  const auto raised = now.rlim_max + 1000;
  // As nobody, raising the hard limit would fail: it works only because it comes first.
  const auto r = spawn_and_wait(nofile_job(s, *as, raised, raised));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_EQ(nofile_seen_by(s.file("limits")),
            std::make_pair(std::to_string(raised), std::to_string(raised)));
}

// A cgroup mount to make a test group in: cgroup2, else v1's pids hierarchy (no set-up needed
// before a process can join).
std::optional<fs::path> cgroup_mount() {
  std::ifstream in("/proc/self/mountinfo");
  std::optional<fs::path> v1;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, mount_point;
    f >> id >> parent >> dev >> root >> mount_point;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos || root != "/") continue;
    std::istringstream rest(line.substr(dash + 3));
    std::string type, source, options;
    rest >> type >> source >> options;
    if (type == "cgroup2") return fs::path(mount_point);
    if (type == "cgroup" && ("," + options + ",").find(",pids,") != std::string::npos)
      v1 = mount_point;
  }
  return v1;
}

TEST(SpawnLive, TheChildJoinsTheCgroupBeforeExec) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (creates a cgroup)";
  const auto mount = cgroup_mount();
  if (!mount) GTEST_SKIP() << "no cgroup2 or v1 pids hierarchy mounted";
  const auto name = std::string("dltune-spawn-test-") + std::to_string(::getpid());
  const auto group = *mount / name;
  std::error_code ec;
  if (!fs::create_directory(group, ec))
    GTEST_SKIP() << "cannot create " << group << ": " << ec.message();
  struct Remove {
    fs::path p;
    ~Remove() { ::rmdir(p.c_str()); }
  } remove{group};
  Scratch s;
  SpawnRequest req;
  req.argv = {"sh", "-c", "cat /proc/self/cgroup > \"$1\"", "sh", s.file("cgroup")};
  req.env = kEnv;
  req.cgroup_procs = {(group / "cgroup.procs").string()};
  const auto r = spawn_and_wait(req);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_NE(slurp_file(s.file("cgroup")).find(":/" + name + "\n"), std::string::npos)
      << slurp_file(s.file("cgroup"));
  // The job is gone, so the group is empty again.
  EXPECT_EQ(slurp_file(group / "cgroup.procs"), "");
}

}  // namespace
}  // namespace dltune::launch::spawn_live_test

// mount.noatime's remount on this kernel, in a private mount namespace of a child (nothing it
// mounts is seen outside): the mount remounted is the one looked up in mountinfo, never what its
// path leads to by then.
#include "settings/mount_setting.hpp"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/in_child.hpp"

namespace mount_setting_live_test {

using ::testing::HasSubstr;

TEST(MountSettingLive, TheMountLookedUpIsRemountedNotWhatItsPathLeadsToLater) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to mount in a namespace of its own";
  const auto run = dltune::testing::in_child([] {
    if (::unshare(CLONE_NEWNS) != 0) return std::string("skip: cannot unshare");
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return std::string("skip: cannot make / private");
    char tmpl[] = "/tmp/dltune-mnt-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return std::string("no temporary directory");
    const std::string top = tmpl, a = top + "/a", m = a + "/m";
    std::filesystem::create_directories(m);
    if (::mount("inner", m.c_str(), "tmpfs", MS_RELATIME, "size=1m") != 0)
      return std::string("skip: cannot mount a tmpfs");
    std::string out;
    const dltune::host::Root live;
    // Its own mount: remounted, and back.
    auto set = dltune::settings::set_atime_mode(live, m, "noatime");
    out += "own: " + (set ? *set : set.error().message()) + "\n";
    set = dltune::settings::set_atime_mode(live, m, "relatime");
    out += "back: " + (set ? *set : set.error().message()) + "\n";
    // Another mount over its parent hides it: mountinfo still lists it at that path, which
    // now leads into the other mount (a directory of the same name there).
    if (::mount("outer", a.c_str(), "tmpfs", MS_RELATIME, "size=1m") != 0)
      return std::string("cannot mount over the parent");
    std::filesystem::create_directories(m);
    set = dltune::settings::set_atime_mode(live, m, "noatime");
    out += "hidden: " + (set ? *set : set.error().message()) + "\n";
    const auto outer = dltune::settings::read_atime_mode(live, a);
    out += "outer: " + (outer && *outer ? **outer : std::string("?")) + "\n";
    ::umount2(a.c_str(), MNT_DETACH);
    ::umount2(m.c_str(), MNT_DETACH);
    std::filesystem::remove_all(top);
    return out;
  });
  if (run.report.starts_with("skip: ")) GTEST_SKIP() << run.report.substr(6);
  EXPECT_THAT(run.report, HasSubstr("own: noatime\n"));
  EXPECT_THAT(run.report, HasSubstr("back: relatime\n"));
  EXPECT_THAT(run.report, HasSubstr("is no longer mount"));
  EXPECT_THAT(run.report, HasSubstr("not remounted"));
  EXPECT_THAT(run.report, HasSubstr("outer: relatime\n")) << "the other mount was left alone";
}

}  // namespace mount_setting_live_test

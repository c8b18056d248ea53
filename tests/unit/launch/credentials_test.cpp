// sudo_user: SUDO_UID/SUDO_GID to the user the job runs as, from this host's user database.
#include <pwd.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "launch/spawn.hpp"

namespace dltune::launch::credentials_test {
namespace {

TEST(SudoUser, NotUnderSudo) {
  const auto c = sudo_user({{"HOME", "/root"}, {"USER", "root"}});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_FALSE(*c);
}

TEST(SudoUser, RootFromTheUserDatabase) {
  const auto c = sudo_user({{"SUDO_UID", "0"}, {"SUDO_GID", "0"}, {"SUDO_USER", "root"}});
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_TRUE(*c);
  EXPECT_EQ((*c)->uid, 0u);
  EXPECT_EQ((*c)->gid, 0u);
  EXPECT_EQ((*c)->user, "root");
  EXPECT_EQ((*c)->home, ::getpwuid(0)->pw_dir);
  EXPECT_NE(std::find((*c)->groups.begin(), (*c)->groups.end(), 0u), (*c)->groups.end());
}

TEST(SudoUser, NobodyWithoutSudoGidTakesTheUsersGroup) {
  const passwd* nobody = ::getpwnam("nobody");
  if (!nobody) GTEST_SKIP() << "no user 'nobody' here";
  const auto c = sudo_user({{"SUDO_UID", std::to_string(nobody->pw_uid)}});
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_TRUE(*c);
  EXPECT_EQ((*c)->user, "nobody");
  EXPECT_EQ((*c)->gid, nobody->pw_gid);
  EXPECT_EQ((*c)->home, nobody->pw_dir);
  // getgrouplist always includes the group it was given.
  EXPECT_NE(std::find((*c)->groups.begin(), (*c)->groups.end(), nobody->pw_gid),
            (*c)->groups.end());
}

TEST(SudoUser, BadIdsNameTheVariable) {
  for (const char* bad : {"", "abc", "-1", "12x", " 0", "4294967295", "99999999999"}) {
    const auto c = sudo_user({{"SUDO_UID", bad}});
    ASSERT_FALSE(c) << bad;
    EXPECT_EQ(c.error().message(),
              std::string("not a user id in SUDO_UID: '") + std::string(bad) + "'");
  }
  const auto g = sudo_user({{"SUDO_UID", "0"}, {"SUDO_GID", "root"}});
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message(), "not a group id in SUDO_GID: 'root'");
}

TEST(SudoUser, AnIdOfNoUser) {
  if (::getpwuid(3999999)) GTEST_SKIP() << "uid 3999999 exists here";
  const auto c = sudo_user({{"SUDO_UID", "3999999"}});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message(), "no user has the id in SUDO_UID: 3999999");
}

}  // namespace
}  // namespace dltune::launch::credentials_test

// Whom serve becomes when started as root: --user, the sudo user, nobody; root refused. The
// user database is the machine's own (Debian always has root and nobody).
#include "serve/session.hpp"

#include <gtest/gtest.h>

namespace dltune::serve {
namespace {

TEST(ServeUser, TheSudoUserElseNobodyAndNeverRoot) {
  auto nobody = unprivileged_user("", "");
  ASSERT_TRUE(nobody) << nobody.error().message();
  EXPECT_EQ(nobody->name, "nobody");
  EXPECT_NE(nobody->uid, 0u);
  // A sudo user who is root is no reason to keep root.
  auto from_root_sudo = unprivileged_user("", "root");
  ASSERT_TRUE(from_root_sudo);
  EXPECT_EQ(from_root_sudo->name, "nobody");
  auto asked = unprivileged_user("nobody", "someone-else");
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->name, "nobody");

  auto root = unprivileged_user("root", "");
  ASSERT_FALSE(root);
  EXPECT_NE(root.error().message().find("--as-root"), std::string::npos);
  auto missing = unprivileged_user("no-such-user-dltune", "");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("--user no-such-user-dltune"), std::string::npos);
}

}  // namespace
}  // namespace dltune::serve

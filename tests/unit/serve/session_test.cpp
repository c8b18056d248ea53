// Whom serve becomes when started as root: --user, the sudo user, nobody; root refused. The
// user database is the machine's own (Debian always has root and nobody).
#include "serve/session.hpp"

#include <gtest/gtest.h>

namespace dltune::serve::session_test {
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
}  // namespace dltune::serve::session_test

TEST(ServeSession, WhoServeRunsAs) {
  auto as_root = dltune::serve::choose_identity(0, "", false, "");
  ASSERT_TRUE(as_root) << as_root.error().message();
  ASSERT_TRUE(as_root->become);
  EXPECT_EQ(as_root->become->name, "nobody");
  EXPECT_FALSE(as_root->warning);
  auto kept = dltune::serve::choose_identity(0, "", true, "someone");
  ASSERT_TRUE(kept);
  EXPECT_FALSE(kept->become);
  EXPECT_NE(kept->warning->find("--as-root"), std::string::npos);
  auto user = dltune::serve::choose_identity(1000, "", false, "");
  ASSERT_TRUE(user);
  EXPECT_FALSE(user->become);
  EXPECT_FALSE(user->warning);
  auto other = dltune::serve::choose_identity(1000, "nobody", false, "");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message(), "--user nobody: only root can become another user");
}

TEST(ServeSession, ExporterOptionsRefuseWhatCannotBeServed) {
  dltune::serve::ExporterChoice c;
  c.cgroups = {"/dltune/run-1", "relative"};
  auto bad = dltune::serve::exporter_options(dltune::host::Root(), c);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("--cgroup relative"), std::string::npos);
  c.cgroups = {"/a/../etc"};
  EXPECT_FALSE(dltune::serve::exporter_options(dltune::host::Root(), c));
  c.cgroups = {"/dltune/run-1"};
  c.no_check = true;
  c.profile = "training";
  EXPECT_EQ(dltune::serve::exporter_options(dltune::host::Root(), c).error().message(),
            "--profile and --no-check do not go together");
  c.profile = "";
  auto none = dltune::serve::exporter_options(dltune::host::Root(), c);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->profile);
  c.no_check = false;
  auto checked = dltune::serve::exporter_options(dltune::host::Root(), c);
  ASSERT_TRUE(checked) << checked.error().message();
  EXPECT_EQ(checked->profile->name, "training");
  EXPECT_EQ(checked->cgroups, c.cgroups);
}

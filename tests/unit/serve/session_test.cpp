// Whom serve becomes when started as root: --user, the sudo user, nobody; root refused. The
// user database is the machine's own (Debian always has root and nobody).
#include "serve/session.hpp"
#include "serve/serve_choices.hpp"

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

// serve's options checked into what it runs: each bad one refused naming it, --once or not.
TEST(ServeSetup, TheChoicesAndTheEnvironmentBecomeTheExporterAndTheServer) {
  dltune::serve::ServeChoices c;
  c.listen = "127.0.0.1:19464";
  c.no_gpus = true;
  c.no_host_metrics = true;
  c.max_connections = 4;
  const std::map<std::string, std::string> env = {
      {"DLTUNE_NVML_LIBRARY", "/opt/nvml.so"}, {"NODE_NAME", "node-7"}, {"SUDO_USER", "root"}};
  auto s = dltune::serve::setup_serve(dltune::host::Root(), c, 0, env);
  ASSERT_TRUE(s) << s.error().error.message();
  EXPECT_FALSE(s->options.gpus);
  EXPECT_EQ(s->options.host, dltune::serve::HostFamilies::kBeyondNodeExporter);
  EXPECT_EQ(s->options.nvml_library, "/opt/nvml.so");
  EXPECT_EQ(s->options.hostname, "node-7");
  EXPECT_TRUE(s->options.profile.has_value()) << "the check runs by default";
  EXPECT_EQ(s->request.address.port, 19464);
  EXPECT_EQ(s->request.limits.workers, 4u);
  ASSERT_TRUE(s->request.become) << "started as root, it becomes someone else";
  EXPECT_EQ(s->request.become->name, "nobody") << "a sudo user who is root is no reason";
}

TEST(ServeSetup, EachBadChoiceIsRefusedNamingIt) {
  using dltune::serve::ServeChoices;
  struct Case {
    void (*set)(ServeChoices&);
    uid_t euid;
    const char* expected;
  };
  const Case cases[] = {
      {[](ServeChoices& c) { c.listen = "127.0.0.1:99999"; }, 0, "99999"},
      {[](ServeChoices& c) { c.json = true; }, 0, "--json goes with --once"},
      {[](ServeChoices& c) { c.user = "nobody"; }, 1000, "--user"},
      {[](ServeChoices& c) { c.exporter.profile = "no-such-profile"; }, 0, "no-such-profile"},
  };
  for (const auto& k : cases) {
    ServeChoices c;
    k.set(c);
    auto s = dltune::serve::setup_serve(dltune::host::Root(), c, k.euid, {});
    ASSERT_FALSE(s) << k.expected;
    EXPECT_TRUE(s.error().bad_input);
    EXPECT_NE(s.error().error.message().find(k.expected), std::string::npos)
        << s.error().error.message();
  }
  // With --once no server is made: who to run as is not asked.
  ServeChoices once;
  once.once = true;
  once.user = "nobody";
  auto s = dltune::serve::setup_serve(dltune::host::Root(), once, 1000, {});
  ASSERT_TRUE(s) << s.error().error.message();
  EXPECT_FALSE(s->request.become);
}

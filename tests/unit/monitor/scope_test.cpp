// What top, record and profile sample: --pid or --cgroup checked before anything is shown or
// written, and the title a view and a recording carry.
#include "monitor/scope.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace scope_test {

using dltune::monitor::Scope;
using dltune::monitor::scope_for;
using ::testing::HasSubstr;

TEST(MonitorScope, APidOrACgroupIsCheckedAndOtherwiseIsTheDefault) {
  const dltune::host::Root root;
  const auto mine = scope_for(root, ::getpid(), "", Scope::Kind::kAll);
  ASSERT_TRUE(mine) << mine.error().message();
  EXPECT_EQ(mine->kind, Scope::Kind::kTree);
  EXPECT_EQ(mine->pid, ::getpid());
  const auto all = scope_for(root, 0, "", Scope::Kind::kAll);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->kind, Scope::Kind::kAll);
  const auto root_group = scope_for(root, 0, "/", Scope::Kind::kNone);
  ASSERT_TRUE(root_group) << root_group.error().message();
  EXPECT_EQ(root_group->kind, Scope::Kind::kCgroup);

  // A process that has been reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::vector<std::tuple<pid_t, std::string, std::string>> bad = {
      {::getpid(), "/", "give one of --pid and --cgroup, not both"},
      {child, "", "no such process"},
      {0, "dltune/run-1", "expected an absolute cgroup path"},
      {0, "/dltune/../etc", "expected an absolute cgroup path"},
      {0, "/no-such-group-of-dltune", "no such cgroup in any mounted hierarchy"},
  };
  for (const auto& [pid, cgroup, want] : bad) {
    const auto s = scope_for(root, pid, cgroup, Scope::Kind::kAll);
    ASSERT_FALSE(s) << pid << " " << cgroup;
    EXPECT_THAT(s.error().message(), HasSubstr(want));
  }
}

TEST(MonitorScope, TheTitleNamesTheHostAndWhatIsSampled) {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  const std::string h = host;
  Scope s;
  EXPECT_EQ(dltune::monitor::describe(s), h + "  host");
  s.kind = Scope::Kind::kAll;
  EXPECT_EQ(dltune::monitor::describe(s), h + "  all processes");
  s.kind = Scope::Kind::kTree;
  s.pid = 42;
  EXPECT_EQ(dltune::monitor::describe(s), h + "  pid 42 and its tree");
  s.kind = Scope::Kind::kCgroup;
  s.cgroup = "/dltune/run-1";
  EXPECT_EQ(dltune::monitor::describe(s), h + "  cgroup /dltune/run-1");
  const auto o = dltune::monitor::sampler_options(s, 250'000'000, true, "/x/libnvidia-ml.so.1");
  EXPECT_EQ(o.gpu_interval_ns, 1'000'000'000) << "NVML at most once a second";
  EXPECT_EQ(o.nvml_library, "/x/libnvidia-ml.so.1");
  EXPECT_EQ(dltune::monitor::sampler_options(s, 5'000'000'000, false, "").gpu_interval_ns,
            5'000'000'000);
}

}  // namespace scope_test

// Open descriptors against the nofile limit (doctor), on fixture /proc trees.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "diagnose/fd_risk.hpp"
#include "support/temp_tree.hpp"

namespace fd_risk_test {

using namespace dltune::diagnose;
using dltune::testing::TempTree;

namespace {

// fs/proc/base.c proc_pid_limits's layout, as this VM prints it.
std::string limits(const char* soft, const char* hard) {
  return std::string(
             "Limit                     Soft Limit           Hard Limit           Units     \n"
             "Max cpu time              unlimited            unlimited            seconds   \n"
             "Max open files            ") +
         soft + std::string(20 - std::string(soft).size(), ' ') + " " + hard +
         std::string(20 - std::string(hard).size(), ' ') + " files     \n";
}

void process(TempTree& t, int pid, const char* comm, int fds, const char* soft) {
  const auto base = "proc/" + std::to_string(pid);
  t.write(base + "/comm", std::string(comm) + "\n").write(base + "/limits", limits(soft, "4096"));
  t.mkdir(base + "/fd");
  for (int i = 0; i < fds; ++i) t.write(base + "/fd/" + std::to_string(i), "");
}

}  // namespace

TEST(FdRisk, TheSoftLimitFromProcLimits) {
  EXPECT_EQ(nofile_soft_limit(limits("1024", "1048576")), 1024u);
  EXPECT_EQ(nofile_soft_limit(limits("unlimited", "unlimited")), 0u);
  EXPECT_EQ(nofile_soft_limit("Max cpu time   unlimited"), 0u);
}

TEST(FdRisk, TrainingProcessesNearTheirLimitAndNoOthers) {
  TempTree t;
  process(t, 100, "python3", 85, "100");          // 85%: warning
  process(t, 101, "pt_data_worker", 97, "100");   // 97%: critical
  process(t, 102, "python3", 10, "100");          // fine
  process(t, 103, "postgres", 99, "100");         // not a training process
  process(t, 104, "python3.11", 5, "unlimited");  // no limit
  const auto root = dltune::host::Root::at(t.dir());
  ASSERT_TRUE(root);
  const auto scan = scan_fds(*root);
  ASSERT_EQ(scan.processes.size(), 4u);
  std::map<int, std::string> risk;
  for (const auto& u : scan.processes)
    if (auto e = fd_risk(u)) risk[u.pid] = severity_name(e->severity);
  EXPECT_EQ(risk, (std::map<int, std::string>{{100, "warning"}, {101, "critical"}}));
  const auto e = fd_risk(scan.processes[1]);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->fields.at("open"), "97");
  EXPECT_NE(e->explanation.find("Too many open files"), std::string::npos);
}

}  // namespace fd_risk_test

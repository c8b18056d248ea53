// slurm/node and slurm/health, the pure parts: scontrol's node record, what to do with a node,
// the drain reason. The real cluster is in tests/integration/slurm_live_test.cpp.
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/check.hpp"
#include "core/watchdog.hpp"
#include "slurm/health.hpp"
#include "slurm/node.hpp"
#include "support/in_child.hpp"
#include "unit/report/report_samples.hpp"

namespace health_test {

using dltune::settings::Finding;
using dltune::slurm::decide;
using dltune::slurm::drain_reason;
using dltune::slurm::drained_by_dltune;
using dltune::slurm::HealthAction;
using dltune::slurm::NodeState;
using dltune::slurm::parse_show_node;
using dltune::slurm::reason_ids;
using dltune::slurm::unknown_for_reason;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// As Slurm 22.05's `scontrol -o show node vm` printed it on this VM (with a drain added).
const char* kDrained =
    "NodeName=vm Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.89 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=vm NodeHostName=vm "
    "Version=22.05.8 OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=23081 "
    "AllocMem=0 FreeMem=20678 Sockets=2 Boards=1 State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 "
    "Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-01T14:11:33 "
    "SlurmdStartTime=2026-12-02T03:46:51 LastBusyTime=2026-12-02T03:46:51 "
    "CfgTRES=cpu=2,mem=23081M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 "
    "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s "
    "Reason=dltune: shm.size: /dev/shm is 64 MiB, expected at least 1 GiB "
    "[root@2026-12-02T03:46:59]\n";

NodeState node(const std::string& state, const std::string& reason = {}) {
  NodeState n;
  n.name = "vm";
  n.state = state;
  n.base = state.substr(0, state.find('+'));
  if (state.find("+DRAIN") != std::string::npos) n.flags.push_back("DRAIN");
  n.reason = reason;
  return n;
}

Finding finding(const std::string& id, const std::string& summary) {
  Finding f;
  f.id = id;
  f.summary = summary;
  return f;
}

}  // namespace

TEST(SlurmNode, TheOneLineRecordGivesStateFlagsAndAReasonWithSpaces) {
  const auto n = parse_show_node(kDrained);
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(n->name, "vm");
  EXPECT_EQ(n->host_name, "vm");
  EXPECT_EQ(n->base, "IDLE");
  EXPECT_THAT(n->flags, ElementsAre("DRAIN"));
  EXPECT_TRUE(n->drain());
  EXPECT_FALSE(n->down());
  EXPECT_EQ(n->reason, "dltune: shm.size: /dev/shm is 64 MiB, expected at least 1 GiB");
  EXPECT_EQ(n->reason_by, "root");
  EXPECT_EQ(n->reason_at, "2026-12-02T03:46:59");
  EXPECT_TRUE(drained_by_dltune(*n));
}

// Newer Slurm prints fields after the reason's stamp (Comment=, Extra=): they are not part of the
// reason, which would else differ from dltune's own at every run and re-drain the node. A reason
// with brackets of its own keeps them.
TEST(SlurmNode, TheReasonEndsAtItsStampNotAtTheEndOfTheLine) {
  std::string line = kDrained;
  line.pop_back();  // the newline
  auto n = parse_show_node(line + " Comment=rack 12 Extra=(null)\n");
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(n->reason, "dltune: shm.size: /dev/shm is 64 MiB, expected at least 1 GiB");
  EXPECT_EQ(n->reason_by, "root");
  EXPECT_EQ(n->reason_at, "2026-12-02T03:46:59");
  n = parse_show_node(
      "NodeName=vm State=IDLE+DRAIN Reason=swap [disk 2] by admin [slurm@2026-12-02T03:46:59] "
      "Comment=(null)");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->reason, "swap [disk 2] by admin");
  EXPECT_EQ(n->reason_by, "slurm");
  // Without a stamp, the reason stops at the next field.
  n = parse_show_node("NodeName=vm State=IDLE+DRAIN Reason=dltune: gpu.ecc: x Extra=(null)");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->reason, "dltune: gpu.ecc: x");
  EXPECT_TRUE(n->reason_by.empty());
}

TEST(SlurmNode, NoReasonSeveralFlagsAndRecordsThatAreNotNodes) {
  const auto n = parse_show_node(
      "NodeName=gpu01 NodeHostName=gpu01.cluster State=MIXED+DRAIN+NOT_RESPONDING Weight=1");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->host_name, "gpu01.cluster");
  EXPECT_THAT(n->flags, ElementsAre("DRAIN", "NOT_RESPONDING"));
  EXPECT_TRUE(n->drain());
  EXPECT_TRUE(n->down());
  EXPECT_EQ(n->reason, "");
  EXPECT_FALSE(drained_by_dltune(*n));
  // An admin's reason that merely mentions dltune is not dltune's.
  auto admin = parse_show_node("NodeName=a State=IDLE+DRAIN Reason=check dltune: later [bob@t]");
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->reason, "check dltune: later");
  EXPECT_FALSE(drained_by_dltune(*admin));
  // The NodeName key is matched whole, not inside another key.
  EXPECT_FALSE(parse_show_node("Node nosuch not found"));
  EXPECT_FALSE(parse_show_node("XNodeName=a State=IDLE"));
  EXPECT_FALSE(parse_show_node("NodeName=a"));
  EXPECT_FALSE(parse_show_node(""));
  EXPECT_THAT(parse_show_node("garbage").error().message(), HasSubstr("scontrol -o show node"));
}

TEST(SlurmHealth, OnlyWhatDltuneDrainedIsEverResumedOrReworded) {
  const std::string ours = "dltune: shm.size: /dev/shm is 64 MiB, expected at least 1 GiB";
  EXPECT_EQ(decide(node("IDLE"), true, ""), HealthAction::kNone);
  EXPECT_EQ(decide(node("IDLE"), false, ours), HealthAction::kDrain);
  EXPECT_EQ(decide(node("ALLOCATED"), false, ours), HealthAction::kDrain);
  EXPECT_EQ(decide(node("IDLE+DRAIN", ours), false, ours), HealthAction::kNone);
  EXPECT_EQ(decide(node("IDLE+DRAIN", ours), false, "dltune: other"), HealthAction::kUpdateReason);
  EXPECT_EQ(decide(node("MIXED+DRAIN", ours), true, ""), HealthAction::kResume);
  // An admin's drain: left alone, healthy or not.
  EXPECT_EQ(decide(node("IDLE+DRAIN", "bad DIMM"), true, ""), HealthAction::kKeepAdminDrain);
  EXPECT_EQ(decide(node("IDLE+DRAIN", "bad DIMM"), false, ours), HealthAction::kKeepAdminDrain);
  EXPECT_EQ(decide(node("IDLE+DRAIN"), true, ""), HealthAction::kKeepAdminDrain);
}

TEST(SlurmHealth, TheReasonLeadsWithTheFirstFindingAndNamesTheOthersWithinTheLimit) {
  EXPECT_EQ(drain_reason({}), "");
  EXPECT_EQ(drain_reason({finding("shm.size", "/dev/shm is 64 MiB, expected at least 1 GiB")}),
            "dltune: shm.size: /dev/shm is 64 MiB, expected at least 1 GiB");
  // A summary that starts with its id is not given the id twice.
  const std::vector<Finding> three = {finding("vm.swappiness", "vm.swappiness is 60, expected 10"),
                                      finding("gpu.ecc", "x"), finding("limits.nofile", "y")};
  EXPECT_EQ(drain_reason(three),
            "dltune: vm.swappiness is 60, expected 10; +2: gpu.ecc, limits.nofile");
  // Too many ids for the limit: as many as fit, the rest counted.
  std::vector<Finding> many = {finding("a", "first")};
  for (int i = 0; i < 40; ++i) many.push_back(finding("setting.number" + std::to_string(i), "s"));
  const auto r = drain_reason(many, 100);
  EXPECT_LE(r.size(), 100u) << r;
  EXPECT_THAT(r, HasSubstr("dltune: a: first; +40: setting.number0, ")) << r;
  EXPECT_THAT(r, HasSubstr(" more")) << r;
  // A first summary longer than the limit is cut.
  EXPECT_LE(drain_reason({finding("x", std::string(500, 'z'))}, 80).size(), 80u);
}

TEST(SlurmHealth, TheIdsOfOurDrainReasonAreReadBackAndALeftOutIdIsSaid) {
  // What drain_reason writes, read back: the first id, the others, and whether some were left
  // out ("N more"), however the summaries read.
  const auto one = reason_ids("dltune: gpu.ecc: GPU 3 (0000:5d:00.0) has 2 uncorrectable errors");
  EXPECT_THAT(one.ids, ElementsAre("gpu.ecc"));
  EXPECT_FALSE(one.truncated);
  const auto three =
      reason_ids(drain_reason({finding("gpu.ecc", "a; summary: with +2: inside"),
                               finding("gpu.nvlink", "x"), finding("limits.nofile", "y")}));
  EXPECT_THAT(three.ids, ElementsAre("gpu.ecc", "gpu.nvlink", "limits.nofile"));
  EXPECT_FALSE(three.truncated);
  std::vector<Finding> many;
  for (int i = 0; i < 40; ++i) many.push_back(finding("gpu.id" + std::to_string(i), "s"));
  const auto cut = reason_ids(drain_reason(many, 80));
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.ids.front(), "gpu.id0");
  EXPECT_LT(cut.ids.size(), 40u);
  // A reason kept while its ids were unknown names them the same way.
  EXPECT_THAT(reason_ids("dltune: not judged: gpu.ecc: ECC cannot be checked; +1: gpu.nvlink").ids,
              ElementsAre("gpu.ecc", "gpu.nvlink"));
  // Not ours: nothing.
  EXPECT_TRUE(reason_ids("bad DIMM").ids.empty());
}

TEST(SlurmHealth, ANodeDrainedForAnIdThatIsNowUnknownStaysDrainedAndSaysWhy) {
  const std::string ours = "dltune: gpu.ecc: GPU 3 (0000:5d:00.0) has 2 uncorrectable errors";
  dltune::audit::CheckReport check;
  auto ecc = finding("gpu.ecc", "ECC errors cannot be checked without NVML: nvmlInit failed");
  ecc.unknown = true;
  ecc.severity = dltune::settings::Severity::kInfo;
  ecc.stakes = dltune::settings::Severity::kCritical;
  auto throttle = finding("gpu.throttle", "throttling cannot be checked without NVML");
  throttle.unknown = true;
  throttle.stakes = dltune::settings::Severity::kWarn;
  check.findings = {ecc, throttle, finding("shm.size", "ok")};
  const auto kept = unknown_for_reason(check, ours, dltune::settings::Severity::kCritical);
  ASSERT_EQ(kept.size(), 1u);  // gpu.throttle is unknown too, but the node was not drained for it
  EXPECT_EQ(kept[0].id, "gpu.ecc");
  // A reason that left ids out keeps every unknown at the drain's severity.
  const auto cut = unknown_for_reason(check, "dltune: shm.size: x; +5: a.b, 4 more",
                                      dltune::settings::Severity::kCritical);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].id, "gpu.ecc");
  // Judged again (not unknown), the node is resumed as before.
  ecc.unknown = false;
  check.findings = {ecc};
  EXPECT_TRUE(unknown_for_reason(check, ours, dltune::settings::Severity::kCritical).empty());

  const std::string keep = "dltune: not judged: gpu.ecc: ECC errors cannot be checked";
  EXPECT_EQ(decide(node("IDLE+DRAIN", ours), true, keep, keep), HealthAction::kKeepUnknown);
  EXPECT_EQ(decide(node("IDLE+DRAIN", keep), true, keep, keep), HealthAction::kNone);
  EXPECT_EQ(decide(node("IDLE+DRAIN", ours), true, "", ""), HealthAction::kResume);
  // Never an admin's drain, and never a drain for an unknown alone.
  EXPECT_EQ(decide(node("IDLE+DRAIN", "bad DIMM"), true, keep, keep),
            HealthAction::kKeepAdminDrain);
  EXPECT_EQ(decide(node("IDLE"), true, "", ""), HealthAction::kNone);
}

// The health check's watchdog says the node was left as it is only when it was: a drain under
// way when the limit passed (scontrol still running, its request perhaps already sent) is said.
TEST(HealthWatchdog, SaysAnUpdateUnderWayMayStillTakeEffect) {
  const auto idle = dltune::testing::in_child([] {
    const std::function<std::string()> said = [] {
      return dltune::slurm::watchdog_message(50'000'000);
    };
    const dltune::Watchdog watchdog(std::chrono::milliseconds(50), said, 2);
    std::this_thread::sleep_for(std::chrono::seconds(20));
    return std::string();
  });
  ASSERT_TRUE(WIFEXITED(idle.status));
  EXPECT_EQ(WEXITSTATUS(idle.status), 2);
  EXPECT_THAT(idle.err, HasSubstr(": the node is left as it is"));

  dltune::testing::TempDir dir;
  const auto scontrol = dir.file("scontrol");
  std::ofstream(scontrol) << "#!/bin/sh\nexec sleep 3\n";
  ASSERT_EQ(::chmod(scontrol.c_str(), 0755), 0);
  const auto draining = dltune::testing::in_child([&] {
    ::setenv("PATH", (dir.file("") + ":/usr/bin:/bin").c_str(), 1);
    const std::function<std::string()> said = [] {
      return dltune::slurm::watchdog_message(300'000'000);
    };
    const dltune::Watchdog watchdog(std::chrono::milliseconds(300), said, 2);
    dltune::slurm::Scontrol s;
    auto ok = s.drain("node1", "dltune: gpu.ecc: x");
    return std::string(ok ? "returned" : ok.error().message());
  });
  ASSERT_TRUE(WIFEXITED(draining.status));
  EXPECT_EQ(WEXITSTATUS(draining.status), 2) << draining.report;
  EXPECT_THAT(draining.err,
              HasSubstr("while scontrol update state=drain was under way: it may still take "
                        "effect; see `scontrol show node`"));
}

}  // namespace health_test

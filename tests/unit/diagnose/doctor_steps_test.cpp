// doctor()'s steps that judge what they are given: the job cgroups' OOM counters against the
// kills the log showed, /proc/vmstat's compaction stalls, and the summary's first action.
#include <gtest/gtest.h>

#include "diagnose/doctor.hpp"

namespace doctor_steps_test {

using namespace dltune::diagnose;

namespace {

LoggedEvent event(const std::string& kind, Severity severity, const std::string& action,
                  std::map<std::string, std::string> fields = {}) {
  KernelEvent k;
  k.kind = kind;
  k.severity = severity;
  k.action = action;
  k.fields = std::move(fields);
  return LoggedEvent{std::move(k), 1, "kmsg", {}};
}

}  // namespace

TEST(DoctorSteps, AJobGroupsOomKillsAreSaidWhenTheLogShowsFewer) {
  const std::vector<LoggedEvent> logged = {
      event("oom_kill", Severity::kCritical, "a", {{"cgroup", "/sys/fs/cgroup/memory/dltune/j1"}}),
      event("xid", Severity::kCritical, "b")};
  const std::vector<JobGroupOoms> groups = {{"dltune/j1", 1}, {"dltune/j2", 3}, {"dltune/j3", 2}};
  // j1's one kill is in the log: nothing; j3 has none there, j2 neither.
  std::vector<JobGroupOoms> more = groups;
  more[0].oom_kills = 2;  // one more than the log shows
  const auto events = job_group_oom_events(more, logged, 42);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event.fields.at("cgroup"), "dltune/j1");
  EXPECT_NE(events[0].event.explanation.find("counted 2 OOM kill(s) of its processes, 1 of them "
                                             "in the log read"),
            std::string::npos)
      << events[0].event.explanation;
  EXPECT_EQ(events[1].event.fields.at("count"), "3");
  EXPECT_NE(events[1].event.explanation.find("that the log read does not show"), std::string::npos);
  EXPECT_EQ(events[1].wall_ns, 42);
  EXPECT_EQ(events[1].source, "cgroup");
  EXPECT_EQ(events[1].event.severity, Severity::kCritical);
  EXPECT_EQ(job_group_oom_events(groups, logged, 42).size(), 2u);  // j1 fully logged
}

TEST(DoctorSteps, CompactionStallsSinceBootAreAnInfoEvent) {
  EXPECT_FALSE(compaction_event({{"compact_stall", 0}, {"compact_fail", 3}}, 7));
  EXPECT_FALSE(compaction_event({}, 7));
  const auto e = compaction_event({{"compact_stall", 120}, {"compact_fail", 4}}, 7);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event.kind, "compaction_stall");
  EXPECT_EQ(e->event.severity, Severity::kInfo);
  EXPECT_EQ(e->event.fields.at("compact_stall"), "120");
  EXPECT_EQ(e->event.fields.at("compact_fail"), "4");
  EXPECT_NE(e->event.explanation.find("120 memory allocations"), std::string::npos);
  EXPECT_EQ(e->source, "/proc/vmstat");
  EXPECT_EQ(e->wall_ns, 7);
}

TEST(DoctorSteps, TheFirstActionIsTheLatestCriticalsElseTheCommonestWarnings) {
  DoctorReport r;
  r.events = {event("segfault", Severity::kWarning, "fix the crash"),
              event("xid", Severity::kCritical, "reset the GPU"),
              event("nvme_timeout", Severity::kWarning, "check the disk"),
              event("oom_kill", Severity::kCritical, "raise the limit"),
              event("nvme_timeout", Severity::kWarning, "check the disk")};
  summarize(r);
  EXPECT_EQ(r.worst, Severity::kCritical);
  ASSERT_TRUE(r.critical);
  EXPECT_EQ(*r.critical, 3u);
  EXPECT_EQ(r.first_action, "raise the limit");
  EXPECT_EQ(r.counts.at("nvme_timeout"), 2);
  EXPECT_EQ(r.exit_code(), 2);
  // Without a critical event: the commonest warning's.
  r.events.erase(r.events.begin() + 3);
  r.events.erase(r.events.begin() + 1);
  summarize(r);
  EXPECT_FALSE(r.critical);
  EXPECT_EQ(r.worst, Severity::kWarning);
  EXPECT_EQ(r.first_action, "check the disk");
  EXPECT_FALSE(r.counts.count("xid"));
  EXPECT_EQ(r.exit_code(), 1);
  // Nothing: no action, exit 0.
  r.events.clear();
  summarize(r);
  EXPECT_TRUE(r.first_action.empty());
  EXPECT_EQ(r.exit_code(), 0);
}

}  // namespace doctor_steps_test

// /dev/kmsg records (`prio,seq,usec,flags;text`) and the OOM killer's summary line, on real lines
// of the development VM's 6.18 kernel.
#include <gtest/gtest.h>

#include "host/parse/kmsg.hpp"

namespace kmsg_test {

using namespace dltune::host::parse;

TEST(Kmsg, RecordsWithTheirLevelSequenceAndTime) {
  const auto r = kmsg_record(
      "6,422,622546418,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
      "mems_allowed=0,oom_memcg=/stackprobe-memtest,task_memcg=/stackprobe-memtest,task=hog,"
      "pid=21037,uid=0\n SUBSYSTEM=memory\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->priority, 6);
  EXPECT_EQ(r->facility, 0);
  EXPECT_EQ(r->seq, 422u);
  EXPECT_EQ(r->usec, 622546418u);
  EXPECT_EQ(r->text.find('\n'), std::string::npos);  // continuation lines are not the message
  EXPECT_EQ(kmsg_record("30,7,100,c;systemd[1]: started")->facility, 3);
  for (const char* bad : {"", "no semicolon", "6,x,1,-;t", "6,1;t", ";text"})
    EXPECT_FALSE(kmsg_record(bad)) << bad;
}

TEST(Kmsg, TheOomKillLineNamesTheVictimAndItsCgroup) {
  const auto k = oom_kill(
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
      "oom_memcg=/dltune/run-1,task_memcg=/dltune/run-1,task=pt_data_worker,pid=21037,uid=1000");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->constraint, "CONSTRAINT_MEMCG");
  EXPECT_EQ(k->oom_memcg, "/dltune/run-1");
  EXPECT_EQ(k->task_memcg, "/dltune/run-1");
  EXPECT_EQ(k->task, "pt_data_worker");
  EXPECT_EQ(k->pid, 21037);
  EXPECT_EQ(k->uid, 1000);
  // A global OOM has no oom_memcg.
  const auto g = oom_kill(
      "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
      "global_oom,task_memcg=/user.slice,task=python3,pid=9,uid=0");
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->oom_memcg.empty());
  EXPECT_EQ(g->task, "python3");
  EXPECT_FALSE(oom_kill("Memory cgroup out of memory: Killed process 21037 (hog)"));
  EXPECT_FALSE(oom_kill("oom-kill:constraint=CONSTRAINT_NONE,task=x"));          // no pid
  EXPECT_FALSE(oom_kill("oom-kill:constraint=CONSTRAINT_NONE,task=x,pid=abc"));  // bad pid
}

}  // namespace kmsg_test

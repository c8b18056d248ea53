#pragma once
// Kernel log records as /dev/kmsg gives them, and the OOM killer's own line (pure parsers).
// Format: Documentation/ABI/testing/dev-kmsg ("PRIO,SEQ,USEC,FLAGS;TEXT", continuation lines
// starting with a space); the OOM line: mm/oom_kill.c dump_oom_summary() (kernel 5.0+).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dltune::host::parse {

struct KmsgRecord {
  int priority = 0;  // the syslog level (PRIO & 7)
  int facility = 0;  // PRIO >> 3
  std::uint64_t seq = 0;
  std::uint64_t usec = 0;  // CLOCK_MONOTONIC at the time of the record
  std::string text;        // the message, without the continuation (key=value) lines
};
[[nodiscard]] std::optional<KmsgRecord> kmsg_record(std::string_view raw);

// "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,
//  oom_memcg=/job,task_memcg=/job,task=python3,pid=21037,uid=0"
struct OomKill {
  std::string constraint;  // CONSTRAINT_NONE (the whole machine), CONSTRAINT_MEMCG, ...
  std::string oom_memcg;   // the cgroup whose limit was hit (empty for a global OOM)
  std::string task_memcg;  // the victim's cgroup
  std::string task;        // the victim's name (comm)
  int pid = 0;
  std::optional<int> uid;
};
[[nodiscard]] std::optional<OomKill> oom_kill(std::string_view text);

}  // namespace dltune::host::parse

#pragma once
// `doctor` as a library call: what went wrong on a host, from the kernel's own record. The
// sources in order of preference: /dev/kmsg on the live host; for what it does not hold (before
// its oldest record, or everything when it cannot be read, or a --root tree) the systemd journal
// when there is one, else the syslog files. Then what the kernel does not log: the OOM kills
// dltune's job cgroups counted, compaction stalls from /proc/vmstat, training processes near
// their open-file limit.
#include <signal.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/kernel_events.hpp"
#include "diagnose/kernel_log.hpp"
#include "host/root.hpp"

namespace dltune::diagnose {

struct DoctorRequest {
  std::int64_t since_wall_ns = 0;  // 0: since boot (all the ring buffer holds)
  // A recording whose time span, wall ns, gets the events found in it (document "events").
  std::string recording_path;
  std::optional<std::pair<std::int64_t, std::int64_t>> recording_span;
  // For naming GPUs in events: the process environment and the NVML library to ask.
  std::map<std::string, std::string> environment;
  std::string nvml_library;
  // Called with each syslog file as its reading starts (a progress line), when set.
  std::function<void(const std::string& path)> reading;
  // Now, wall clock ns: the time of what is found now rather than logged (cgroup counters,
  // /proc/vmstat, open files). The caller's clock.
  std::int64_t now_wall_ns = 0;
};

struct DoctorReport {
  std::int64_t since_wall_ns = 0;
  nlohmann::json sources = nlohmann::json::array();  // what was read, per source
  std::vector<LoggedEvent> events;                   // in time order
  std::vector<std::string> notes;
  std::map<std::string, int> counts;    // per kind
  std::optional<std::size_t> critical;  // the most recent critical event, an index of events
  std::string first_action;             // the one action to take first
  Severity worst = Severity::kInfo;
  // Which source the report rests on, for its first line.
  bool kmsg_read = false;
  std::size_t kmsg_records = 0;
  bool journal = false;
  std::size_t syslog_files = 0;
  bool nothing_readable = false;  // no kmsg, no journal, no syslog file

  // 1 when nothing could be read; else 2 for a critical event, 1 for a warning, 0.
  [[nodiscard]] int exit_code() const;
};

// Reads the log(s) of `root` since `request.since_wall_ns`, classifies with `xids`.
[[nodiscard]] DoctorReport doctor(const DoctorRequest& request, const host::Root& root,
                                  const XidTable& xids);

// doctor()'s steps that judge what they are given (tested on their own):
// a job cgroup of `dltune run` and the OOM kills it counted.
struct JobGroupOoms {
  std::string group;
  std::uint64_t oom_kills = 0;
};
// An event per group whose kills the events read from the log do not all show.
[[nodiscard]] std::vector<LoggedEvent> job_group_oom_events(
    const std::vector<JobGroupOoms>& groups, const std::vector<LoggedEvent>& logged_events,
    std::int64_t now_wall_ns);
// /proc/vmstat's compaction stalls since boot (the kernel logs none), when there were any.
[[nodiscard]] std::optional<LoggedEvent> compaction_event(
    const std::map<std::string, std::uint64_t>& vmstat, std::int64_t now_wall_ns);
// The report's counts per kind, worst severity, most recent critical event and the one action
// to take first (that event's, else the most common warning's), from its events.
void summarize(DoctorReport& report);

// The schema dltune.doctor/1 (docs/json.md).
[[nodiscard]] nlohmann::json to_json(const DoctorReport& report);
[[nodiscard]] nlohmann::json event_json(const LoggedEvent& e);
// The text report: its first line names the source and `window` ("since boot").
[[nodiscard]] std::string render_text(const DoctorReport& report, const std::string& window);
// One event as the text report and --follow print it.
[[nodiscard]] std::string render_event(const LoggedEvent& e);

// What doctor reads back to: since `since_wall_ns`, said as `text` ("since 2026-12-01 10:00:00
// (24h)").
struct DoctorWindow {
  std::int64_t since_wall_ns = 0;  // 0: since boot
  std::string text;
};
// The last `since_ns` (24 hours when empty), or everything since boot; a recording's span (wall
// ns) that starts earlier reaches the window back to its start, so that all of its events can be
// stored.
[[nodiscard]] DoctorWindow doctor_window(
    bool boot, std::optional<std::int64_t> since_ns,
    const std::optional<std::pair<std::int64_t, std::int64_t>>& recording_span,
    std::int64_t now_wall_ns);
// A recording's wall-clock span: its start to its end, else its last sample, else `now_wall_ns`.
[[nodiscard]] Result<std::pair<std::int64_t, std::int64_t>> recording_span(
    const std::string& path, std::int64_t now_wall_ns);

// doctor's request and window from its options at `now_wall_ns`: the last `since_ns` or since
// boot, reaching back to the start of `recording` (when given: its span read, an error naming
// --recording), whose events are stored in it.
struct DoctorPlan {
  DoctorRequest request;  // its environment, NVML library and reading hook are the caller's
  DoctorWindow window;
};
[[nodiscard]] Result<DoctorPlan> doctor_plan(bool boot, std::optional<std::int64_t> since_ns,
                                             const std::string& recording,
                                             std::int64_t now_wall_ns);

// --follow: new kernel-log records as they come, turned into events, until a signal of
// `stop_set` (blocked by the caller) comes. `lost` is called when the ring buffer wrapped.
struct FollowHooks {
  std::function<void(const LoggedEvent&)> event;
  std::function<void()> lost;
};
[[nodiscard]] Result<void> follow_events(const host::Root& root, const XidTable& xids,
                                         const FollowHooks& hooks, const sigset_t& stop_set);
// The same until SIGINT, SIGTERM or SIGHUP, which it blocks meanwhile (and takes synchronously);
// the signal mask is restored on return.
[[nodiscard]] Result<void> follow_until_stopped(const host::Root& root, const XidTable& xids,
                                                const FollowHooks& hooks);

}  // namespace dltune::diagnose

#include "diagnose/doctor.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/time_format.hpp"
#include "diagnose/fd_risk.hpp"
#include "diagnose/journal.hpp"
#include "diagnose/syslog_files.hpp"
#include "host/cgroup.hpp"
#include "host/parse/proc.hpp"
#include "inventory/gpu.hpp"
#include "monitor/sampler.hpp"
#include "store/recording.hpp"

namespace dltune::diagnose {

int DoctorReport::exit_code() const {
  if (nothing_readable) return 1;
  if (worst == Severity::kCritical) return 2;
  if (worst == Severity::kWarning) return 1;
  return 0;
}

namespace {

// The kernel's log since the request's start: /dev/kmsg on the live host; for what it does not
// hold (before its oldest record, or everything when it cannot be read, or a --root tree) the
// systemd journal when there is one, else the syslog files. They are read first and the ring
// buffer's records after, so that the collector sees the log in time order (an OOM report, its
// context line and its kill follow each other). Fills the report's sources, notes, events and
// which source it rests on.
void read_kernel_log(const DoctorRequest& request, const host::Root& root, const XidTable& xids,
                     DoctorReport& report) {
  KmsgRead read;
  if (root.live())
    read = read_kmsg(root, request.since_wall_ns);
  else
    read.unavailable = "no /dev/kmsg in a --root tree";
  EventCollector collector(xids);
  const std::int64_t kmsg_from = read.unavailable ? 0 : read.oldest_wall_ns;
  auto& notes = report.notes;
  report.sources.push_back({{"source", "kmsg"},
                            {"path", "/dev/kmsg"},
                            {"records", read.records.size()},
                            {"readable", !read.unavailable.has_value()}});
  const bool older = read.unavailable.has_value() || kmsg_from > request.since_wall_ns;
  const bool journal = older && has_journal(root);
  const auto files = syslog_files(root);
  if (read.unavailable)
    notes.push_back(*read.unavailable + (journal ? "; the journal is read instead"
                                                 : "; the syslog files are read instead"));
  if (journal) {
    const auto st = read_journal(
        root, request.since_wall_ns, read.unavailable ? 0 : kmsg_from,
        [&](std::int64_t wall, std::string_view msg) { collector.add(wall, "journal", msg); });
    report.sources.push_back(nlohmann::json{
        {"source", "journal"}, {"directories", st.directories}, {"entries", st.entries}});
    if (st.error) notes.push_back(*st.error);
  } else if (!files.empty() && older) {
    std::string current;
    const auto st = read_syslog(
        root, files, request.since_wall_ns, read.unavailable ? 0 : kmsg_from,
        [&](std::string_view msg) { return classify(msg, xids).has_value(); },
        [&](const std::string& path, const SyslogLine& l) {
          if (request.reading && path != current) {
            current = path;
            request.reading(path);
          }
          collector.add(l.wall_ns, path, l.text);
        });
    report.sources.push_back({{"source", "syslog"},
                              {"files", files},
                              {"lines", st.lines},
                              {"kernel_lines", st.kernel_lines},
                              {"skipped", st.skipped}});
    for (const auto& e : st.errors) notes.push_back("cannot read " + e);
    if (st.skipped > 0)
      notes.push_back(fmt::format("{} syslog line(s) did not parse and were skipped", st.skipped));
  } else if (files.empty() && read.unavailable) {
    notes.push_back("no journal, and no kern.log, syslog or messages under /var/log either");
  }
  for (const auto& r : read.records) collector.add(r.wall_ns, r.source, r.text);
  report.events = collector.finish();
  if (read.lost > 0)
    notes.push_back(
        fmt::format("the ring buffer wrapped {} time(s) while it was read: some "
                    "records were lost",
                    read.lost));
  if (read.garbled > 0)
    notes.push_back(fmt::format("{} record(s) did not parse and were skipped", read.garbled));
  report.kmsg_read = !read.unavailable.has_value();
  report.kmsg_records = read.records.size();
  report.journal = journal;
  report.syslog_files = files.size();
  report.nothing_readable = read.unavailable && files.empty() && !journal;
}

// Each of dltune's job cgroups (their counters outlive a wrapped ring buffer) with its OOM kills.
std::vector<JobGroupOoms> job_group_ooms(const host::Root& root) {
  std::vector<JobGroupOoms> out;
  auto layout = host::cgroup_layout(root);
  if (!layout) return out;
  auto groups = host::discover_job_groups(root, *layout);
  if (!groups) return out;
  for (const auto& g : *groups) {
    auto c = monitor::CgroupCollector::open(root, g);
    if (!c) continue;
    std::optional<monitor::Cgroup> cg;
    monitor::Notices quiet;
    if (c->collect(cg, quiet) && cg && cg->events_oom_kill && *cg->events_oom_kill > 0)
      out.push_back({g, *cg->events_oom_kill});
  }
  return out;
}

// GPU events by index and UUID, as nvidia-smi and dltune env name them (PCI sysfs and NVML;
// asked only when an event names a PCI address).
void name_gpu_events(const DoctorRequest& request, const host::Root& root,
                     std::vector<LoggedEvent>& events) {
  if (!names_pci(events)) return;
  inventory::Context ctx(root, request.environment);
  const auto gpus = inventory::collect_gpus(ctx, request.nvml_library);
  std::vector<GpuName> names;
  for (const auto& d : gpus.devices) {
    if (!d.compute) continue;
    GpuName n;
    n.pci = d.address;
    n.index = d.nvml_index;
    for (const auto& nd : gpus.nvml.devices)
      if (d.nvml_index && nd.index == *d.nvml_index) {
        n.uuid = nd.uuid;
        describe_memory(nd, n);
      }
    names.push_back(std::move(n));
  }
  name_gpus(events, names);
}

// Now, from /proc: training processes near their open-file limit (the kernel logs nothing).
void add_fd_events(const host::Root& root, std::int64_t now_wall_ns, DoctorReport& report) {
  if (!root.live() && !root.exists("/proc")) return;
  const auto scan = scan_fds(root);
  for (const auto& u : scan.processes)
    if (auto e = fd_risk(u))
      report.events.push_back(LoggedEvent{std::move(*e), now_wall_ns, "/proc", {}});
  if (scan.unreadable > 0)
    report.notes.push_back(
        fmt::format("{} training process(es) of other users: their open files "
                    "could not be counted (root can)",
                    scan.unreadable));
}

// The events within the recording's span stored in it (document "events"), beside what the
// job's own output said (run --record wrote that; the kernel's is replaced). The note says how
// it went.
std::string store_in_recording(const std::string& path,
                               const std::pair<std::int64_t, std::int64_t>& span,
                               const std::vector<LoggedEvent>& events) {
  nlohmann::json doc = nlohmann::json::array();
  if (auto rec = store::Recording::open(path))
    if (auto kept = (*rec)->document("events"); kept && *kept && (*kept)->is_array())
      for (const auto& e : **kept)
        if (e.is_object() && e.value("source", "") == store::kJobOutputSource) doc.push_back(e);
  for (const auto& e : events)
    if (e.wall_ns >= span.first && e.wall_ns <= span.second && e.source != "/proc" &&
        e.source != "/proc/vmstat")
      doc.push_back({{"time_ns", e.wall_ns},
                     {"kind", e.event.kind},
                     {"text", e.event.explanation},
                     {"severity", severity_name(e.event.severity)},
                     {"source", e.source}});
  if (auto ok = store::add_document(path, "events", doc); !ok)
    return "the events could not be stored in the recording: " + ok.error().message();
  return fmt::format("{} event(s) stored in {} (dltune report marks them)", doc.size(), path);
}

}  // namespace

std::vector<LoggedEvent> job_group_oom_events(const std::vector<JobGroupOoms>& groups,
                                              const std::vector<LoggedEvent>& logged_events,
                                              std::int64_t now_wall_ns) {
  std::vector<LoggedEvent> out;
  for (const auto& g : groups) {
    std::size_t logged = 0;
    for (const auto& e : logged_events)
      if (e.event.kind == "oom_kill" && e.event.fields.count("cgroup") &&
          e.event.fields.at("cgroup").ends_with(g.group))
        ++logged;
    if (logged >= g.oom_kills) continue;
    KernelEvent k;
    k.kind = "oom_kill";
    k.severity = Severity::kCritical;
    k.explanation = fmt::format(
        "The job cgroup {} counted {} OOM kill(s) of its processes{}.", g.group, g.oom_kills,
        logged > 0 ? fmt::format(", {} of them in the log read", logged)
                   : " that the log read does not show (older than the window or lost)");
    k.action =
        "Raise the job's memory limit (dltune run --memory), or need less: fewer DataLoader "
        "workers, a smaller batch or prefetch_factor.";
    k.fields["cgroup"] = g.group;
    k.fields["count"] = std::to_string(g.oom_kills);
    out.push_back(LoggedEvent{std::move(k), now_wall_ns, "cgroup", {}});
  }
  return out;
}

std::optional<LoggedEvent> compaction_event(const std::map<std::string, std::uint64_t>& vmstat,
                                            std::int64_t now_wall_ns) {
  const auto count = [&](const char* key) -> std::uint64_t {
    const auto it = vmstat.find(key);
    return it != vmstat.end() ? it->second : 0;
  };
  const std::uint64_t stalls = count("compact_stall"), fails = count("compact_fail");
  if (stalls == 0) return std::nullopt;
  KernelEvent k;
  k.kind = "compaction_stall";
  k.severity = Severity::kInfo;
  k.explanation = fmt::format(
      "Since boot, {} memory allocations waited for the kernel to compact memory ({} of "
      "them failed): with transparent huge pages 'always', a training job's allocations "
      "can stall on this.",
      stalls, fails);
  k.action =
      "If they rise while a job runs (dltune top: THP and compaction), set THP's "
      "defrag to 'defer+madvise' or 'madvise' (dltune tune) rather than 'always'.";
  k.fields["compact_stall"] = std::to_string(stalls);
  k.fields["compact_fail"] = std::to_string(fails);
  return LoggedEvent{std::move(k), now_wall_ns, "/proc/vmstat", {}};
}

void summarize(DoctorReport& report) {
  const auto& events = report.events;
  report.counts.clear();
  report.worst = Severity::kInfo;
  report.critical.reset();
  report.first_action.clear();
  for (std::size_t i = 0; i < events.size(); ++i) {
    ++report.counts[events[i].event.kind];
    report.worst = std::max(report.worst, events[i].event.severity);
    if (events[i].event.severity == Severity::kCritical) report.critical = i;
  }
  // The one action that matters most: the most recent critical event's, else the most common
  // warning's.
  if (report.critical) {
    report.first_action = events[*report.critical].event.action;
    return;
  }
  std::map<std::string, int> warn;
  for (const auto& e : events)
    if (e.event.severity == Severity::kWarning) ++warn[e.event.kind];
  const auto top = std::max_element(
      warn.begin(), warn.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top != warn.end())
    for (const auto& e : events)
      if (e.event.kind == top->first) report.first_action = e.event.action;
}

DoctorReport doctor(const DoctorRequest& request, const host::Root& root, const XidTable& xids) {
  DoctorReport report;
  report.since_wall_ns = request.since_wall_ns;
  read_kernel_log(request, root, xids, report);
  auto& events = report.events;
  // What the kernel does not log: the OOM kills the job cgroups of `dltune run` counted (said
  // per group when the log did not show as many), compaction stalls since boot.
  for (auto& e : job_group_oom_events(job_group_ooms(root), events, request.now_wall_ns))
    events.push_back(std::move(e));
  if (const auto text = root.read("/proc/vmstat"); text && *text)
    if (const auto vm = host::parse::vmstat(**text))
      if (auto e = compaction_event(*vm, request.now_wall_ns)) events.push_back(std::move(*e));
  name_gpu_events(request, root, events);
  add_fd_events(root, request.now_wall_ns, report);
  if (request.recording_span)
    report.notes.push_back(
        store_in_recording(request.recording_path, *request.recording_span, events));
  summarize(report);
  return report;
}

nlohmann::json event_json(const LoggedEvent& e) {
  return {{"time_ns", e.wall_ns},
          {"source", e.source},
          {"kind", e.event.kind},
          {"severity", severity_name(e.event.severity)},
          {"explanation", e.event.explanation},
          {"action", e.event.action},
          {"fields", e.event.fields},
          {"raw", e.raw}};
}

nlohmann::json to_json(const DoctorReport& r) {
  nlohmann::json j;
  j["schema"] = "dltune.doctor/1";
  j["since_wall_ns"] = r.since_wall_ns;
  j["sources"] = r.sources;
  j["counts"] = r.counts;
  j["first_action"] = r.first_action;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : r.events) list.push_back(event_json(e));
  j["events"] = list;
  j["notes"] = r.notes;
  return j;
}

std::string render_event(const LoggedEvent& e) {
  std::string out =
      fmt::format("\n{} [{}] {} ({})\n  {}\n", text::local_time_ns(e.wall_ns),
                  severity_name(e.event.severity), e.event.kind, e.source, e.event.explanation);
  for (const auto& r : e.raw) out += fmt::format("  > {}\n", r);
  out += fmt::format("  fix: {}\n", e.event.action);
  return out;
}

std::string render_text(const DoctorReport& r, const std::string& window) {
  // No source at all: that is the finding, with what would give one; never "Nothing found".
  if (!r.kmsg_read && !r.journal && r.syslog_files == 0) {
    std::string out =
        "dltune doctor: no kernel log could be read, so nothing can be said about this host's "
        "events.\n"
        "  /dev/kmsg needs root (or kernel.dmesg_restrict=0): run `sudo dltune doctor`;\n"
        "  there is no systemd journal, and no kern.log, syslog or messages under /var/log\n"
        "  (with --root, the tree's /var/log).\n";
    for (const auto& e : r.events) out += render_event(e);  // the job cgroups' own counts
    if (!r.notes.empty()) {
      out += "\nNotes\n";
      for (const auto& n : r.notes) out += fmt::format("  - {}\n", n);
    }
    return out;
  }
  std::string out =
      fmt::format("dltune doctor: the kernel log ({}) {}\n",
                  !r.kmsg_read ? (r.journal ? std::string("the journal")
                                            : fmt::format("{} syslog file(s)", r.syslog_files))
                               : fmt::format("/dev/kmsg, {} records", r.kmsg_records),
                  window);
  if (r.events.empty()) {
    out += "\nNothing found: no OOM kills, GPU, PCIe, storage or crash events.\n";
  } else {
    std::vector<std::string> parts;
    for (const auto& [k, n] : r.counts) parts.push_back(fmt::format("{} {}", n, k));
    out += fmt::format("\nSummary: {} event{}: {}\n", r.events.size(),
                       r.events.size() == 1 ? "" : "s", fmt::join(parts, ", "));
    if (r.critical) {
      const auto& c = r.events[*r.critical];
      out += fmt::format("Most recent critical: {} {}\n", text::local_time_ns(c.wall_ns),
                         c.event.explanation);
    }
    if (!r.first_action.empty()) out += fmt::format("Do this first: {}\n", r.first_action);
    for (const auto& e : r.events) out += render_event(e);
  }
  if (!r.notes.empty()) {
    out += "\nNotes\n";
    for (const auto& n : r.notes) out += fmt::format("  - {}\n", n);
  }
  return out;
}

DoctorWindow doctor_window(
    bool boot, std::optional<std::int64_t> since_ns,
    const std::optional<std::pair<std::int64_t, std::int64_t>>& recording_span,
    std::int64_t now_wall_ns) {
  DoctorWindow w{0, "since boot"};
  if (boot) return w;
  const std::int64_t d = since_ns.value_or(24 * 3'600'000'000'000);
  w.since_wall_ns = now_wall_ns - d;
  w.text = fmt::format("since {} ({})", text::local_time_ns(w.since_wall_ns),
                       text::format_duration_ns(d));
  if (recording_span && recording_span->first < w.since_wall_ns) {
    w.since_wall_ns = recording_span->first;
    w.text = fmt::format("since {} (the recording's start)", text::local_time_ns(w.since_wall_ns));
  }
  return w;
}

Result<std::pair<std::int64_t, std::int64_t>> recording_span(const std::string& path,
                                                             std::int64_t now_wall_ns) {
  auto rec = store::Recording::open(path);
  if (!rec) return tl::unexpected(rec.error());
  const auto& info = (*rec)->info();
  std::int64_t end = info.ended_wall_ns.value_or(0);
  if (end == 0)
    if (auto times = (*rec)->times(); times && !times->empty()) end = times->back();
  return std::make_pair(info.started_wall_ns, end > 0 ? end : now_wall_ns);
}

Result<void> follow_events(const host::Root& root, const XidTable& xids, const FollowHooks& hooks,
                           const sigset_t& stop_set) {
  auto f = KmsgFollower::open(root);
  if (!f) return tl::unexpected(f.error());
  EventCollector c(xids);
  std::size_t lost = 0;
  for (;;) {
    timespec zero{};
    if (::sigtimedwait(&stop_set, nullptr, &zero) > 0) return {};
    for (const auto& r : f->wait(200)) c.add(r.wall_ns, r.source, r.text);
    if (f->lost() > lost) {
      lost = f->lost();
      if (hooks.lost) hooks.lost();
    }
    for (const auto& e : c.take()) hooks.event(e);
  }
}

Result<DoctorPlan> doctor_plan(bool boot, std::optional<std::int64_t> since_ns,
                               const std::string& recording, std::int64_t now_wall_ns) {
  DoctorPlan plan;
  if (!recording.empty()) {
    auto span = recording_span(recording, now_wall_ns);
    if (!span) return fail("--recording: " + span.error().message());
    plan.request.recording_path = recording;
    plan.request.recording_span = *span;
  }
  plan.window = doctor_window(boot, since_ns, plan.request.recording_span, now_wall_ns);
  plan.request.now_wall_ns = now_wall_ns;
  plan.request.since_wall_ns = plan.window.since_wall_ns;
  return plan;
}

Result<void> follow_until_stopped(const host::Root& root, const XidTable& xids,
                                  const FollowHooks& hooks) {
  sigset_t stop, old;
  ::sigemptyset(&stop);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop, s);
  ::pthread_sigmask(SIG_BLOCK, &stop, &old);
  auto followed = follow_events(root, xids, hooks, stop);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return followed;
}

}  // namespace dltune::diagnose

// `dltune doctor`: what went wrong on this host, from the kernel's own log: /dev/kmsg,
// then the systemd journal and kern.log/syslog for what the ring buffer no longer holds; --follow.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/clock.hpp"
#include "core/text.hpp"
#include "diagnose/fd_risk.hpp"
#include "diagnose/journal.hpp"
#include "diagnose/kernel_log.hpp"
#include "diagnose/syslog_files.hpp"
#include "inventory/gpu.hpp"
#include "launch/cgroup.hpp"
#include "monitor/sampler.hpp"
#include "serve/job_groups.hpp"
#include "store/recording.hpp"

namespace dltune::cli {

namespace {

std::string local_time(std::int64_t wall_ns) {
  const time_t t = static_cast<time_t>(wall_ns / 1'000'000'000);
  tm lt{};
  ::localtime_r(&t, &lt);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &lt);
  return buf;
}

class DoctorCommand : public Command {
 public:
  explicit DoctorCommand(CLI::App& app) {
    sub_ = app.add_subcommand("doctor", "Find what went wrong in the kernel's log, and what to do");
    sub_->description(
        "Reads the kernel's log (/dev/kmsg: root, or kernel.dmesg_restrict=0; before its oldest\n"
        "record, or when it cannot be read, /var/log/kern.log, syslog or messages with their\n"
        "rotations, gzip'd ones too) and explains what\n"
        "matters to a training host, each event with its time, the raw line(s), what it means\n"
        "and the action:\n"
        "  oom_kill             the victim (pid, name, DataLoader worker or not), global or the\n"
        "                       job's cgroup, the memory it held\n"
        "  xid / gpu_lost       NVIDIA Xid errors with their meaning (knowledge/xid.toml)\n"
        "  aer / pcie_link      PCIe errors (corrected or not) and links below their capability\n"
        "  hung_task, soft_lockup, segfault, general_protection, page_alloc_failure,\n"
        "  fs_error (ext4, xfs), nvme_timeout\n"
        "  fd_exhaustion        now, from /proc: a training process at 80% of its nofile limit\n"
        "  compaction_stall     from /proc/vmstat: allocations that waited for compaction\n"
        "At the top, a summary: the count of each kind, the most recent critical event and the\n"
        "one action that matters most.\n\n"
        "Exit status: 0 nothing above info, 1 warnings, 2 critical events (as dltune check), 1\n"
        "also when the log could not be read, 2 for bad input.\n\n"
        "Examples:\n"
        "  sudo dltune doctor                  # the last 24 hours\n"
        "  sudo dltune doctor --boot --json    # since boot, for scripts");
    sub_->add_option("--since", since_, "How far back: a duration (30m, 24h, 7d; default 24h)")
        ->type_name("DURATION");
    sub_->add_flag("--boot", boot_, "Everything since boot that the ring buffer still holds");
    sub_->add_flag("--follow", follow_,
                   "After the report, print each new event as it comes (Ctrl-C stops; with "
                   "--json one object per line)");
    sub_->add_flag("--json", json_, "The events as JSON (schema dltune.doctor/1)");
    sub_->add_option("--recording", recording_,
                     "Also store the events within RECORDING's time span in it (document "
                     "\"events\"): dltune report draws them as markers; the window reaches back "
                     "to the recording's start")
        ->type_name("RECORDING");
    sub_->add_option("--root", root_dir_,
                     "Read the host tree at DIR instead (a capture, a mounted disk): its journal, "
                     "syslog files and /proc")
        ->type_name("DIR");
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    if (boot_ && !since_.empty()) return refuse("give --since or --boot, not both");
    std::optional<std::pair<std::int64_t, std::int64_t>> span;  // the recording's, wall ns
    if (!recording_.empty()) {
      auto rec = store::Recording::open(recording_);
      if (!rec) return refuse("--recording: " + rec.error().message());
      const auto& info = (*rec)->info();
      std::int64_t end = info.ended_wall_ns.value_or(0);
      if (end == 0)
        if (auto times = (*rec)->times(); times && !times->empty()) end = times->back();
      span = std::make_pair(info.started_wall_ns, end > 0 ? end : now_ns(CLOCK_REALTIME));
    }
    if (follow_ && !root_dir_.empty())
      return refuse("--follow reads the live host's /dev/kmsg: not with --root");
    std::int64_t since_wall = 0;
    std::string window = "since boot";
    if (!boot_) {
      const std::string s = since_.empty() ? "24h" : since_;
      auto d = parse_days(s);
      if (!d || *d <= 0)
        return refuse(fmt::format("--since {}: expected a duration (30m, 24h, 7d)", s));
      since_wall = now_ns(CLOCK_REALTIME) - *d;
      window = fmt::format("since {} ({})", local_time(since_wall), s);
      // A recording older than the window: the window reaches back to its start, so that all
      // of its events can be stored.
      if (span && span->first < since_wall) {
        since_wall = span->first;
        window = fmt::format("since {} (the recording's start)", local_time(since_wall));
      }
    }
    const auto& xids = diagnose::builtin_xid_table();
    if (!xids) {
      fmt::print(stderr, "dltune doctor: {}\n", xids.error().message());
      return kExitFailure;
    }
    auto root = open_root("doctor", root_dir_);
    if (!root) return kExitBadInput;
    // Sources in order of preference: /dev/kmsg on the live host; for what it does not hold
    // (before its oldest record, or everything when it cannot be read, or a --root tree) the
    // systemd journal when there is one, else the syslog files.
    diagnose::KmsgRead read;
    if (root->live())
      read = diagnose::read_kmsg("/dev/kmsg", since_wall);
    else
      read.unavailable = "no /dev/kmsg in a --root tree";
    diagnose::EventCollector collector(*xids);
    // The kernel log's oldest record: the journal or syslog covers what is before it. They are
    // read first and the ring buffer's records after, so that the collector sees the log in
    // time order (an OOM report, its context line and its kill follow each other).
    const std::int64_t kmsg_from = read.unavailable ? 0 : read.oldest_wall_ns;
    std::vector<std::string> notes;
    nlohmann::json sources = nlohmann::json::array();
    sources.push_back({{"source", "kmsg"},
                       {"path", "/dev/kmsg"},
                       {"records", read.records.size()},
                       {"readable", !read.unavailable.has_value()}});
    const bool older = read.unavailable.has_value() || kmsg_from > since_wall;
    const bool journal = older && diagnose::has_journal(*root);
    const auto files = diagnose::syslog_files(*root);
    if (read.unavailable)
      notes.push_back(*read.unavailable + (journal ? "; the journal is read instead"
                                                   : "; the syslog files are read instead"));
    if (journal) {
      const auto st = diagnose::read_journal(
          *root, since_wall, read.unavailable ? 0 : kmsg_from,
          [&](std::int64_t wall, std::string_view msg) { collector.add(wall, "journal", msg); });
      sources.push_back(nlohmann::json{
          {"source", "journal"}, {"directories", st.directories}, {"entries", st.entries}});
      if (st.error) notes.push_back(*st.error);
    } else if (!files.empty() && older) {
      const bool tty = ::isatty(STDERR_FILENO) != 0;
      std::string current;
      const auto st = diagnose::read_syslog(
          *root, files, since_wall, read.unavailable ? 0 : kmsg_from,
          [&](std::string_view msg) { return diagnose::classify(msg, *xids).has_value(); },
          [&](const std::string& path, const diagnose::SyslogLine& l) {
            if (tty && path != current) {
              current = path;
              fmt::print(stderr, "dltune doctor: reading {}\n", path);
            }
            collector.add(l.wall_ns, path, l.text);
          });
      sources.push_back({{"source", "syslog"},
                         {"files", files},
                         {"lines", st.lines},
                         {"kernel_lines", st.kernel_lines},
                         {"skipped", st.skipped}});
      for (const auto& e : st.errors) notes.push_back("cannot read " + e);
      if (st.skipped > 0)
        notes.push_back(
            fmt::format("{} syslog line(s) did not parse and were skipped", st.skipped));
    } else if (files.empty() && read.unavailable) {
      notes.push_back("no journal, and no kern.log, syslog or messages under /var/log either");
    }
    for (const auto& r : read.records) collector.add(r.wall_ns, r.source, r.text);
    auto events = collector.finish();
    // OOM kills that the job cgroups of `dltune run` counted themselves (their counters outlive
    // a wrapped ring buffer): said per group when the log did not show as many.
    if (auto layout = launch::cgroup_layout(*root)) {
      if (auto groups = serve::discover_job_groups(*root, *layout)) {
        const auto now = now_ns(CLOCK_REALTIME);
        for (const auto& g : *groups) {
          auto c = monitor::CgroupCollector::open(*root, g);
          if (!c) continue;
          std::optional<monitor::Cgroup> cg;
          monitor::Notices quiet;
          if (!c->collect(cg, quiet) || !cg || !cg->events_oom_kill || *cg->events_oom_kill == 0)
            continue;
          std::size_t logged = 0;
          for (const auto& e : events)
            if (e.event.kind == "oom_kill" && e.event.fields.count("cgroup") &&
                e.event.fields.at("cgroup").ends_with(g))
              ++logged;
          if (logged >= *cg->events_oom_kill) continue;
          diagnose::KernelEvent k;
          k.kind = "oom_kill";
          k.severity = diagnose::Severity::kCritical;
          k.explanation = fmt::format(
              "The job cgroup {} counted {} OOM kill(s) of its processes{}.", g,
              *cg->events_oom_kill,
              logged > 0 ? fmt::format(", {} of them in the log read", logged)
                         : " that the log read does not show (older than the window or lost)");
          k.action =
              "Raise the job's memory limit (dltune run --memory), or need less: fewer DataLoader "
              "workers, a smaller batch or prefetch_factor.";
          k.fields["cgroup"] = g;
          k.fields["count"] = std::to_string(*cg->events_oom_kill);
          events.push_back(diagnose::LoggedEvent{std::move(k), now, "cgroup", {}});
        }
      }
    }
    // Compaction stalls: the kernel does not log them; /proc/vmstat counts them since boot
    // (compact_stall: an allocation waited for memory to be compacted, usually for a huge page).
    if (const auto vm = root->read("/proc/vmstat"); vm && *vm) {
      std::uint64_t stalls = 0, fails = 0;
      for (const auto& [key, out] :
           {std::pair<std::string_view, std::uint64_t*>{"compact_stall ", &stalls},
            std::pair<std::string_view, std::uint64_t*>{"compact_fail ", &fails}}) {
        const auto at = (*vm)->find(std::string("\n") + std::string(key));
        if (at != std::string::npos)
          *out = std::strtoull((*vm)->c_str() + at + 1 + key.size(), nullptr, 10);
      }
      if (stalls > 0) {
        diagnose::KernelEvent k;
        k.kind = "compaction_stall";
        k.severity = diagnose::Severity::kInfo;
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
        events.push_back(
            diagnose::LoggedEvent{std::move(k), now_ns(CLOCK_REALTIME), "/proc/vmstat", {}});
      }
    }
    // GPU events by index and UUID, as nvidia-smi and dltune env name them (PCI sysfs and NVML;
    // asked only when an event names a PCI address).
    if (diagnose::names_pci(events)) {
      inventory::Context ctx(*root, own_environment());
      const auto gpus = inventory::collect_gpus(ctx, collect_options().nvml_library);
      std::vector<diagnose::GpuName> names;
      for (const auto& d : gpus.devices) {
        if (!d.compute) continue;
        diagnose::GpuName n{d.address, d.nvml_index, std::nullopt};
        for (const auto& nd : gpus.nvml.devices)
          if (d.nvml_index && nd.index == *d.nvml_index) n.uuid = nd.uuid;
        names.push_back(std::move(n));
      }
      diagnose::name_gpus(events, names);
    }
    // Now, from /proc: training processes near their open-file limit (the kernel logs nothing).
    if (root->live() || root->exists("/proc")) {
      const auto scan = diagnose::scan_fds(*root);
      const auto now = now_ns(CLOCK_REALTIME);
      for (const auto& u : scan.processes)
        if (auto e = diagnose::fd_risk(u))
          events.push_back(diagnose::LoggedEvent{std::move(*e), now, "/proc", {}});
      if (scan.unreadable > 0)
        notes.push_back(
            fmt::format("{} training process(es) of other users: their open files "
                        "could not be counted (root can)",
                        scan.unreadable));
    }
    if (read.lost > 0)
      notes.push_back(
          fmt::format("the ring buffer wrapped {} time(s) while it was read: some "
                      "records were lost",
                      read.lost));
    if (read.garbled > 0)
      notes.push_back(fmt::format("{} record(s) did not parse and were skipped", read.garbled));

    if (span) {
      nlohmann::json doc = nlohmann::json::array();
      for (const auto& e : events)
        if (e.wall_ns >= span->first && e.wall_ns <= span->second && e.source != "/proc" &&
            e.source != "/proc/vmstat")
          doc.push_back({{"time_ns", e.wall_ns},
                         {"kind", e.event.kind},
                         {"text", e.event.explanation},
                         {"severity", diagnose::severity_name(e.event.severity)},
                         {"source", e.source}});
      if (auto ok = store::add_document(recording_, "events", doc); !ok)
        notes.push_back("the events could not be stored in the recording: " + ok.error().message());
      else
        notes.push_back(fmt::format("{} event(s) stored in {} (dltune report marks them)",
                                    doc.size(), recording_));
    }
    std::map<std::string, int> counts;
    const diagnose::LoggedEvent* critical = nullptr;
    diagnose::Severity worst = diagnose::Severity::kInfo;
    for (const auto& e : events) {
      ++counts[e.event.kind];
      worst = std::max(worst, e.event.severity);
      if (e.event.severity == diagnose::Severity::kCritical) critical = &e;
    }
    // The one action that matters most: the most recent critical event's, else the most common
    // warning's.
    std::string first_action;
    if (critical != nullptr) {
      first_action = critical->event.action;
    } else {
      std::map<std::string, int> warn;
      for (const auto& e : events)
        if (e.event.severity == diagnose::Severity::kWarning) ++warn[e.event.kind];
      const auto top = std::max_element(warn.begin(), warn.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      });
      if (top != warn.end())
        for (const auto& e : events)
          if (e.event.kind == top->first) first_action = e.event.action;
    }
    const int rc = read.unavailable && files.empty() && !journal ? kExitFailure
                   : worst == diagnose::Severity::kCritical      ? 2
                   : worst == diagnose::Severity::kWarning       ? 1
                                                                 : 0;
    if (json_) {
      nlohmann::json j;
      j["schema"] = "dltune.doctor/1";
      j["since_wall_ns"] = since_wall;
      j["sources"] = sources;
      j["counts"] = counts;
      j["first_action"] = first_action;
      nlohmann::json list = nlohmann::json::array();
      for (const auto& e : events) list.push_back(event_json(e));
      j["events"] = list;
      j["notes"] = notes;
      fmt::print("{}\n", j.dump(json_lines() ? -1 : 2));
      return follow_ ? follow(*xids) : rc;
    }
    fmt::print("dltune doctor: the kernel log ({}) {}\n",
               read.unavailable ? (journal ? std::string("the journal")
                                           : fmt::format("{} syslog file(s)", files.size()))
                                : fmt::format("/dev/kmsg, {} records", read.records.size()),
               window);
    if (events.empty()) {
      fmt::print("\nNothing found: no OOM kills, GPU, PCIe, storage or crash events.\n");
    } else {
      std::vector<std::string> parts;
      for (const auto& [k, n] : counts) parts.push_back(fmt::format("{} {}", n, k));
      fmt::print("\nSummary: {} event{}: {}\n", events.size(), events.size() == 1 ? "" : "s",
                 fmt::join(parts, ", "));
      if (critical != nullptr)
        fmt::print("Most recent critical: {} {}\n", local_time(critical->wall_ns),
                   critical->event.explanation);
      if (!first_action.empty()) fmt::print("Do this first: {}\n", first_action);
      for (const auto& e : events) {
        fmt::print("\n{} [{}] {} ({})\n  {}\n", local_time(e.wall_ns),
                   diagnose::severity_name(e.event.severity), e.event.kind, e.source,
                   e.event.explanation);
        for (const auto& r : e.raw) fmt::print("  > {}\n", r);
        fmt::print("  fix: {}\n", e.event.action);
      }
    }
    if (!notes.empty()) {
      fmt::print("\nNotes\n");
      for (const auto& n : notes) fmt::print("  - {}\n", n);
    }
    return follow_ ? follow(*xids) : rc;
  }

 private:
  [[nodiscard]] bool json_lines() const { return json_ && follow_; }

  static nlohmann::json event_json(const diagnose::LoggedEvent& e) {
    return {{"time_ns", e.wall_ns},
            {"source", e.source},
            {"kind", e.event.kind},
            {"severity", diagnose::severity_name(e.event.severity)},
            {"explanation", e.event.explanation},
            {"action", e.event.action},
            {"fields", e.event.fields},
            {"raw", e.raw}};
  }

  // --follow: the events as they come, until SIGINT, SIGTERM or SIGHUP (exit 0). With --json one
  // object per line (the report first, then each event).
  int follow(const diagnose::XidTable& xids) {
    auto f = diagnose::KmsgFollower::open("/dev/kmsg");
    if (!f) {
      fmt::print(stderr, "dltune doctor: --follow: {}\n", f.error().message());
      return kExitFailure;
    }
    sigset_t stop, old;
    ::sigemptyset(&stop);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop, s);
    ::pthread_sigmask(SIG_BLOCK, &stop, &old);
    if (!json_) fmt::print("\nFollowing /dev/kmsg (Ctrl-C to stop)...\n");
    std::fflush(stdout);
    diagnose::EventCollector c(xids);
    std::size_t lost = 0;
    for (;;) {
      timespec zero{};
      if (::sigtimedwait(&stop, nullptr, &zero) > 0) break;
      for (const auto& r : f->wait(200)) c.add(r.wall_ns, r.source, r.text);
      if (f->lost() > lost) {
        lost = f->lost();
        if (!json_) fmt::print("(the ring buffer wrapped: some records were lost)\n");
      }
      for (const auto& e : c.take()) {
        if (json_) {
          fmt::print("{}\n", event_json(e).dump());
        } else {
          fmt::print("\n{} [{}] {} ({})\n  {}\n", local_time(e.wall_ns),
                     diagnose::severity_name(e.event.severity), e.event.kind, e.source,
                     e.event.explanation);
          for (const auto& r : e.raw) fmt::print("  > {}\n", r);
          fmt::print("  fix: {}\n", e.event.action);
        }
        std::fflush(stdout);
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return kExitOk;
  }

  static int refuse(const std::string& why) {
    fmt::print(stderr, "dltune doctor: {}\n", why);
    return kExitBadInput;
  }
  // parse_duration_ns, and days ("7d") on top.
  static std::optional<std::int64_t> parse_days(const std::string& s) {
    if (s.size() > 1 && s.back() == 'd') {
      std::int64_t days = 0;
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9' || days > 100000) return std::nullopt;
        days = days * 10 + (s[i] - '0');
      }
      return days * 86'400'000'000'000;
    }
    return text::parse_duration_ns(s);
  }

  CLI::App* sub_ = nullptr;
  std::string since_;
  std::string root_dir_, recording_;
  bool boot_ = false, json_ = false, follow_ = false;
};

}  // namespace

std::unique_ptr<Command> make_doctor_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<DoctorCommand>(app);
}

}  // namespace dltune::cli

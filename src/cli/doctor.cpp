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
#include "core/time_format.hpp"
#include "diagnose/doctor.hpp"
#include "diagnose/kernel_log.hpp"
#include "store/recording.hpp"

namespace dltune::cli {

namespace {

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
      window = fmt::format("since {} ({})", text::local_time_ns(since_wall), s);
      // A recording older than the window: the window reaches back to its start, so that all
      // of its events can be stored.
      if (span && span->first < since_wall) {
        since_wall = span->first;
        window = fmt::format("since {} (the recording's start)", text::local_time_ns(since_wall));
      }
    }
    const auto& xids = diagnose::builtin_xid_table();
    if (!xids) {
      fmt::print(stderr, "dltune doctor: {}\n", xids.error().message());
      return kExitFailure;
    }
    auto root = open_root("doctor", root_dir_);
    if (!root) return kExitBadInput;
    diagnose::DoctorRequest request;
    request.since_wall_ns = since_wall;
    request.recording_path = recording_;
    request.recording_span = span;
    request.environment = own_environment();
    request.nvml_library = collect_options().nvml_library;
    if (::isatty(STDERR_FILENO) != 0)
      request.reading = [](const std::string& path) {
        fmt::print(stderr, "dltune doctor: reading {}\n", path);
      };
    const auto report = diagnose::doctor(request, *root, *xids);
    if (json_) {
      fmt::print("{}\n", diagnose::to_json(report).dump(json_ && follow_ ? -1 : 2));
    } else {
      fmt::print("{}", diagnose::render_text(report, window));
    }
    return follow_ ? follow(*xids) : report.exit_code();
  }

 private:
  // --follow: the events as they come, until SIGINT, SIGTERM or SIGHUP (exit 0). With --json one
  // object per line (the report first, then each event).
  int follow(const diagnose::XidTable& xids) {
    auto f = diagnose::KmsgFollower::open(host::Root());
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
        if (json_)
          fmt::print("{}\n", diagnose::event_json(e).dump());
        else
          fmt::print("{}", diagnose::render_event(e));
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

// `dltune doctor`: what went wrong on this host, from the kernel's own log: /dev/kmsg,
// then the systemd journal and kern.log/syslog for what the ring buffer no longer holds; --follow.
#include <time.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/clock.hpp"
#include "diagnose/doctor.hpp"
#include "diagnose/kernel_log.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class DoctorCommand : public Command {
 public:
  explicit DoctorCommand(CLI::App& app) : Command(app, "doctor") {
    options::add_duration(*sub_, "--since", since_ns_, 1'000'000'000, 3650 * 86'400'000'000'000);
    options::add_flag(*sub_, "--boot", boot_);
    options::add_flag(*sub_, "--follow", follow_);
    options::add_flag(*sub_, "--json", json_);
    options::add_value(*sub_, "--recording", recording_);
    options::add_value(*sub_, "--root", root_dir_);
  }

  int execute() override {
    if (boot_ && since_ns_) return refuse("give --since or --boot, not both");
    if (follow_ && root_dir_)
      return refuse("--follow reads the live host's /dev/kmsg: not with --root");
    auto plan = diagnose::doctor_plan(boot_, since_ns_, recording_, now_ns(CLOCK_REALTIME));
    if (!plan) return refuse(plan.error().message());
    const auto& xids = diagnose::builtin_xid_table();
    if (!xids) return failure(xids.error().message());
    auto root = open_root("doctor", root_dir_);
    if (!root) return kExitBadInput;
    auto& request = plan->request;
    request.environment = process_environment();
    request.nvml_library = collect_options().nvml_library;
    if (::isatty(STDERR_FILENO) != 0)
      request.reading = [this](const std::string& path) { say("reading " + path); };
    const auto report = diagnose::doctor(request, *root, *xids);
    // With --follow --json one object a line: the report first, then each event.
    fmt::print("{}", json_ ? diagnose::to_json(report).dump(follow_ ? -1 : 2) + "\n"
                           : diagnose::render_text(report, plan->window.text));
    return follow_ ? follow(*xids) : report.exit_code();
  }

 private:
  // --follow: the events as they come, until SIGINT, SIGTERM or SIGHUP (exit 0). With --json one
  // object per line (the report first, then each event).
  int follow(const diagnose::XidTable& xids) {
    if (!json_) fmt::print("\nFollowing /dev/kmsg (Ctrl-C to stop)...\n");
    std::fflush(stdout);
    diagnose::FollowHooks hooks;
    hooks.event = [&](const diagnose::LoggedEvent& e) {
      fmt::print("{}", json_ ? diagnose::event_json(e).dump() + "\n" : diagnose::render_event(e));
      std::fflush(stdout);
    };
    hooks.lost = [&] {
      if (!json_) fmt::print("(the ring buffer wrapped: some records were lost)\n");
    };
    if (auto followed = diagnose::follow_until_stopped(host::Root(), xids, hooks); !followed)
      return failure("--follow: " + followed.error().message());
    return kExitOk;
  }

  std::optional<std::int64_t> since_ns_;
  std::optional<std::string> root_dir_;
  std::string recording_;
  bool boot_ = false, json_ = false, follow_ = false;
};

}  // namespace

std::unique_ptr<Command> make_doctor_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<DoctorCommand>(app);
}

}  // namespace dltune::cli

// `dltune tune plan|apply|rollback|status|history`: change the host to a profile as one
// transaction, journaled, verified and reversible.
#include <unistd.h>

#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "options/options.hpp"
#include "tune/boot.hpp"
#include "tune/journal.hpp"
#include "tune/plan.hpp"
#include "tune/render.hpp"
#include "tune/request.hpp"

namespace dltune::cli {

namespace {

class TuneCommand : public Command {
 public:
  explicit TuneCommand(CLI::App& app) : Command(app, "tune") {
    sub_->require_subcommand(1);
    plan_ = options::add_subcommand(*sub_, "plan");
    apply_ = options::add_subcommand(*sub_, "apply");
    for (auto* s : {plan_, apply_}) {
      auto* profile = options::add_value(*s, "-p,--profile", request_.profile);
      if (s == apply_) apply_profile_ = profile;
      options::add_value(*s, "--set", request_.sets);
      options::add_list(*s, "--only", request_.only, "ID");
      options::add_flag(*s, "--persist", request_.persist);
      options::add_list(*s, "--data", request_.data, "PATH");
      options::add_flag(*s, "--cgroups", request_.cgroups);
    }
    options::add_flag(*apply_, "-y,--yes", yes_);
    options::add_flag(*apply_, "--boot", boot_);
    rollback_ = options::add_subcommand(*sub_, "rollback");
    options::add_value(*rollback_, "tx", tx_);
    status_ = options::add_subcommand(*sub_, "status");
    history_ = options::add_subcommand(*sub_, "history");
    // Every subcommand's help lists the options it takes; before the subcommand they work too.
    for (auto* s : {sub_, plan_, apply_, rollback_, status_, history_}) {
      options::add_value(*s, "--state-dir", state_dir_);
      options::add_flag(*s, "--json", json_);
    }
    for (auto* s : {sub_, plan_, apply_}) options::add_value(*s, "--root", root_);
    for (auto* s : {plan_, apply_, rollback_, status_, history_}) s->fallthrough();
  }

  int execute() override {
    const auto opened = open_root("tune", root_);
    if (!opened) return kExitBadInput;
    root_obj_ = *opened;
    if (plan_->parsed()) return do_plan(false);
    if (apply_->parsed() && boot_) return do_boot();
    if (apply_->parsed()) return do_plan(true);
    if (rollback_->parsed()) return do_rollback();
    if (status_->parsed()) return do_status();
    return do_history();
  }

 private:
  bool may_change() const {
    if (!root_obj_.live() || ::geteuid() == 0) return true;
    say("changing this host needs root (run it with sudo); nothing was changed");
    return false;
  }

  int do_plan(bool apply) {
    request_.collect = collect_options();
    auto plan = tune::plan_for(root_obj_, request_);
    if (!plan) return failed(plan.error(), "", "; nothing was changed");
    if (!apply) {
      fmt::print("{}", json_ ? tune::to_json(*plan).dump(2) + "\n" : tune::render_text(*plan));
      return kExitOk;
    }
    if (!may_change()) return kExitBadInput;
    auto journal = tune::journal_for_apply(state_dir_);
    if (!journal) return failure(journal.error().message());
    if (plan->changes().empty()) {
      fmt::print("dltune tune: nothing to change: the host already meets {}\n", plan->profile);
      return kExitOk;
    }
    if (!yes_) {
      if (!::isatty(0))
        return refuse(
            "apply: standard input is not a terminal: pass --yes to apply without asking; "
            "nothing was changed");
      if (!options::confirmed(tune::render_text(*plan) + "\nApply these changes? [y/N] ")) {
        fmt::print("nothing was changed\n");
        return kExitOk;
      }
    }
    auto result = tune::apply_plan(root_obj_, **journal, *plan, request_.command_line());
    if (!result) return failure(result.error().message());
    fmt::print("{}\n", json_ ? tune::to_json(*result).dump(2) : tune::render_text(*result));
    return kExitOk;
  }

  // What dltune's drop-ins hold, written live: the line for a boot script on a host where
  // nothing reads them at boot.
  int do_boot() {
    if (apply_profile_->count() > 0 || !request_.sets.empty() || !request_.only.empty() ||
        request_.persist || !request_.data.empty() || request_.cgroups)
      return refuse(
          "apply --boot writes what dltune's drop-ins already hold: it takes no profile, --set, "
          "--only, --persist, --data or --cgroups; nothing was changed");
    if (!may_change()) return kExitBadInput;
    auto result = tune::apply_at_boot(root_obj_);
    if (!result) return failure(result.error().message() + "; nothing was changed");
    fmt::print("{}", json_ ? tune::to_json(*result).dump(2) + "\n" : tune::render_text(*result));
    return result->count(tune::BootWrite::Status::kFailed) == 0 ? kExitOk : kExitFailure;
  }

  int do_rollback() {
    if (!may_change()) return kExitBadInput;
    auto r = tune::rollback(root_obj_, state_dir_, tx_);
    if (!r) return failed(r.error(), "rollback: ");
    for (const auto& line : tune::problem_lines(*r)) say(line);
    fmt::print("{}\n", json_ ? tune::to_json(*r).dump(2) : tune::render_text(*r));
    return r->problems.empty() ? kExitOk : kExitFailure;
  }

  Result<std::unique_ptr<tune::Journal>> read_journal() const {
    return tune::journal_to_read(state_dir_, [this](const std::string& n) { say(n); });
  }

  int do_status() {
    auto journal = read_journal();
    if (!journal) return failure(journal.error().message());
    auto status = tune::read_status(root_obj_, **journal);
    if (!status) return failure(status.error().message());
    fmt::print("{}", json_ ? tune::to_json(*status, state_dir_).dump(2) + "\n"
                           : tune::render_text(*status));
    return status->clean() ? kExitOk : kExitFailure;
  }

  int do_history() {
    auto journal = read_journal();
    if (!journal) return failure(journal.error().message());
    auto history = (*journal)->history();
    if (!history) return failure(history.error().message());
    fmt::print(
        "{}", json_ ? tune::history_json(*history).dump(2) + "\n" : tune::render_history(*history));
    return kExitOk;
  }

  CLI::App *plan_ = nullptr, *apply_ = nullptr, *rollback_ = nullptr, *status_ = nullptr,
           *history_ = nullptr;
  std::string state_dir_ = "/var/lib/dltune";
  std::optional<std::string> root_;
  tune::PlanRequest request_;
  bool yes_ = false, json_ = false, boot_ = false;
  CLI::Option* apply_profile_ = nullptr;
  std::int64_t tx_ = 0;
  host::Root root_obj_;
};

}  // namespace

std::unique_ptr<Command> make_tune_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<TuneCommand>(app);
}

}  // namespace dltune::cli

// `dltune check`: audit the host against a profile.
#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "audit/check.hpp"
#include "audit/host_check.hpp"
#include "audit/rules.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"
#include "settings/catalog.hpp"
#include "settings/data_paths.hpp"

namespace dltune::cli {

namespace {

class CheckCommand : public Command {
 public:
  explicit CheckCommand(CLI::App& app) : Command(app, "check") {
    options::add_value(*sub_, "-p,--profile", profile_);
    options::add_value(*sub_, "--set", sets_);
    options::add_list(*sub_, "--data", data_, "PATH");
    options::add_list(*sub_, "--only", only_, "ID");
    options::add_list(*sub_, "--skip", skip_, "ID");
    options::add_value(*sub_, "--root", root_);
    options::add_value(*sub_, "--baseline", baseline_);
    options::add_flag(*sub_, "-v,--verbose", verbose_);
    options::add_choice(*sub_, "--color", color_, {"auto", "always", "never"});
    options::add_flag(*sub_, "--json", json_);
    options::add_flag(*sub_, "--npd", npd_);
    options::add_choice(*sub_, "--fail-on", fail_on_, {"critical", "warn"});
    sub_->get_option("--json")->excludes("--npd");
  }

  int execute() override {
    const auto opened = open_root("check", root_);
    if (!opened) return unknown("cannot read the host (--root)");
    const host::Root& root = *opened;
    if (auto ok = settings::check_data_option(root, data_); !ok) {
      (void)unknown(ok.error().message());
      return refuse(ok.error().message());
    }
    auto checked = audit::check_host(
        root, {profile_, sets_, collect_options(), {only_, skip_, data_, profile_, baseline_}});
    if (!checked) {
      (void)unknown(checked.error().message());
      return refuse(checked.error().message());
    }
    const auto& facts = checked->facts;
    const auto& report = checked->report;
    if (npd_) {
      const auto v = audit::npd_verdict(report, *settings::severity_from(fail_on_));
      fmt::print("{}\n", v.message);
      return v.exit_code;
    }
    if (json_) {
      fmt::print("{}\n", audit::to_json(report, facts).dump(2));
    } else {
      const auto width = static_cast<std::size_t>(options::terminal_width());
      fmt::print("{}", audit::render_text(report, {verbose_, width, options::use_color(color_)}));
      if (!facts.problems.empty())
        fmt::print("{} fact(s) could not be read: see `dltune env`\n", facts.problems.size());
    }
    return audit::exit_code(report);
  }

 private:
  std::string profile_ = "training";
  std::vector<std::string> data_, only_, skip_, sets_;
  std::optional<std::string> root_, baseline_;
  bool verbose_ = false;
  bool json_ = false;
  bool npd_ = false;
  std::string fail_on_ = "critical";
  std::string color_ = "auto";

  // With --npd, why the host could not be judged goes to stdout too (the plugin's message);
  // the exit status is 2 (NPD's "unknown") either way.
  int unknown(const std::string& why) const {
    if (npd_) fmt::print("{}\n", audit::npd_cannot_judge(why).message);
    return kExitBadInput;
  }
};

}  // namespace

std::unique_ptr<Command> make_check_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CheckCommand>(app);
}

}  // namespace dltune::cli

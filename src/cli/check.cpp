// `dltune check`: audit the host against a profile.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "audit/check.hpp"
#include "audit/rules.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"
#include "settings/catalog.hpp"

namespace dltune::cli {

namespace {

class CheckCommand : public Command {
 public:
  explicit CheckCommand(CLI::App& app) {
    sub_ = options::add_command(app, "check");
    sub_->add_option("-p,--profile", profile_, "Profile name or TOML file (default: training)")
        ->type_name("PROFILE");
    options::add_list(*sub_, "--data", data_,
                      "Paths that hold training data: their file systems are checked for noatime "
                      "(default: / and /home)",
                      "PATH");
    options::add_list(*sub_, "--only", only_, "Check only these ids", "ID");
    options::add_list(*sub_, "--skip", skip_, "Leave these ids out", "ID");
    sub_->add_option("--root", root_, "Audit the host tree at DIR (a capture or a fixture)")
        ->type_name("DIR");
    sub_->add_flag("-v,--verbose", verbose_, "Show evidence and reasons for every finding");
    options::add_choice(*sub_, "--color", color_, {"auto", "always", "never"},
                        "Severities in colour: auto (default: on a terminal, unless NO_COLOR is "
                        "set), always or never");
    sub_->add_flag("--json", json_, "Print JSON (schema: docs/json.md, \"dltune.check/1\")");
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    const auto opened = open_root("check", root_);
    if (!opened) return kExitBadInput;
    const host::Root& root = *opened;
    auto profile = settings::load_profile(profile_, root, settings::validate_key);
    if (!profile) {
      fmt::print(stderr, "dltune check: profile: {}\n", profile.error().message());
      return kExitBadInput;
    }
    const auto facts = inventory::collect(root, collect_options());
    auto report = audit::run_check(facts, root, *profile, {only_, skip_, data_, profile_});
    if (!report) {
      fmt::print(stderr, "dltune check: {}\n", report.error().message());
      return kExitBadInput;
    }
    if (json_) {
      fmt::print("{}\n", audit::to_json(*report, facts).dump(2));
    } else {
      const bool color = color_ == "always" || (color_ == "auto" && ::isatty(STDOUT_FILENO) != 0 &&
                                                std::getenv("NO_COLOR") == nullptr);
      fmt::print("{}", audit::render_text(
                           *report,
                           {verbose_, static_cast<std::size_t>(options::terminal_width()), color}));
      if (!facts.problems.empty())
        fmt::print("{} fact(s) could not be read: see `dltune env`\n", facts.problems.size());
    }
    return audit::exit_code(*report);
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string profile_ = "training";
  std::vector<std::string> data_, only_, skip_;
  std::optional<std::string> root_;
  bool verbose_ = false;
  bool json_ = false;
  std::string color_ = "auto";
};

}  // namespace

std::unique_ptr<Command> make_check_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CheckCommand>(app);
}

}  // namespace dltune::cli

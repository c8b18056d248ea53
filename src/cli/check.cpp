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
  explicit CheckCommand(CLI::App& app) : Command("check") {
    sub_ = options::add_command(app, "check");
    options::add_value(*sub_, "-p,--profile", profile_);
    options::add_list(*sub_, "--data", data_, "PATH");
    options::add_list(*sub_, "--only", only_, "ID");
    options::add_list(*sub_, "--skip", skip_, "ID");
    options::add_value(*sub_, "--root", root_);
    options::add_flag(*sub_, "-v,--verbose", verbose_);
    options::add_choice(*sub_, "--color", color_, {"auto", "always", "never"});
    options::add_flag(*sub_, "--json", json_);
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
      return refuse(report.error().message());
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

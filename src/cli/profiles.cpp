// `dltune profiles [list]|show NAME|settings`: the profiles there are, one of them resolved as
// TOML to copy and edit, and the setting ids that profiles, --only and --set take.
#include <cstdio>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "options/options.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "settings/profile_listing.hpp"

namespace dltune::cli {

namespace {

class ProfilesCommand : public Command {
 public:
  explicit ProfilesCommand(CLI::App& app) : Command(app, "profiles") {
    list_ = options::add_subcommand(*sub_, "list");
    show_ = options::add_subcommand(*sub_, "show");
    options::add_value(*show_, "NAME", name_)->required();
    settings_ = options::add_subcommand(*sub_, "settings");
    for (auto* s : {sub_, list_, show_, settings_}) options::add_flag(*s, "--json", json_);
    for (auto* s : {sub_, list_, show_}) options::add_value(*s, "--root", root_);
    for (auto* s : {list_, show_, settings_}) s->fallthrough();
  }

  int execute() override {
    if (settings_->parsed()) return do_settings();
    const auto opened = open_root("profiles", root_);
    if (!opened) return kExitBadInput;
    if (show_->parsed()) return do_show(*opened);
    return do_list(*opened);
  }

 private:
  int do_list(const host::Root& root) const {
    auto profiles = settings::list_profiles(root);
    if (!profiles) return refuse(profiles.error().message());
    fmt::print("{}", json_ ? settings::profiles_json(*profiles).dump(2) + "\n"
                           : settings::profiles_text(*profiles));
    return kExitOk;
  }

  int do_show(const host::Root& root) const {
    auto p = settings::load_profile(name_, root, settings::validate_key);
    if (!p) return refuse(p.error().message());
    fmt::print("{}", json_ ? settings::profile_json(*p).dump(2) + "\n" : settings::to_toml(*p));
    return kExitOk;
  }

  int do_settings() const {
    const auto list = settings::list_settings();
    fmt::print(
        "{}", json_ ? settings::settings_json(list).dump(2) + "\n" : settings::settings_text(list));
    return kExitOk;
  }

  CLI::App *list_ = nullptr, *show_ = nullptr, *settings_ = nullptr;
  std::string name_;
  std::optional<std::string> root_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_profiles_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<ProfilesCommand>(app);
}

}  // namespace dltune::cli

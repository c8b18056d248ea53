// `dltune profiles [list]|show NAME|settings`: the profiles there are, one of them resolved as
// TOML to copy and edit, and the setting ids that profiles, --only and --set take.
#include <cstdio>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "options/options.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "settings/profile_listing.hpp"

namespace dltune::cli {

namespace {

using nlohmann::json;

class ProfilesCommand : public Command {
 public:
  explicit ProfilesCommand(CLI::App& app) : Command("profiles") {
    sub_ = options::add_command(app, "profiles");
    list_ = options::add_subcommand(*sub_, "list");
    show_ = options::add_subcommand(*sub_, "show");
    options::add_value(*show_, "NAME", name_)->required();
    settings_ = options::add_subcommand(*sub_, "settings");
    for (auto* s : {sub_, list_, show_, settings_}) options::add_flag(*s, "--json", json_);
    for (auto* s : {sub_, list_, show_}) options::add_value(*s, "--root", root_);
    for (auto* s : {list_, show_, settings_}) s->fallthrough();
  }

  bool selected() const override { return sub_->parsed(); }

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
    if (json_) {
      json list = json::array();
      for (const auto& p : *profiles) {
        json j{{"name", p.name},
               {"description", p.description},
               {"file", p.file},
               {"builtin", p.builtin},
               {"includes", p.includes}};
        j["problem"] = p.problem.empty() ? json(nullptr) : json(p.problem);
        list.push_back(std::move(j));
      }
      fmt::print("{}\n", json{{"schema", "dltune.profiles/1"}, {"profiles", list}}.dump(2));
      return kExitOk;
    }
    for (const auto& p : *profiles) {
      fmt::print(
          "{}{}{}\n", p.name, p.builtin ? " (built-in)" : fmt::format(" ({})", p.file),
          p.includes.empty() ? "" : fmt::format(", includes {}", fmt::join(p.includes, ", ")));
      if (!p.description.empty()) fmt::print("    {}\n", p.description);
      if (!p.problem.empty()) fmt::print("    ! {}\n", p.problem);
    }
    fmt::print(
        "\nLooked up in this order: a built-in name, then /etc/dltune/profiles/NAME.toml; a name "
        "with a '/' is a file.\n`dltune profiles show NAME` prints one as TOML to copy and "
        "edit.\n");
    return kExitOk;
  }

  int do_show(const host::Root& root) const {
    auto p = settings::load_profile(name_, root, settings::validate_key);
    if (!p) return refuse(p.error().message());
    if (json_) {
      json entries = json::array();
      for (const auto& e : p->entries) {
        json j{{"key", e.key},
               {"value", e.expected.text()},
               {"severity", e.severity},
               {"reason", e.reason},
               {"source", e.source},
               {"origin", e.origin},
               {"origin_file", e.origin_file}};
        j["field"] = e.field ? json(*e.field) : json(nullptr);
        j["critical"] = e.critical ? json(e.critical->text()) : json(nullptr);
        entries.push_back(std::move(j));
      }
      fmt::print("{}\n", json{{"schema", "dltune.profiles.show/1"},
                              {"name", p->name},
                              {"description", p->description},
                              {"chain", p->chain},
                              {"settings", entries},
                              {"toml", settings::to_toml(*p)}}
                             .dump(2));
      return kExitOk;
    }
    fmt::print("{}", settings::to_toml(*p));
    return kExitOk;
  }

  int do_settings() const {
    const auto list = settings::list_settings();
    if (json_) {
      json out = json::array();
      for (const auto& s : list) {
        json defaults = json::array();
        for (const auto& d : s.defaults)
          defaults.push_back(json{{"profile", d.profile}, {"value", d.value}});
        out.push_back(json{{"id", s.id},
                           {"area", s.area},
                           {"kind", s.kind},
                           {"tunable", s.tunable},
                           {"takes", s.takes},
                           {"defaults", defaults}});
      }
      fmt::print("{}\n", json{{"schema", "dltune.profiles.settings/1"}, {"settings", out}}.dump(2));
      return kExitOk;
    }
    fmt::print("{:<28} {:<12} {:<7} {}\n", "ID", "AREA", "KIND", "TAKES; BUILT-IN VALUES");
    for (const auto& s : list) {
      std::string takes = s.takes.empty() ? "one line of text" : s.takes;
      std::vector<std::string> defaults;
      for (const auto& d : s.defaults) defaults.push_back(d.profile + ": " + d.value);
      if (!defaults.empty()) takes += fmt::format("; {}", fmt::join(defaults, ", "));
      fmt::print("{:<28} {:<12} {:<7} {}\n", s.id, s.area, s.kind, takes);
    }
    fmt::print(
        "\nKIND check: judged by `dltune check`, never changed by `tune`. A sysctl family "
        "(vm.*) takes any name under /proc/sys.\n`--set KEY=VALUE` and `--only ID` take these "
        "ids.\n");
    return kExitOk;
  }

  CLI::App *sub_ = nullptr, *list_ = nullptr, *show_ = nullptr, *settings_ = nullptr;
  std::string name_;
  std::optional<std::string> root_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_profiles_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<ProfilesCommand>(app);
}

}  // namespace dltune::cli

#include "settings/profile_listing.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "settings/value_types.hpp"

namespace dltune::settings {
namespace {

// The kind of setting, from the planner that changes it.
std::string kind_of(const KeySpec& spec) {
  if (spec.plan == nullptr) return "check";
  if (spec.plan == plan_sysctl) return "sysctl";
  if (spec.plan == plan_thp || spec.plan == plan_governor || spec.plan == plan_epp ||
      spec.plan == plan_read_ahead || spec.plan == plan_scheduler || spec.plan == plan_nr_requests)
    return "sysfs";
  if (spec.plan == plan_mount) return "mount";
  if (spec.plan == plan_limits) return "limits";
  if (spec.plan == plan_gpu_persistence) return "nvml";
  if (spec.plan == plan_irq_affinity) return "irq";
  return "other";
}

SettingInfo info_for(const std::string& id, const KeySpec& spec) {
  SettingInfo s;
  s.id = id;
  s.area = spec.area;
  s.kind = kind_of(spec);
  s.tunable = spec.plan != nullptr;
  s.takes = value_type_text(id);
  return s;
}

}  // namespace

Result<std::vector<ProfileSummary>> list_profiles(const host::Root& root) {
  std::vector<ProfileSummary> out;
  for (const auto& name : builtin_profiles()) {
    ProfileSummary s;
    s.name = name;
    s.builtin = true;
    s.file = fmt::format("<built-in>/{}.toml", name);
    auto p = parse_profile(*builtin_profile_text(name), s.file, validate_key, true);
    if (p) {
      s.description = p->description;
      s.includes = p->includes;
    } else {
      s.problem = p.error().message();
    }
    out.push_back(std::move(s));
  }
  auto names = root.list(kUserProfileDir);
  if (!names) return tl::unexpected(names.error());
  if (!*names) return out;
  for (const auto& file : **names) {
    if (!file.ends_with(".toml") || file.size() <= 5) continue;
    ProfileSummary s;
    s.name = file.substr(0, file.size() - 5);
    s.file = fmt::format("{}/{}", kUserProfileDir, file);
    // Loaded whole (includes too), so that a broken one says so here rather than in check.
    auto p = load_profile(s.name, root, validate_key);
    if (p) {
      s.description = p->description;
      s.includes = p->includes;
    } else {
      s.problem = p.error().message();
    }
    // A built-in of the same name wins when loading by name: say so.
    if (builtin_profile_text(s.name) && s.problem.empty())
      s.problem = fmt::format("hidden by the built-in profile {} (load it with -p {})", s.name,
                              root.outside(s.file));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<SettingInfo> list_settings() {
  std::vector<SettingInfo> out;
  std::map<std::string, std::vector<DefaultValue>> defaults;
  std::vector<std::string> profile_sysctls;
  for (const auto& name : builtin_profiles()) {
    auto p = load_profile(name, host::Root(), validate_key);
    if (!p) continue;  // a test keeps the built-ins loading
    for (const auto& e : p->entries) {
      std::string value = e.expected.text();
      if (e.field) value += fmt::format(" (field {})", *e.field);
      defaults[e.key].push_back(DefaultValue{name, value});
      const auto* spec = spec_for(e.key);
      if (spec != nullptr && spec->family() &&
          std::find(profile_sysctls.begin(), profile_sysctls.end(), e.key) == profile_sysctls.end())
        profile_sysctls.push_back(e.key);
    }
  }
  std::sort(profile_sysctls.begin(), profile_sysctls.end());
  for (const auto& spec : catalog())
    if (!spec.family()) out.push_back(info_for(spec.key, spec));
  for (const auto& key : profile_sysctls) out.push_back(info_for(key, *spec_for(key)));
  for (const auto& spec : catalog()) {
    if (!spec.family()) continue;
    auto s = info_for(std::string(spec.key) + "*", spec);
    s.takes = fmt::format("any sysctl under /proc/sys/{}: one line of text",
                          std::string(spec.key, std::string_view(spec.key).size() - 1));
    out.push_back(std::move(s));
  }
  for (auto& s : out)
    if (auto it = defaults.find(s.id); it != defaults.end()) s.defaults = it->second;
  return out;
}

using nlohmann::json;

json profiles_json(const std::vector<ProfileSummary>& profiles) {
  json list = json::array();
  for (const auto& p : profiles) {
    json j{{"name", p.name},
           {"description", p.description},
           {"file", p.file},
           {"builtin", p.builtin},
           {"includes", p.includes}};
    j["problem"] = p.problem.empty() ? json(nullptr) : json(p.problem);
    list.push_back(std::move(j));
  }
  return json{{"schema", "dltune.profiles/1"}, {"profiles", list}};
}

std::string profiles_text(const std::vector<ProfileSummary>& profiles) {
  std::string out;
  for (const auto& p : profiles) {
    out += fmt::format(
        "{}{}{}\n", p.name, p.builtin ? " (built-in)" : fmt::format(" ({})", p.file),
        p.includes.empty() ? "" : fmt::format(", includes {}", fmt::join(p.includes, ", ")));
    if (!p.description.empty()) out += fmt::format("    {}\n", p.description);
    if (!p.problem.empty()) out += fmt::format("    ! {}\n", p.problem);
  }
  out +=
      "\nLooked up in this order: a built-in name, then /etc/dltune/profiles/NAME.toml; a name "
      "with a '/' is a file.\n`dltune profiles show NAME` prints one as TOML to copy and "
      "edit.\n";
  return out;
}

json profile_json(const Profile& profile) {
  json entries = json::array();
  for (const auto& e : profile.entries) {
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
  return json{{"schema", "dltune.profiles.show/1"},
              {"name", profile.name},
              {"description", profile.description},
              {"chain", profile.chain},
              {"settings", entries},
              {"toml", to_toml(profile)}};
}

json settings_json(const std::vector<SettingInfo>& settings) {
  json out = json::array();
  for (const auto& s : settings) {
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
  return json{{"schema", "dltune.profiles.settings/1"}, {"settings", out}};
}

std::string settings_text(const std::vector<SettingInfo>& settings) {
  std::string out =
      fmt::format("{:<28} {:<12} {:<7} {}\n", "ID", "AREA", "KIND", "TAKES; BUILT-IN VALUES");
  for (const auto& s : settings) {
    std::string takes = s.takes.empty() ? "one line of text" : s.takes;
    std::vector<std::string> defaults;
    for (const auto& d : s.defaults) defaults.push_back(d.profile + ": " + d.value);
    if (!defaults.empty()) takes += fmt::format("; {}", fmt::join(defaults, ", "));
    out += fmt::format("{:<28} {:<12} {:<7} {}\n", s.id, s.area, s.kind, takes);
  }
  out +=
      "\nKIND check: judged by `dltune check`, never changed by `tune`. A sysctl family "
      "(vm.*) takes any name under /proc/sys.\n`--set KEY=VALUE` and `--only ID` take these "
      "ids.\n";
  return out;
}

}  // namespace dltune::settings

#pragma once
// What `dltune profiles` lists: the profiles there are (built-in and installed) and the setting
// ids a profile, --only and --set take, with what each takes.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "host/root.hpp"
#include "settings/profile.hpp"

namespace dltune::settings {

struct ProfileSummary {
  std::string name;
  std::string description;  // empty when the profile has none
  std::string file;         // "<built-in>/training.toml", "/etc/dltune/profiles/site.toml"
  bool builtin = false;
  std::vector<std::string> includes;  // as written in its file
  std::string problem;                // why it does not load (installed profiles only)
};

// The built-in profiles, then /etc/dltune/profiles/*.toml under `root` (sorted by name; one
// that does not load is listed with its problem). A profile directory that cannot be read is
// the error.
[[nodiscard]] Result<std::vector<ProfileSummary>> list_profiles(const host::Root& root);

// Where a built-in profile sets a key: its name and the value's text.
struct DefaultValue {
  std::string profile, value;
};

struct SettingInfo {
  std::string id;        // "vm.swappiness", "thp.enabled"; "vm.*" for a sysctl family
  std::string area;      // "memory", "cpu", ...
  std::string kind;      // "sysctl", "sysfs", "mount", "limits", "nvml", "check"
  bool tunable = false;  // tune can change it (else check only judges it)
  std::string takes;     // the type and range of its value, in words; empty: any one line
  std::vector<DefaultValue> defaults;  // built-in profiles that set it, with their values
};

// Every setting id: the catalog's own keys, the sysctls the built-in profiles set, and the
// sysctl families (any name under /proc/sys).
[[nodiscard]] std::vector<SettingInfo> list_settings();

// What `dltune profiles` prints (docs/json.md): the list (schema dltune.profiles/1, or text with
// how names are looked up), one profile resolved (dltune.profiles.show/1; its text is
// to_toml), and the setting ids (dltune.profiles.settings/1, or a table).
[[nodiscard]] nlohmann::json profiles_json(const std::vector<ProfileSummary>& profiles);
[[nodiscard]] std::string profiles_text(const std::vector<ProfileSummary>& profiles);
[[nodiscard]] nlohmann::json profile_json(const Profile& profile);
[[nodiscard]] nlohmann::json settings_json(const std::vector<SettingInfo>& settings);
[[nodiscard]] std::string settings_text(const std::vector<SettingInfo>& settings);

}  // namespace dltune::settings

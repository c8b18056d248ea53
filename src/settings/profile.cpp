// Profiles: an entry by key, the built-in ones (compiled in). Loading them, with their includes,
// is settings/profile_load.cpp's.
#include "settings/profile.hpp"

#include <set>

#include "core/embedded.hpp"
#include "settings/catalog.hpp"

namespace dltune::settings {

const ProfileEntry* Profile::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::vector<std::string> builtin_profiles() {
  std::vector<std::string> names;
  for (const auto& f : embedded_profiles()) names.emplace_back(f.name);
  return names;
}

std::optional<std::string_view> builtin_profile_text(std::string_view name) {
  for (const auto& f : embedded_profiles())
    if (f.name == name) return f.text;
  return std::nullopt;
}

std::vector<std::string> known_setting_ids() {
  std::set<std::string> ids;
  for (const auto& spec : catalog())
    if (!spec.family()) ids.insert(spec.key);
  const auto any_key = [](const std::string&) -> Result<void> { return {}; };
  for (const auto& name : builtin_profiles())
    if (const auto text = builtin_profile_text(name))
      if (auto profile = parse_profile(*text, "profiles/" + name + ".toml", any_key))
        for (const auto& entry : profile->entries) ids.insert(entry.key);
  return {ids.begin(), ids.end()};
}

}  // namespace dltune::settings

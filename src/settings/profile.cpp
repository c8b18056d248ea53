// Profiles: an entry by key, the built-in ones (compiled in). Loading them, with their includes,
// is settings/profile_load.cpp's.
#include "settings/profile.hpp"

#include "core/embedded.hpp"

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

}  // namespace dltune::settings

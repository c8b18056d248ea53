// Profiles (owner: profile helper; stub until then).
#include "tune/profile.hpp"

namespace dltune::tune {

bool Expected::matches(std::string_view) const { return false; }
std::string Expected::text() const { return {}; }
const ProfileEntry* Profile::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}
std::vector<std::string> builtin_profiles() { return {}; }
Result<Profile> load_profile(std::string_view name, const host::Root&, const KeyValidator&) {
  return fail("no such profile:", std::string(name));
}
Result<Profile> parse_profile(std::string_view, std::string_view origin, const KeyValidator&) {
  return fail("not implemented:", std::string(origin));
}

}  // namespace dltune::tune

// Profiles (owner: profile helper; stub until then).
#include "tune/profile.hpp"

namespace dltune::tune {

// Minimal until the profile work lands (it replaces this file).
bool Expected::matches(std::string_view actual) const {
  std::string a(actual);
  while (!a.empty() && (a.back() == '\n' || a.back() == ' ')) a.pop_back();
  if (kind == Kind::kAtLeast) {
    if (a == "unlimited") return true;
    try {
      return std::stoull(a) >= std::stoull(values.at(0));
    } catch (...) {
      return false;
    }
  }
  for (const auto& v : values)
    if (v == a) return true;
  return false;
}
std::string Expected::text() const {
  if (kind == Kind::kAtLeast) return ">= " + values.at(0);
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return kind == Kind::kOneOf ? "one of " + out : out;
}
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

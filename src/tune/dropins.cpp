// Drop-in files (owner: dropins helper; stub until then).
#include "tune/dropins.hpp"

namespace dltune::tune {

std::string merge_sysctl_dropin(std::string_view, const std::map<std::string, std::string>&) {
  return {};
}
std::string remove_from_sysctl_dropin(std::string_view, const std::vector<std::string>&) {
  return {};
}
std::string merge_limits_dropin(std::string_view, const std::string&,
                                const std::map<std::string, std::string>&) {
  return {};
}
Result<std::string> fstab_add_option(std::string_view, const std::string& mp, const std::string&) {
  return fail("not implemented:", mp);
}

}  // namespace dltune::tune

#include "tune/nvml_setting.hpp"

namespace dltune::tune {

// Replaced by the NVML implementation (issue 4, GPU persistence); until then no plan has such a
// change, and a journal that names one cannot be applied by this build.
Result<std::optional<std::string>> read_nvml_setting(const std::string& target) {
  return fail("this build cannot change GPU settings:", target);
}

Result<std::string> write_nvml_setting(const std::string& target, const std::string&) {
  return fail("this build cannot change GPU settings:", target);
}

}  // namespace dltune::tune

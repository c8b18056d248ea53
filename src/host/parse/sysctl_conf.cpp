#include "host/parse/sysctl_conf.hpp"

#include "core/text.hpp"

namespace dltune::host::parse {

std::vector<SysctlAssignment> sysctl_conf(std::string_view text) {
  std::vector<SysctlAssignment> out;
  int n = 0;
  for (auto line : text::lines(text)) {
    ++n;
    line = text::trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '-') line.remove_prefix(1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const auto key = text::trim(line.substr(0, eq));
    if (key.empty()) continue;
    out.push_back(
        SysctlAssignment{std::string(key), std::string(text::trim(line.substr(eq + 1))), n});
  }
  return out;
}

}  // namespace dltune::host::parse

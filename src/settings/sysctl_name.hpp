#pragma once
// Sysctl names and their /proc/sys paths (CONTRIBUTING.md, convention 10, systemd's sysctl-util):
// in a dotted name '/' stands for a '.' inside one component ("net.ipv4.conf.eth0/100.rp_filter" is
// /proc/sys/net/ipv4/conf/eth0.100/rp_filter); a name in slash form keeps its dots.
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::settings {

// "vm.swappiness" -> "/proc/sys/vm/swappiness". Refuses empty components, "." and "..",
// characters outside [A-Za-z0-9_.:/@+-], and anything that would leave /proc/sys.
[[nodiscard]] Result<std::string> sysctl_path(std::string_view name);
// The canonical dotted name of a name in either form ("vm/swappiness" -> "vm.swappiness").
[[nodiscard]] Result<std::string> sysctl_normalise(std::string_view name);

}  // namespace dltune::settings

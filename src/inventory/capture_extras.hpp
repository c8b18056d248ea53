#pragma once
// What `dltune capture` adds beside the host files: the answers env got from things that are
// not files (environment variables, statvfs, NVML), under capture_files::kDir.
#include <map>
#include <string>

#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"

namespace dltune::inventory {

// host path -> content, for host::write_capture's `extra`.
[[nodiscard]] std::map<std::string, std::string> capture_extras(const HostFacts& facts,
                                                                const host::Root& root);

}  // namespace dltune::inventory

#pragma once
// What `dltune capture` adds beside the host files: the answers env got from things that are
// not files (environment variables, statvfs, NVML), under capture_files::kDir.
#include <map>
#include <string>

#include "core/error.hpp"
#include "host/capture.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"

namespace dltune::inventory {

// host path -> content, for host::write_capture's `extra`.
[[nodiscard]] std::map<std::string, std::string> capture_extras(const HostFacts& facts,
                                                                const host::Root& root);

// `dltune capture`: env's facts collected from this host (`collect`) while every file read is
// noted, then those files and the extras packed into `out_path` (an output target; "-" is
// standard output), an existing file replaced only when `force`.
[[nodiscard]] Result<host::CaptureStats> capture_host(const std::string& out_path, bool force,
                                                      const CollectOptions& collect);

}  // namespace dltune::inventory

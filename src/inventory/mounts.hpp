#pragma once
// The host's mount table, read and parsed once per collection.
#include <vector>

#include "host/parse/proc.hpp"
#include "inventory/context.hpp"

namespace dltune::inventory {

// /proc/self/mountinfo, parsed; empty (and a Problem) when unreadable or garbled.
[[nodiscard]] const std::vector<host::parse::Mount>& host_mounts(Context& ctx);

// The mount whose mount point is exactly `mount_point` (the last one: it hides earlier ones).
[[nodiscard]] const host::parse::Mount* find_mount(const std::vector<host::parse::Mount>& mounts,
                                                   const std::string& mount_point);

}  // namespace dltune::inventory

// CgroupCollector::group_of: the group a process is in, from /proc/PID/cgroup (cgroups(7)).
#include <cerrno>
#include <string>

#include "host/cgroup.hpp"
#include "host/parse/proc.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

// v2: the "0::/path" line. v1: the memory hierarchy's group (the one `dltune run` limits and
// whose cgroup.procs the collector lists), else cpuacct's or cpu's, else the v2 line of a
// hybrid host.
Result<std::string> CgroupCollector::group_of(const host::Root& root, pid_t pid) {
  const std::string file = "/proc/" + std::to_string(pid) + "/cgroup";
  auto text = root.read(file);
  if (!text) return tl::unexpected(text.error());
  if (!*text) return fail("no such process:", std::to_string(pid), ESRCH);
  auto entries = host::parse::proc_cgroup(**text);
  if (!entries) return fail(entries.error().what, file + ": " + entries.error().input);
  auto layout = host::cgroup_layout(root);
  if (!layout) return tl::unexpected(layout.error());
  auto with = [&](std::string_view controller) -> const std::string* {
    for (const auto& e : *entries)
      for (const auto& c : e.controllers)
        if (c == controller) return &e.path;
    return nullptr;
  };
  const std::string* v2 = nullptr;
  for (const auto& e : *entries)
    if (e.hierarchy == 0 && e.controllers.empty()) v2 = &e.path;
  const std::string* found = nullptr;
  if (layout->version == "v2")
    found = v2;
  else
    for (const auto c : {"memory", "cpuacct", "cpu"})
      if ((found = with(c)) != nullptr) break;
  if (found == nullptr) found = v2;
  if (found == nullptr) return fail("no cgroup of a known hierarchy in", file);
  return *found;
}

}  // namespace dltune::monitor

#include "inventory/mounts.hpp"

namespace dltune::inventory {

const std::vector<host::parse::Mount>& host_mounts(Context& ctx) {
  return ctx.shared<std::vector<host::parse::Mount>>("mountinfo", [](Context& c) {
    std::vector<host::parse::Mount> out;
    // In a mount of the live host (a DaemonSet's /host) our own mounts are the container's: the
    // host's are those of its init process, whose paths are the tree's.
    const char* path =
        c.root().this_kernel() && !c.root().live() ? "/proc/1/mountinfo" : "/proc/self/mountinfo";
    auto text = c.read_required("storage.mounts", path);
    if (!text) return out;
    auto parsed = host::parse::mountinfo(*text);
    if (!parsed) {
      c.problem("storage.mounts", path, parsed.error().message());
      return out;
    }
    return std::move(*parsed);
  });
}

const host::parse::Mount* find_mount(const std::vector<host::parse::Mount>& mounts,
                                     const std::string& mount_point) {
  const host::parse::Mount* found = nullptr;
  for (const auto& m : mounts)
    if (m.mount_point == mount_point) found = &m;
  return found;
}

}  // namespace dltune::inventory

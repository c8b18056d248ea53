#pragma once
// /proc/modules: the kernel modules loaded (proc(5); kernel/module/procfs.c).
//
//   nvidia_uvm 1536000 0 - Live 0x0000000000000000 (POE)
//   nvidia 8613888 19 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::host::parse {

struct Module {
  std::string name;
  std::uint64_t size_bytes = 0;
  std::uint64_t instances = 0;       // reference count
  std::vector<std::string> used_by;  // modules that depend on it
  std::string state;                 // "Live", "Loading", "Unloading"
};

struct ProcModules {
  std::vector<Module> modules;
  std::vector<std::string> errors;  // "line 3: expected 'name size refcount deps state ...'"
};

// Lines that do not parse are skipped and named in `errors`; the others are kept.
[[nodiscard]] ProcModules proc_modules(std::string_view text);

}  // namespace dltune::host::parse

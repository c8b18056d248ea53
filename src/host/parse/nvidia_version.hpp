#pragma once
// /proc/driver/nvidia/version: the version of the NVIDIA kernel module that is loaded.
//
//   NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024
//   GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)
// or, for the open kernel modules,
//   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (...)  ...
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::host::parse {

struct NvidiaVersion {
  std::string version;                      // "550.54.15"
  bool open_kernel_module = false;          // the open GPU kernel modules
  std::optional<std::string> architecture;  // "x86_64", "aarch64"
  std::optional<std::string> gcc_version;   // the compiler the module was built with
};

// Error (naming the line) when there is no "NVRM version:" line with a version in it.
[[nodiscard]] Result<NvidiaVersion> nvidia_version(std::string_view text);

// Whether `s` looks like a driver version: digits separated by dots, at least one dot.
[[nodiscard]] bool is_driver_version(std::string_view s);

}  // namespace dltune::host::parse

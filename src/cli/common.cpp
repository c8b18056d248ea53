// What the commands share: opening the host to read, and how facts are collected.
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/commands.hpp"

namespace dltune::cli {

std::optional<host::Root> open_root(const char* command, const std::string& dir) {
  if (dir.empty()) return host::Root();
  auto r = host::Root::at(dir);
  if (!r) {
    fmt::print(stderr, "dltune {}: --root: {}\n", command, r.error().message());
    return std::nullopt;
  }
  return *r;
}

inventory::CollectOptions collect_options() {
  inventory::CollectOptions options;
  if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY")) options.nvml_library = lib;
  return options;
}

}  // namespace dltune::cli

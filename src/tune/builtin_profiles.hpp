#pragma once
// The text of profiles/*.toml, compiled in: cmake/embed.cmake generates the definition of
// embedded_profiles() into the build directory from the files themselves.
#include <string_view>
#include <vector>

namespace dltune::tune {

struct EmbeddedFile {
  std::string_view name;  // the file name without ".toml": "training"
  std::string_view text;
};

// Sorted by name.
[[nodiscard]] const std::vector<EmbeddedFile>& embedded_profiles();

}  // namespace dltune::tune

#pragma once
// Data files compiled into the program (so that the binary works anywhere): cmake/embed.cmake
// generates the definitions of these functions into the build directory from the files.
#include <string_view>
#include <vector>

namespace dltune {

struct EmbeddedFile {
  std::string_view name;  // the file name without ".toml": "training", "cuda-driver"
  std::string_view text;
};

// profiles/*.toml, sorted by name.
[[nodiscard]] const std::vector<EmbeddedFile>& embedded_profiles();
// knowledge/*.toml, sorted by name.
[[nodiscard]] const std::vector<EmbeddedFile>& embedded_knowledge();

}  // namespace dltune

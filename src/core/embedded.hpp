#pragma once
// Data files compiled into the program (so that the binary works anywhere): cmake/embed.cmake
// generates the definitions of these functions into the build directory from the files.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune {

struct EmbeddedFile {
  std::string_view name;  // the file name without ".toml": "training", "cuda-driver"
  std::string_view text;
};

// profiles/*.toml, sorted by name.
[[nodiscard]] const std::vector<EmbeddedFile>& embedded_profiles();
// knowledge/*.toml, sorted by name.
[[nodiscard]] const std::vector<EmbeddedFile>& embedded_knowledge();

// The text of knowledge/NAME.toml as compiled in; empty when there is no such file.
[[nodiscard]] std::optional<std::string_view> knowledge_text(std::string_view name);

// A knowledge table: `parse(text, "knowledge/NAME.toml")` of the compiled-in file, or an error
// naming the file when it is not compiled in. Callers keep the result in a function-local
// static, so that each table is parsed once per process.
template <class T, class Parse>
[[nodiscard]] Result<T> load_knowledge(std::string_view name, Parse&& parse) {
  const std::string where = "knowledge/" + std::string(name) + ".toml";
  if (const auto text = knowledge_text(name)) return parse(*text, where);
  return fail("not compiled in", where);
}

}  // namespace dltune

#pragma once
// Object-like #define lines of a C header (cuda.h, cudnn_version.h, nccl.h, patchlevel.h): the
// versions of the CUDA stack and of Python are written there as plain macros.
#include <map>
#include <string>
#include <string_view>

namespace dltune::host::parse {

struct Define {
  std::string value;  // the replacement text, trimmed, comments removed ("13000", "\"3.11.2\"")
  int line = 0;       // 1-based line of the first definition
};

// Every `#define NAME VALUE` (also `#  define`), first definition kept; function-like macros
// (`#define F(x) ...`) and lines continued with a backslash are skipped. Never fails: a header
// is text that may be cut anywhere (we read prefixes of big ones).
[[nodiscard]] std::map<std::string, Define, std::less<>> c_defines(std::string_view text);

}  // namespace dltune::host::parse

#pragma once
// What every fuzz target shares: the input's first byte chooses the parser (so one target covers
// a family of formats and libFuzzer's corpus stays one directory), the rest is the text, and a
// second text where a parser takes two (split at the first NUL).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace dltune::fuzz {

struct Input {
  unsigned selector = 0;
  std::string_view text;

  Input(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return;
    selector = data[0];
    text = std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1);
  }
  // The text before the first NUL and after it (all and "" when there is none).
  [[nodiscard]] std::pair<std::string_view, std::string_view> two() const {
    const auto nul = text.find('\0');
    if (nul == std::string_view::npos) return {text, {}};
    return {text.substr(0, nul), text.substr(nul + 1)};
  }
};

}  // namespace dltune::fuzz

#pragma once
// Line handling shared by the drop-in writers (dropins*.cpp); not part of the interface.
#include <string>
#include <string_view>
#include <vector>

namespace dltune::settings::dropin_text {

// The lines of `text` without their '\n' (a '\r' stays: lines are copied back as they were).
[[nodiscard]] std::vector<std::string_view> lines(std::string_view text);
[[nodiscard]] bool contains_line(std::string_view text, std::string_view line);
// A blank line or one whose first non-blank character is one of `comment_chars`.
[[nodiscard]] bool comment_or_blank(std::string_view line, std::string_view comment_chars);
// A value as written into a file: trimmed, line breaks turned into spaces so that a value can
// never add a line of its own.
[[nodiscard]] std::string one_line(std::string_view value);

}  // namespace dltune::settings::dropin_text

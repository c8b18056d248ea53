#pragma once
// Line handling shared by the drop-in writers (dropins*.cpp); not part of the interface.
#include <functional>
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
// `text` (lines ending in '\n') with the lines for which `first` holds moved before the other
// lines for which `movable` holds, each group in its order; the moved lines fill the places the
// movable ones held, and every other line stays where it is.
[[nodiscard]] std::string move_first(std::string_view text,
                                     const std::function<bool(std::string_view)>& movable,
                                     const std::function<bool(std::string_view)>& first);

}  // namespace dltune::settings::dropin_text

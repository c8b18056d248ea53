#pragma once
// roff for man(7) pages: escaping, and the layout of the help texts of commands/NAME.toml
// (paragraphs, indented blocks, "name   text" lists) in man macros, so that a man page renders
// without a warning from groff (`man --warnings`).
#include <string>
#include <string_view>

namespace dltune::options::roff {

// `text` for a roff text line or a quoted macro argument: backslashes (\e), every hyphen as \-
// (an ASCII minus that copies and pastes as one: options, paths), quotes and the characters that
// groff turns into typographic ones (' ` ~ ^ ") as named glyphs, and a '.' that starts a line
// behind \& (it would be a request otherwise).
[[nodiscard]] std::string escape(std::string_view text);

// Bold and italic runs, escaped, ending in the regular font.
[[nodiscard]] std::string bold(std::string_view text);
[[nodiscard]] std::string italic(std::string_view text);

// How a help text is laid out.
enum class Layout {
  kText,     // paragraphs; an indented block is kept as it is, "name   text" lines become a list
  kExamples  // as kText, but an indented block is always kept as it is (command lines)
};

// A help text as written in commands/NAME.toml (hand-wrapped lines, paragraphs separated by
// blank lines) as roff: a paragraph at column 0 is filled by groff (.PP); a paragraph of
// "name   text" items whose text lines up (an indented definition list) becomes tagged
// paragraphs (.TP); any other indented block is kept line for line (.nf), indented (.RS).
[[nodiscard]] std::string blocks(std::string_view text, Layout layout = Layout::kText);

// `text` as one filled paragraph's lines (no macro before it): each line escaped and trimmed.
[[nodiscard]] std::string filled(std::string_view text);

}  // namespace dltune::options::roff

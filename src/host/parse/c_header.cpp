#include "host/parse/c_header.hpp"

#include <cctype>

#include "core/text.hpp"
#include "host/parse/scan.hpp"

namespace dltune::host::parse {

namespace {

using scan::ident_char;

// Removes /* ... */ (on this line) and // comments from a macro's replacement text.
std::string strip_comments(std::string_view v) {
  std::string out;
  std::size_t i = 0;
  char quote = 0;
  while (i < v.size()) {
    const char c = v[i];
    if (quote != 0) {
      out += c;
      if (c == '\\' && i + 1 < v.size())
        out += v[++i];
      else if (c == quote)
        quote = 0;
      ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      out += c;
      ++i;
      continue;
    }
    if (v.substr(i, 2) == "//") break;
    if (v.substr(i, 2) == "/*") {
      const auto end = v.find("*/", i + 2);
      if (end == std::string_view::npos) break;
      out += ' ';
      i = end + 2;
      continue;
    }
    out += c;
    ++i;
  }
  return std::string(text::trim(out));
}

}  // namespace

std::map<std::string, Define, std::less<>> c_defines(std::string_view text) {
  std::map<std::string, Define, std::less<>> out;
  int number = 0;
  bool continued = false;  // the previous line ended with a backslash
  for (auto line : text::lines(text)) {
    ++number;
    const bool was_continued = continued;
    const auto t = text::trim(line);
    continued = !t.empty() && t.back() == '\\';
    if (was_continued || t.empty() || t[0] != '#') continue;
    auto rest = text::trim(t.substr(1));
    if (!rest.starts_with("define")) continue;
    rest.remove_prefix(6);
    if (rest.empty() || (rest[0] != ' ' && rest[0] != '\t')) continue;
    rest = text::trim(rest);
    std::size_t n = 0;
    while (n < rest.size() && ident_char(rest[n])) ++n;
    if (n == 0 || std::isdigit(static_cast<unsigned char>(rest[0])) != 0) continue;
    if (n < rest.size() && rest[n] == '(') continue;  // function-like
    if (continued) continue;                          // multi-line value: not a version
    const std::string name(rest.substr(0, n));
    if (out.count(name) != 0) continue;
    out.emplace(name, Define{strip_comments(rest.substr(n)), number});
  }
  return out;
}

}  // namespace dltune::host::parse

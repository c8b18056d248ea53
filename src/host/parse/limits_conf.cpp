#include "host/parse/limits_conf.hpp"

#include <cctype>

namespace dltune::host::parse {

std::vector<LimitsEntry> limits_conf(std::string_view text) {
  std::vector<LimitsEntry> out;
  int n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++n;
    // pam_limits cuts the line at the first '#'.
    auto stop = text.find('#', start);
    if (stop == std::string_view::npos || stop > end) stop = end;
    struct Range {
      std::size_t b, e;
    };
    std::vector<Range> f;
    std::size_t i = start;
    const auto ws = [&](char c) {
      return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
    };
    while (i < stop) {
      while (i < stop && ws(text[i])) ++i;
      const auto b = i;
      while (i < stop && !ws(text[i])) ++i;
      if (i > b) f.push_back(Range{b, i});
    }
    // pam_limits reads the first four words (sscanf "%s%s%s%s") and lowercases type and item.
    if (f.size() >= 4) {
      const auto at = [&](int k) { return std::string(text.substr(f[k].b, f[k].e - f[k].b)); };
      const auto lower = [](std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
      };
      out.push_back(LimitsEntry{n, at(0), lower(at(1)), lower(at(2)), at(3), f[3].b, f[3].e});
    }
    start = end + 1;
  }
  return out;
}

}  // namespace dltune::host::parse

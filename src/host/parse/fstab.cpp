#include "host/parse/fstab.hpp"

namespace dltune::host::parse {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t';
}
bool octal(char c) {
  return c >= '0' && c <= '7';
}

struct Field {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The fields of the line text[begin, end) as byte ranges of the whole text.
std::vector<Field> fields_of(std::string_view text, std::size_t begin, std::size_t end) {
  std::vector<Field> out;
  std::size_t i = begin;
  while (i < end) {
    while (i < end && blank(text[i])) ++i;
    const auto b = i;
    while (i < end && !blank(text[i])) ++i;
    if (i > b) out.push_back(Field{b, i});
  }
  return out;
}

}  // namespace

std::string fstab_unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    // At most \377: one byte.
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '3' &&
        octal(field[i + 2]) && octal(field[i + 3])) {
      out += static_cast<char>(((field[i + 1] - '0') << 6) | ((field[i + 2] - '0') << 3) |
                               (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::vector<FstabEntry> fstab(std::string_view text) {
  std::vector<FstabEntry> out;
  int n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++n;
    // A '\r' before the '\n' (a file edited on Windows) is not part of the last field.
    const auto line_end = end > start && text[end - 1] == '\r' ? end - 1 : end;
    const auto f = fields_of(text, start, line_end);
    const auto at = [&](std::size_t k) { return text.substr(f[k].begin, f[k].end - f[k].begin); };
    if (f.size() >= 2 && at(0).front() != '#') {
      FstabEntry e;
      e.line = n;
      e.spec = fstab_unescape(at(0));
      e.file = fstab_unescape(at(1));
      if (f.size() >= 3) e.vfstype = std::string(at(2));
      if (f.size() >= 4) {
        e.mntops = std::string(at(3));
        e.has_mntops = true;
        e.mntops_begin = f[3].begin;
        e.mntops_end = f[3].end;
      } else {
        e.mntops_begin = e.mntops_end = f.back().end;
      }
      out.push_back(std::move(e));
    }
    start = end + 1;
  }
  return out;
}

}  // namespace dltune::host::parse

#include "settings/dropins_text.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace dltune::settings::dropin_text {

std::vector<std::string_view> lines(std::string_view text) {
  return text::lines(text);
}

std::string move_first(std::string_view text, const std::function<bool(std::string_view)>& movable,
                       const std::function<bool(std::string_view)>& first) {
  auto all = lines(text);
  std::vector<std::size_t> slots;
  std::vector<std::string_view> moving;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (movable(all[i])) {
      slots.push_back(i);
      moving.push_back(all[i]);
    }
  std::stable_partition(moving.begin(), moving.end(), first);
  for (std::size_t k = 0; k < slots.size(); ++k) all[slots[k]] = moving[k];
  std::string out;
  for (const auto line : all) {
    out += line;
    out += '\n';
  }
  return out;
}

bool contains_line(std::string_view text, std::string_view line) {
  for (auto l : lines(text))
    if (l == line || (l.size() == line.size() + 1 && l.back() == '\r' && l.starts_with(line)))
      return true;
  return false;
}

bool comment_or_blank(std::string_view line, std::string_view comment_chars) {
  const auto t = text::trim(line);
  return t.empty() || comment_chars.find(t.front()) != std::string_view::npos;
}

std::string one_line(std::string_view value) {
  std::string out(text::trim(value));
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

}  // namespace dltune::settings::dropin_text

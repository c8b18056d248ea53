#include "options/roff.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/text.hpp"

namespace dltune::options::roff {

namespace {

struct Line {
  std::size_t indent = 0;
  std::string_view text;  // without the indentation and trailing blanks
};

// The text's paragraphs: runs of non-blank lines.
std::vector<std::vector<Line>> paragraphs(std::string_view text) {
  std::vector<std::vector<Line>> out;
  std::vector<Line> current;
  for (auto l : text::lines(text)) {
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r'))
      l.remove_suffix(1);
    if (l.empty()) {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
      continue;
    }
    Line line;
    line.indent = l.find_first_not_of(' ');
    line.text = l.substr(line.indent);
    current.push_back(line);
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

struct Item {
  std::string_view tag;
  std::vector<std::string_view> body;
};

// "name   text" items (slurm's subcommands, a list of variables): each item's first line at the
// paragraph's least indentation, its text (after two or more spaces, or on the next lines) and
// every continuation line starting at one column further right. nullopt for anything else.
std::optional<std::vector<Item>> definition_list(const std::vector<Line>& lines) {
  std::size_t least = lines.front().indent;
  for (const auto& l : lines) least = std::min(least, l.indent);
  std::optional<std::size_t> column;
  std::vector<Item> items;
  for (const auto& l : lines) {
    if (l.indent == least) {
      Item item;
      const auto gap = l.text.find("  ");
      if (gap == std::string_view::npos) {
        item.tag = l.text;
      } else {
        const auto start = l.text.find_first_not_of(' ', gap);
        if (column && *column != least + start) return std::nullopt;
        column = least + start;
        item.tag = l.text.substr(0, gap);
        item.body.push_back(l.text.substr(start));
      }
      items.push_back(item);
      continue;
    }
    if (items.empty() || l.indent < least + 2 || (column && *column != l.indent))
      return std::nullopt;
    column = l.indent;
    items.back().body.push_back(l.text);
  }
  if (!column) return std::nullopt;
  for (const auto& item : items)
    if (item.body.empty()) return std::nullopt;
  return items;
}

// Lines kept as they are (no filling), indented by their own indentation beyond the block's.
std::string preformatted(const std::vector<Line>& lines) {
  std::size_t least = lines.front().indent;
  for (const auto& l : lines) least = std::min(least, l.indent);
  std::string out = ".PP\n.RS 4\n.nf\n";
  for (const auto& l : lines) out += std::string(l.indent - least, ' ') + escape(l.text) + "\n";
  return out + ".fi\n.RE\n";
}

std::string filled_lines(const std::vector<Line>& lines) {
  std::string out = ".PP\n";
  for (const auto& l : lines) out += escape(l.text) + "\n";
  return out;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  bool line_start = true;
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\e";
        break;
      case '-':
        out += "\\-";
        break;
      case '\'':
        out += "\\(aq";
        break;
      case '`':
        out += "\\(ga";
        break;
      case '~':
        out += "\\(ti";
        break;
      case '^':
        out += "\\(ha";
        break;
      case '"':
        out += "\\(dq";
        break;
      case '.':
        if (line_start) out += "\\&";
        out += c;
        break;
      default:
        out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string bold(std::string_view text) {
  return "\\fB" + escape(text) + "\\fR";
}

std::string italic(std::string_view text) {
  return "\\fI" + escape(text) + "\\fR";
}

std::string filled(std::string_view text) {
  std::string out;
  for (const auto l : text::lines(text)) {
    const auto t = text::trim(l);
    if (!t.empty()) out += escape(t) + "\n";
  }
  return out;
}

std::string blocks(std::string_view text, Layout layout) {
  std::string out;
  for (const auto& paragraph : paragraphs(text)) {
    if (layout == Layout::kText) {
      if (const auto items = definition_list(paragraph)) {
        for (const auto& item : *items) {
          out += ".TP\n" + bold(item.tag) + "\n";
          for (const auto line : item.body) out += escape(line) + "\n";
        }
        continue;
      }
    }
    // Runs of lines at column 0 are filled; indented runs are kept as they are.
    for (std::size_t i = 0; i < paragraph.size();) {
      const bool indented = paragraph[i].indent > 0;
      std::size_t j = i;
      while (j < paragraph.size() && (paragraph[j].indent > 0) == indented) ++j;
      const std::vector<Line> run(paragraph.begin() + static_cast<std::ptrdiff_t>(i),
                                  paragraph.begin() + static_cast<std::ptrdiff_t>(j));
      out += indented ? preformatted(run) : filled_lines(run);
      i = j;
    }
  }
  return out;
}

}  // namespace dltune::options::roff

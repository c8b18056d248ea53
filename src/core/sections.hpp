#pragma once
// Text output for humans: titled sections of aligned "label  value" rows.
#include <string>
#include <vector>

namespace dltune::text {

struct Row {
  std::string label;
  std::string value;
  int indent = 0;  // nesting level: 0 for a fact, 1 for a fact of an item above it
};

struct Section {
  std::string title;
  std::vector<Row> rows;

  Section& add(std::string label, std::string value, int indent = 0) {
    rows.push_back(Row{std::move(label), std::move(value), indent});
    return *this;
  }
};

// Sections separated by a blank line; labels aligned within a section.
[[nodiscard]] std::string render_sections(const std::vector<Section>& sections);

}  // namespace dltune::text

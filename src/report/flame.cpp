// Flame graphs of Python stacks (report/flame.hpp).
#include "report/flame.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include <fmt/core.h>

#include "core/text.hpp"
#include "diagnose/py_activity.hpp"
#include "report/output.hpp"

namespace dltune::report {

namespace {

struct Node {
  std::string label;                 // "Samples.__getitem__ (train.py)"
  std::vector<pystack::Frame> path;  // this frame and those under it, innermost first
  std::uint64_t samples = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
};

// The colour of each activity (by its id), and of other Python work.
std::string colour_of(const diagnose::PyActivities* a, std::size_t activity) {
  const std::string id =
      a != nullptr && activity < a->list.size() ? a->list[activity].id : std::string("other");
  if (id == "loading") return "#f28e2b";
  if (id == "model") return "#4e79a7";
  if (id == "waiting-for-data" || id == "waiting") return "#bab0ac";
  if (id == "sync") return "#e15759";
  if (id == "logging") return "#b07aa1";
  return "#59a14f";
}

void draw(const Node& n, double x, int depth, double px_per_sample, const FlameOptions& o,
          int height, std::uint64_t total, const diagnose::PyActivities* activities,
          std::string& out) {
  const double w = static_cast<double>(n.samples) * px_per_sample;
  if (w < o.min_width || depth >= o.max_depth) return;
  const int y = height - (depth + 1) * o.row_height;
  const auto activity =
      activities != nullptr ? diagnose::classify(*activities, n.path) : std::size_t{0};
  const double pct = 100.0 * static_cast<double>(n.samples) / static_cast<double>(total);
  out += fmt::format(
      "<g class=\"frame\"><title>{} — {} samples ({:.1f}%)</title>"
      "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" rx=\"2\"/>",
      html_escape(n.label), n.samples, pct, x, y, std::max(w - 0.5, 0.1), o.row_height - 1,
      colour_of(activities, activity));
  // The label where it fits (about 7 px a character at 11 px).
  const auto chars = static_cast<std::size_t>((w - 6) / 7);
  if (chars >= 3) {
    std::string label = n.label;
    if (label.size() > chars) label = label.substr(0, chars - 2) + "..";
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>", x + 3, y + o.row_height - 5,
                       html_escape(label));
  }
  out += "</g>\n";
  double cx = x;
  std::vector<const Node*> kids;
  for (const auto& [k, c] : n.children) kids.push_back(c.get());
  // The widest first, left to right (flame graphs sort by name; by width reads faster here).
  std::stable_sort(kids.begin(), kids.end(),
                   [](const Node* a, const Node* b) { return a->samples > b->samples; });
  for (const auto* c : kids) {
    draw(*c, cx, depth + 1, px_per_sample, o, height, total, activities, out);
    cx += static_cast<double>(c->samples) * px_per_sample;
  }
}

// The rows the frames that are drawn take (those at least `min_samples` wide).
int depth_of(const Node& n, int cap, double min_samples) {
  int d = 0;
  for (const auto& [k, c] : n.children)
    if (static_cast<double>(c->samples) >= min_samples)
      d = std::max(d, depth_of(*c, cap, min_samples));
  return std::min(cap, d + 1);
}

}  // namespace

std::string flame_svg(const store::PythonStacks& stacks, std::int64_t from_ns, std::int64_t to_ns,
                      const FlameOptions& o) {
  // The window's count of each stack.
  std::map<int, std::uint64_t> counts;
  for (const auto& iv : stacks.intervals) {
    if (iv.wall_ns < from_ns || iv.wall_ns > to_ns) continue;
    for (const auto& c : iv.counts) counts[c.stack] += std::uint64_t{c.running} + c.waiting;
  }
  Node root;
  root.label = "all";
  for (const auto& [id, n] : counts) {
    if (n == 0) continue;
    root.samples += n;
    Node* at = &root;
    const auto frames = stacks.frames_of(id);
    std::vector<pystack::Frame> path;
    if (frames.empty()) {  // the stacks not kept
      auto& child = at->children["(other stacks)"];
      if (!child) {
        child = std::make_unique<Node>();
        child->label = "(other stacks)";
      }
      child->samples += n;
      continue;
    }
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {  // outermost first
      path.insert(path.begin(), *it);
      const std::string label = fmt::format("{} ({})", it->function, text::base_name(it->file));
      auto& child = at->children[label];
      if (!child) {
        child = std::make_unique<Node>();
        child->label = label;
        child->path = path;
      }
      child->samples += n;
      at = child.get();
    }
  }
  if (root.samples == 0) return {};
  const auto& table = diagnose::builtin_py_activities();
  const diagnose::PyActivities* activities = table ? &*table : nullptr;
  const double px_per_sample = static_cast<double>(o.width) / static_cast<double>(root.samples);
  const int height = depth_of(root, o.max_depth, o.min_width / px_per_sample) * o.row_height;
  std::string out = fmt::format(
      "<svg class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
      "width=\"100%\" role=\"img\" aria-label=\"flame graph of {} Python stack samples\">\n",
      o.width, height, root.samples);
  draw(root, 0, 0, px_per_sample, o, height, root.samples, activities, out);
  out += "</svg>\n";
  return out;
}

}  // namespace dltune::report

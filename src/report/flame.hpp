#pragma once
// The job's main-thread Python stacks of a report's window as a flame graph: an SVG of the
// recording's "python_stacks" (store/python_stacks.hpp) in the window, the outermost frame at the
// bottom, each frame as wide as the share of samples it was on the stack, coloured by what the
// stack under it is doing (diagnose/py_activity.hpp: loading, the model, waiting, ...).
#include <cstdint>
#include <string>

#include "store/python_stacks.hpp"

namespace dltune::report {

struct FlameOptions {
  int width = 1200;      // px
  int row_height = 18;   // px per frame
  int max_depth = 48;    // deeper frames are cut (their samples stay in their parents)
  double min_width = 2;  // px: narrower frames are left out (their time stays in the parent)
};

// The SVG (inline, escaped) of the stacks whose intervals end in [from_ns, to_ns]; empty when
// none does.
[[nodiscard]] std::string flame_svg(const store::PythonStacks& stacks, std::int64_t from_ns,
                                    std::int64_t to_ns, const FlameOptions& options = {});

}  // namespace dltune::report

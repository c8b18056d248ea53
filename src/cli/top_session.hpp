#pragma once
// The loop behind `dltune top` and `dltune record --replay`: a source of Models, the view, keys.
#include <cstdint>
#include <memory>
#include <string>

#include "monitor/sampler.hpp"
#include "monitor/top_view.hpp"
#include "store/recording.hpp"

namespace dltune::cli {

struct TopSettings {
  std::int64_t interval_ns = 1'000'000'000;
  monitor::TopSort sort = monitor::TopSort::kTree;
  std::string title;
  bool once = false;  // plain text on stdout, no terminal control
};

// Live: samples every interval and draws until q or a signal. --once: two samples one interval
// apart, printed as text (every process, width 100 unless COLUMNS says otherwise).
[[nodiscard]] int top_live(monitor::Sampler& sampler, const TopSettings& settings);
// A recording at sample `index` (left/right step, Home/End jump); --once prints that sample.
[[nodiscard]] int top_replay(const store::Recording& recording, std::size_t index,
                             const TopSettings& settings);

// "cpu", "mem", "pid", "runq", "io", "tree" → the sort; nullopt for anything else.
[[nodiscard]] std::optional<monitor::TopSort> parse_sort(const std::string& s);

}  // namespace dltune::cli

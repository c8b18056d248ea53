#pragma once
// The loops behind `dltune top` and `dltune record --replay`: a source of Models (a sampler, a
// recording), the view, the keys.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "monitor/sampler.hpp"
#include "monitor/top_view.hpp"
#include "store/recording.hpp"

namespace dltune::tui {

struct TopSettings {
  std::int64_t interval_ns = 1'000'000'000;
  monitor::TopSort sort = monitor::TopSort::kTree;
  std::string title;
  bool once = false;  // plain text on stdout, no terminal control
  // The processes are a job's (--pid, --cgroup, --slurm-job): k may signal them without root.
  bool job = false;
};

// Why a loop could not run or went on no longer. Bad input: no terminal to draw on, a recording
// without samples (exit 2); else a sample could not be taken or read (exit 1).
using TopResult = tl::expected<void, Failure>;

// Live: samples every interval and draws until q or a signal. --once, or when stdout is not a
// terminal: two samples one interval apart, printed as text (every process, width 100 unless
// COLUMNS says otherwise).
[[nodiscard]] TopResult top_live(monitor::Sampler& sampler, const TopSettings& settings);
// `dltune top`: `scope` sampled with `options` (its scope is `scope`), drawn every `interval_ns`,
// under its description; a job's processes as a tree, the host's by CPU, unless `sort` (a
// sort_names entry) says otherwise. A sampler that cannot open is bad input (the scope is gone).
[[nodiscard]] TopResult top_scope(const host::Root& root, const monitor::Scope& scope,
                                  const monitor::SamplerOptions& options, std::int64_t interval_ns,
                                  bool once, const std::string& sort);
// A recording at sample `index` (left/right step, Home/End jump); --once prints that sample.
[[nodiscard]] TopResult top_replay(const store::Recording& recording, std::size_t index,
                                   const TopSettings& settings);

// "cpu", "mem", "pid", "runq", "io", "tree" → the sort; nullopt for anything else.
[[nodiscard]] std::optional<monitor::TopSort> parse_sort(const std::string& s);
// Those names, in the keys' order: what --sort takes.
[[nodiscard]] std::vector<std::string> sort_names();

}  // namespace dltune::tui

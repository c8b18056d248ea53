#pragma once
// The `top` view as lines of text: one pure function of a Model, shared by the live
// terminal view (tui/screen), `top --once` (plain text) and `record --replay`.
//
// Layout, top to bottom: a title; CPUs (a bar per CPU, as many per row as fit); memory and swap;
// pressure; disks; network; GPUs; the job's cgroup; the straggler rank, when one is named; then
// the processes (a rank's ROLE is "rank" and its RANK, as "rank3"), as many as the height
// leaves. It fits 80x24 and uses the rest of a larger terminal (wider bars, more processes).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "monitor/model.hpp"
#include "monitor/rank_pace.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

enum class TopSort { kCpu, kMemory, kPid, kRunQueue, kIo, kTree };
// "cpu", "mem", "pid", "runq", "io", "tree".
[[nodiscard]] const char* sort_name(TopSort s);

enum class Style : std::uint8_t { kNormal, kTitle, kHeader, kMain, kWorker, kWarn, kSelected };

// What part of a line means, for the terminal to colour (never shown as text: --once and
// NO_COLOR draw the same characters without them).
enum class Tint : std::uint8_t {
  kUser,  // CPU time by mode
  kSystem,
  kIowait,
  kSteal,
  kUsed,  // memory by kind
  kCache,
  kSwap,
  kGood,  // a value against its thresholds (green, yellow, red)
  kFair,
  kBad,
};
struct Span {
  int start = 0;  // byte offset in the line's text
  int length = 0;
  Tint tint = Tint::kGood;
};

struct TopLine {
  std::string text;  // at most `width` bytes (ASCII only)
  Style style = Style::kNormal;
  std::vector<Span> spans;  // within text, in order, not overlapping
};

struct TopOptions {
  int width = 80;
  int height = 24;  // lines; 0: no limit (every process: --once into a file)
  TopSort sort = TopSort::kTree;
  std::string title;                 // "dltune top  host  pid 1234"
  std::string status;                // the bottom line: keys, or "replay 12/3600"
  std::vector<std::string> notices;  // sources switched off, shown under the title
  // The rank that holds a distributed job back (RankWatch over the last seconds): its row is
  // marked and its evidence shown above the processes.
  std::optional<Straggler> straggler;
  // The live view's process list: only processes whose command line (or name) holds `filter`;
  // the row `selected` (an index into that list) in reverse video, the list shown from `first`
  // (moved so that the selected row is on screen) and no "... more" row. Unset: from the top, the
  // rows that fit and a "... N more processes" row (--once, replay).
  // Lines drawn above the processes as given, already fitted to the width (the live view's
  // sparklines: UTF-8 block characters, so more bytes than columns).
  std::vector<std::string> history;
  std::string filter;
  std::optional<pid_t> follow;  // only this process and its descendants (F)
  std::optional<std::size_t> selected;
  std::size_t first = 0;
  // visible_processes(model, sort, filter, follow) where the caller has it already (the live
  // view orders the list once a frame); unset: top_view works it out.
  const std::vector<const ProcessModel*>* visible = nullptr;
};

// Where the process rows went, for the keys that move through them.
struct TopLayout {
  std::size_t count = 0;  // processes in the (filtered) list
  std::size_t first = 0;  // the first one shown
  std::size_t rows = 0;   // rows the screen had for them
};

[[nodiscard]] std::vector<TopLine> top_view(const monitor::Model& model, const TopOptions& options,
                                            TopLayout* layout = nullptr);

// Whether a process's command line (its name in brackets when it has none, a kernel thread)
// holds `filter` (case-sensitive, as htop's; an empty filter holds for every process).
[[nodiscard]] bool matches_filter(const monitor::ProcessModel& p, std::string_view filter);

// PSI some-% against the thresholds the view colours it by: under 5% good, under 20% fair,
// else bad (docs/measurements.md keeps no PSI thresholds for the host; these are the view's).
[[nodiscard]] Tint pressure_tint(double some_pct);

// Whether the view has any process's I/O (/proc/PID/io is root's or the owner's): without it
// there is no IO/s column and no I/O sort.
[[nodiscard]] bool reads_io(const monitor::Model& model);

// "1.5G", "300K", "12", "0" (binary units, one decimal under 10).
[[nodiscard]] std::string compact_bytes(double bytes);

// The processes in display order: kTree keeps the job's tree (main, then each child under its
// parent, workers marked), the others sort by their key, largest first (pid: smallest first).
[[nodiscard]] std::vector<const monitor::ProcessModel*> ordered_processes(
    const monitor::Model& model, TopSort sort);
// The same, less those that do not match `filter`, with `follow` those that are neither that
// process nor one of its descendants, and with `hide_kernel_threads` the kernel's threads.
[[nodiscard]] std::vector<const monitor::ProcessModel*> visible_processes(
    const monitor::Model& model, TopSort sort, std::string_view filter,
    std::optional<pid_t> follow = std::nullopt, bool hide_kernel_threads = false);

// A kernel thread: kthreadd (PID 2) and its children, as `ps --ppid 2 -p 2` lists them.
[[nodiscard]] bool is_kernel_thread(const monitor::ProcessModel& p);

// What the next sample reads beyond /proc/PID/stat for a live view whose list (`visible`, as
// visible_processes gives it) showed `layout`: the rows on screen and a page either side (a
// scroll or a page key shows their run queue and I/O at once), and the job's main process and
// ranks (the straggler watch); every process when `sort` orders by a file beyond stat (run queue,
// I/O). Context switches only for the main process and the ranks (the view shows none).
// `others_every` above 1: stat is read every sample only for the rows on screen and the job's
// main process and ranks, every `others_every` samples for the others (ProcessDetail); not for a
// sort by a file beyond stat.
[[nodiscard]] ProcessDetail detail_for_view(const std::vector<const ProcessModel*>& visible,
                                            const TopLayout& layout, TopSort sort,
                                            const Model& model, unsigned others_every = 1);

}  // namespace dltune::monitor

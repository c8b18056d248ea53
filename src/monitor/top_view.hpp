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
#include <vector>

#include "monitor/model.hpp"
#include "monitor/rank_pace.hpp"

namespace dltune::monitor {

enum class TopSort { kCpu, kMemory, kPid, kRunQueue, kIo, kTree };
// "cpu", "mem", "pid", "runq", "io", "tree".
[[nodiscard]] const char* sort_name(TopSort s);

enum class Style : std::uint8_t { kNormal, kTitle, kHeader, kMain, kWorker, kWarn };

struct TopLine {
  std::string text;  // at most `width` bytes (ASCII only)
  Style style = Style::kNormal;
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
};

[[nodiscard]] std::vector<TopLine> top_view(const monitor::Model& model, const TopOptions& options);

// Whether the view has any process's I/O (/proc/PID/io is root's or the owner's): without it
// there is no IO/s column and no I/O sort.
[[nodiscard]] bool reads_io(const monitor::Model& model);

// "1.5G", "300K", "12", "0" (binary units, one decimal under 10).
[[nodiscard]] std::string compact_bytes(double bytes);

// The processes in display order: kTree keeps the job's tree (main, then each child under its
// parent, workers marked), the others sort by their key, largest first (pid: smallest first).
[[nodiscard]] std::vector<const monitor::ProcessModel*> ordered_processes(
    const monitor::Model& model, TopSort sort);

}  // namespace dltune::monitor

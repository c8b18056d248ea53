// The live top's keys (tui/top_keys.hpp).
#include "tui/top_keys.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include <fmt/core.h>

#include "tui/screen.hpp"

namespace dltune::tui {

namespace {

constexpr std::array<std::pair<const char*, int>, 14> kSignalNames{{
    {"HUP", SIGHUP},
    {"INT", SIGINT},
    {"QUIT", SIGQUIT},
    {"ABRT", SIGABRT},
    {"KILL", SIGKILL},
    {"USR1", SIGUSR1},
    {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE},
    {"ALRM", SIGALRM},
    {"TERM", SIGTERM},
    {"CONT", SIGCONT},
    {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},
}};

void move_to(TopUi& ui, std::size_t index) {
  ui.selected = ui.count == 0 ? 0 : std::min(index, ui.count - 1);
  ui.selected_pid = 0;  // sync_selection takes the pid at the new index
  ui.moved = true;
}

TopAction view_key(TopUi& ui, int key) {
  const std::size_t page = std::max<std::size_t>(1, ui.rows);
  switch (key) {
    case 'q':
    case 'Q':
      return TopAction::kQuit;
    case 'h':
    case '?':
      ui.mode = TopMode::kHelp;
      return TopAction::kRedraw;
    case '/':
      ui.mode = TopMode::kFilter;
      ui.typing = ui.filter;
      return TopAction::kRedraw;
    case ' ':
      ui.paused = !ui.paused;
      return TopAction::kRedraw;
    case 'k':
      if (ui.count == 0 || ui.selected_pid <= 0) {
        ui.message = "no process selected";
        return TopAction::kRedraw;
      }
      ui.mode = TopMode::kSignal;
      ui.typing = "TERM";
      return TopAction::kRedraw;
    case 'K':
      ui.hide_kernel_threads = !ui.hide_kernel_threads;
      ui.message =
          ui.hide_kernel_threads ? "kernel threads hidden (K shows them)" : "kernel threads shown";
      return TopAction::kRedraw;
    case 'F':
      if (ui.follow) {
        ui.follow.reset();
      } else if (ui.count > 0 && ui.selected_pid > 0) {
        ui.follow = ui.selected_pid;
      } else {
        ui.message = "no process selected";
      }
      return TopAction::kRedraw;
    case kKeyEscape:
      // Esc in the view clears an applied filter (as at the prompt).
      if (ui.filter.empty()) return TopAction::kNone;
      ui.filter.clear();
      return TopAction::kRedraw;
    case kKeyUp:
      move_to(ui, ui.selected > 0 ? ui.selected - 1 : 0);
      return TopAction::kRedraw;
    case kKeyDown:
      move_to(ui, ui.selected + 1);
      return TopAction::kRedraw;
    case kKeyPageUp:
      move_to(ui, ui.selected > page ? ui.selected - page : 0);
      return TopAction::kRedraw;
    case kKeyPageDown:
      move_to(ui, ui.selected + page);
      return TopAction::kRedraw;
    case kKeyHome:
      move_to(ui, 0);
      return TopAction::kRedraw;
    case kKeyEnd:
      move_to(ui, ui.count == 0 ? 0 : ui.count - 1);
      return TopAction::kRedraw;
    default:
      return TopAction::kUnhandled;
  }
}

// A line being typed at a prompt: printable characters append, Backspace deletes.
bool edit(std::string& text, int key, std::size_t limit) {
  if (key == kKeyBackspace) {
    if (!text.empty()) text.pop_back();
    return true;
  }
  if (key >= 0x20 && key < 0x7f && text.size() < limit) {
    text += static_cast<char>(key);
    return true;
  }
  return false;
}

}  // namespace

TopAction handle_key(TopUi& ui, int key) {
  if (key == kKeyQuit) return TopAction::kQuit;
  if (key == kKeyNone) return TopAction::kNone;
  if (key == kKeyResize) return TopAction::kRedraw;
  ui.message.clear();
  switch (ui.mode) {
    case TopMode::kHelp:
      ui.mode = TopMode::kView;  // any key closes it
      return TopAction::kRedraw;
    case TopMode::kFilter:
      if (key == kKeyEnter) {
        ui.filter = ui.typing;
        ui.mode = TopMode::kView;
        move_to(ui, 0);
      } else if (key == kKeyEscape) {
        ui.filter.clear();
        ui.typing.clear();
        ui.mode = TopMode::kView;
      } else if (!edit(ui.typing, key, 200)) {
        return TopAction::kNone;
      }
      return TopAction::kRedraw;
    case TopMode::kSignal:
      if (key == 'y' || key == kKeyEnter) {
        ui.mode = TopMode::kView;
        return TopAction::kSignal;
      }
      if (key == 'n' || key == kKeyEscape) {
        ui.mode = TopMode::kView;
        return TopAction::kRedraw;
      }
      // The name: capitals and digits ("KILL", "9").
      if (key == kKeyBackspace || std::isupper(key) != 0 || std::isdigit(key) != 0)
        return edit(ui.typing, key, 12) ? TopAction::kRedraw : TopAction::kNone;
      return TopAction::kNone;
    case TopMode::kView:
      break;
  }
  return view_key(ui, key);
}

void sort_changed(TopUi& ui) {
  if (ui.moved) return;
  ui.selected = 0;
  ui.selected_pid = 0;
  ui.first = 0;
}

void sync_selection(TopUi& ui, const std::vector<pid_t>& pids) {
  ui.count = pids.size();
  if (pids.empty()) {
    ui.selected = 0;
    ui.selected_pid = 0;
    return;
  }
  if (ui.selected_pid > 0)
    if (auto it = std::find(pids.begin(), pids.end(), ui.selected_pid); it != pids.end()) {
      ui.selected = static_cast<std::size_t>(it - pids.begin());
      return;
    }
  ui.selected = std::min(ui.selected, pids.size() - 1);
  ui.selected_pid = pids[ui.selected];
}

std::vector<std::string> help_lines() {
  return {
      "dltune top: keys",
      "",
      "  h ?            this help (any key closes it)",
      "  q              quit",
      "  Ctrl-L         draw the screen again",
      "  space          pause (sampling stops; the keys still work)",
      "  Up Down        select a process",
      "  PgUp PgDn      a page up or down",
      "  Home End       the first or last process",
      "  /              filter by command line (Enter applies, Esc clears)",
      "  Esc            clear the filter",
      "  k              send a signal to the selected process (TERM; type another name,",
      "                 y sends, n cancels; only the job's processes unless root)",
      "  F              follow the selected process and its descendants; F again: all",
      "  K              hide the kernel's threads (children of kthreadd); K again: show",
      "  c m p r i t    sort by CPU, memory, pid, run-queue wait, I/O, the job's tree",
      "  Left Right     record --replay: the previous or next sample (there Home and",
      "                 End jump to the first or last sample)",
      "",
      "Colours: CPU user green, system red, iowait blue, steal magenta;",
      "memory used green, cache yellow, swap red; PSI some under 5% green, under 20%",
      "yellow, else red; a GPU throttled (power, heat) or at 85 C or more red.",
      "NO_COLOR=1: no colour.",
  };
}

std::string status_line(const TopUi& ui, const std::string& keys) {
  switch (ui.mode) {
    case TopMode::kFilter:
      return fmt::format("filter: {}_   Enter apply  Esc clear", ui.typing);
    case TopMode::kSignal:
      return fmt::format("send SIG{} to {}? y/n  (type a name: KILL, INT, HUP, 9)", ui.typing,
                         ui.selected_pid);
    case TopMode::kHelp:
    case TopMode::kView:
      break;
  }
  std::string s = ui.paused ? "PAUSED  " : "";
  if (ui.follow) s += fmt::format("following {}  ", *ui.follow);
  if (!ui.message.empty()) s += ui.message + "  ";
  return s + keys;
}

std::optional<int> signal_number(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(c) != 0; })) {
    if (name.size() > 2) return std::nullopt;
    const int n = std::stoi(name);
    return n >= 1 && n < NSIG ? std::optional<int>(n) : std::nullopt;
  }
  std::string upper;
  for (const char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.starts_with("SIG")) upper.erase(0, 3);
  for (const auto& [n, number] : kSignalNames)
    if (upper == n) return number;
  return std::nullopt;
}

}  // namespace dltune::tui

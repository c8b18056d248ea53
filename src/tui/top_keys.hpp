#pragma once
// The live top's keys as a state machine, apart from the terminal and the sampler, so that it
// can be tested: what each key does to the view's state (help, the selected row, the filter
// prompt, the signal prompt, follow) and what the loop must then do.
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dltune::tui {

enum class TopMode {
  kView,    // the processes, keys act on the view
  kHelp,    // the keys listed; any key closes it
  kFilter,  // typing a filter at the prompt line
  kSignal,  // confirming a signal to the selected process
};

struct TopUi {
  TopMode mode = TopMode::kView;
  std::string filter;        // applied: the list holds the processes whose command line holds it
  std::string typing;        // at the prompt: the filter being typed, or the signal's name
  std::size_t selected = 0;  // index into the list shown
  pid_t selected_pid = 0;    // its pid, so that the row stays selected as the list changes
  std::size_t first = 0;     // the first row shown (the view's layout)
  std::size_t count = 0;     // processes in the list (the last layout)
  std::size_t rows = 1;      // rows the screen had for them (the last layout)
  bool paused = false;
  // The user moved the selection (a key, a filter): a new sort then keeps the selected process;
  // until then a sort shows the new order from its top, as a fresh view would.
  bool moved = false;
  bool hide_kernel_threads = false;  // K: the kernel's own threads (children of kthreadd) hidden
  std::optional<pid_t> follow;       // F: only this process and its descendants
  std::string message;               // shown on the status line until the next key (an error)
};

enum class TopAction {
  kNone,       // the key changed nothing (or the timeout passed)
  kRedraw,     // the state changed: draw again
  kQuit,       // leave the loop
  kUnhandled,  // not a key of this machine: the caller's (the sort keys)
  kSignal,     // confirmed: send the signal named `typing` to `selected_pid`
};

// What `key` (a character or one of screen.hpp's kKey constants) does.
[[nodiscard]] TopAction handle_key(TopUi& ui, int key);

// A sort key changed the order: unless the user moved the selection, the view starts again at
// the top of the new order (the selected pid is not chased down the list).
void sort_changed(TopUi& ui);

// After the list changed (a sample, a sort, the filter): the selected row follows its pid, or
// stays at its index (clamped) when the process is gone or a key moved it.
void sync_selection(TopUi& ui, const std::vector<pid_t>& pids);

// The help overlay's lines.
[[nodiscard]] std::vector<std::string> help_lines();

// The status line for the modes with a prompt ("filter: abc_", "send SIGTERM to 1234? y/n"),
// else `keys` (with the message, when there is one, before it).
[[nodiscard]] std::string status_line(const TopUi& ui, const std::string& keys);

// "TERM", "SIGTERM", "term", "15" → 15; nullopt for a name or number that is no signal.
[[nodiscard]] std::optional<int> signal_number(const std::string& name);

}  // namespace dltune::tui

// The current Python function of a job's processes (tui/py_functions.hpp).
#include "tui/py_functions.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::tui {

std::string frame_text(const pystack::Frame& f) {
  const auto base = text::base_name(f.file);
  return f.line > 0 ? fmt::format("{} {}:{}", f.function, base, f.line)
                    : fmt::format("{} {}", f.function, base);
}

void PythonFunctions::fill(monitor::Model& m) {
  std::set<pid_t> seen;
  for (auto& p : m.processes) {
    if (p.role != monitor::Role::kMain && p.role != monitor::Role::kWorker &&
        p.role != monitor::Role::kRank)
      continue;
    if (p.state == 'Z' || p.state == 'X') continue;
    seen.insert(p.pid);
    auto it = entries_.find(p.pid);
    if (it != entries_.end() && it->second.cmdline != p.cmdline) {  // another program now
      entries_.erase(it);
      it = entries_.end();
    }
    if (it == entries_.end()) {
      Entry e;
      e.cmdline = p.cmdline;
      auto attached = pystack::PythonProcess::attach(root_, p.pid);
      if (attached) {
        e.process = std::make_unique<pystack::PythonProcess>(std::move(*attached));
      } else if (!noted_ && p.role != monitor::Role::kWorker &&
                 !pystack::not_python(attached.error())) {
        // A job that is not Python has no function to show, and nothing to say about it.
        note_ = fmt::format("no Python function for pid {}: {}", p.pid, attached.error().message());
        noted_ = true;
      }
      it = entries_.emplace(p.pid, std::move(e)).first;
    }
    if (!it->second.process) continue;
    auto threads = it->second.process->sample();
    if (!threads) continue;  // exited or changing under the reader: this refresh shows none
    for (const auto& t : *threads)
      if (t.native_id == static_cast<std::uint64_t>(p.pid) && !t.frames.empty())
        p.python_frame = frame_text(t.frames.front());
  }
  for (auto it = entries_.begin(); it != entries_.end();)
    it = seen.count(it->first) != 0 ? std::next(it) : entries_.erase(it);
}

std::string PythonFunctions::take_note() {
  return std::exchange(note_, std::string());
}

}  // namespace dltune::tui

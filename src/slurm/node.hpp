#pragma once
// A Slurm node as its controller sees it, read and changed through scontrol (never by editing
// Slurm's state): `scontrol -o show node NAME`, `scontrol update nodename=NAME state=...`.
// Slurm 22.05 and later; the one-line format is slurm's own (scontrol(1), "show node").
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::slurm {

struct NodeState {
  std::string name;       // NodeName
  std::string host_name;  // NodeHostName: the host slurmd runs on
  std::string state;      // "IDLE+DRAIN", as scontrol prints it
  std::string base;       // "IDLE", "MIXED", "ALLOCATED", "DOWN", ... (before the first '+')
  std::vector<std::string> flags;  // "DRAIN", "NOT_RESPONDING", ... (after it)
  std::string reason;              // empty when the node has none
  std::string reason_by;           // "root" from "[root@2026-12-02T03:46:59]"
  std::string reason_at;           // "2026-12-02T03:46:59"
  // Drained or draining (the DRAIN flag): no new jobs start on it.
  [[nodiscard]] bool drain() const;
  // A node down or not responding: its state is the controller's guess, not slurmd's.
  [[nodiscard]] bool down() const;
};

// Parses `scontrol -o show node NAME`'s one line. The reason is the last field and may hold
// spaces ("Reason=dltune: shm.size is 64 MiB [root@2026-12-02T03:46:59]"). Errors: no NodeName
// or State field.
[[nodiscard]] Result<NodeState> parse_show_node(std::string_view line);

// What dltune says before its own reasons ("dltune: shm.size ..."): a drain whose reason starts
// so is dltune's, and only such a drain is ever resumed by dltune.
inline constexpr std::string_view kReasonPrefix = "dltune: ";
[[nodiscard]] bool drained_by_dltune(const NodeState& node);

// scontrol with a deadline (PATH's, or /usr/bin's when PATH is unset: slurmd runs its
// programs with almost no environment).
struct Scontrol {
  std::chrono::milliseconds timeout{10'000};
  // Errors: scontrol missing, failing ("Node x not found", no controller) or too slow.
  [[nodiscard]] Result<NodeState> show_node(const std::string& name) const;
  [[nodiscard]] Result<void> drain(const std::string& name, const std::string& reason) const;
  [[nodiscard]] Result<void> resume(const std::string& name) const;
};

// What this process has asked of scontrol update so far, for a watchdog's last words: "" when
// nothing; else what was asked and whether it finished ("state=drain: under way" while
// scontrol runs, whose request may still take effect after this process ends).
[[nodiscard]] std::string update_progress();
// What `slurm health` says when it has no verdict within `limit_ns`: the node left as it is only
// when no update was asked; else the update, and that one under way may still take effect.
[[nodiscard]] std::string watchdog_message(std::int64_t limit_ns);

}  // namespace dltune::slurm

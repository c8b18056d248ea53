#include "slurm/node.hpp"

#include <algorithm>
#include <atomic>

#include <fmt/core.h>

#include "core/program.hpp"
#include "core/text.hpp"

namespace dltune::slurm {

namespace {

// The value of " KEY=" in a one-line record, up to the next space ("" when absent).
std::string field(std::string_view line, std::string_view key) {
  for (std::size_t at = 0; (at = line.find(key, at)) != std::string_view::npos; at += key.size()) {
    if (at != 0 && line[at - 1] != ' ') continue;
    if (at + key.size() >= line.size() || line[at + key.size()] != '=') continue;
    const auto start = at + key.size() + 1;
    const auto end = line.find(' ', start);
    return std::string(line.substr(start, end == std::string_view::npos ? end : end - start));
  }
  return {};
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r'))
    s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return std::string(s);
}

program::Options with_timeout(std::chrono::milliseconds timeout) {
  program::Options o;
  o.timeout = timeout;
  return o;
}

// The last update asked (its "state=" argument) and whether scontrol has returned: read by a
// watchdog's thread, hence atomics holding pointers to literals.
std::atomic<const char*> g_update_state{nullptr};
std::atomic<bool> g_update_returned{false};

Result<void> update(const Scontrol& s, std::vector<std::string> argv, const std::string& node) {
  g_update_returned = false;
  g_update_state = argv.size() > 3 && argv[3] == "state=drain" ? "state=drain" : "state=resume";
  struct Returned {
    ~Returned() { g_update_returned = true; }
  } returned;
  auto r = program::run(argv, with_timeout(s.timeout));
  if (!r) return fail(r.error().message() + " (is Slurm installed on this node?)");
  if (r->exit_code != 0 || r->timed_out)
    return fail(r->failure("scontrol update nodename=" + node));
  return {};
}

}  // namespace

std::string update_progress() {
  const char* state = g_update_state;
  if (state == nullptr) return {};
  return std::string(state) + (g_update_returned ? ": scontrol returned" : ": under way");
}

std::string watchdog_message(std::int64_t limit_ns) {
  const auto within = text::human_duration(static_cast<double>(limit_ns) / 1e9);
  const char* state = g_update_state;
  if (state == nullptr)
    return fmt::format("dltune slurm health: no verdict within {}: the node is left as it is\n",
                       within);
  if (g_update_returned)
    return fmt::format(
        "dltune slurm health: no verdict within {}; scontrol update {} had returned before: see "
        "`scontrol show node` for the node's state\n",
        within, state);
  return fmt::format(
      "dltune slurm health: no verdict within {}, while scontrol update {} was under way: it may "
      "still take effect; see `scontrol show node` for the node's state\n",
      within, state);
}

bool NodeState::drain() const {
  return std::find(flags.begin(), flags.end(), "DRAIN") != flags.end() || base == "DRAIN" ||
         base == "DRAINED" || base == "DRAINING";
}

bool NodeState::down() const {
  return base == "DOWN" || std::find(flags.begin(), flags.end(), "NOT_RESPONDING") != flags.end();
}

Result<NodeState> parse_show_node(std::string_view text) {
  const auto newline = text.find('\n');
  std::string_view line = text.substr(0, newline);
  NodeState node;
  node.name = field(line, "NodeName");
  node.state = field(line, "State");
  if (node.name.empty() || node.state.empty())
    return fail("not a node record of `scontrol -o show node` (no NodeName or State)",
                trimmed(line.substr(0, 80)));
  node.host_name = field(line, "NodeHostName");
  const auto plus = node.state.find('+');
  node.base = node.state.substr(0, plus);
  for (auto at = plus; at != std::string::npos;) {
    const auto next = node.state.find('+', at + 1);
    node.flags.push_back(
        node.state.substr(at + 1, next == std::string::npos ? next : next - at - 1));
    at = next;
  }
  // The reason, then " [USER@TIME]" (who set it and when), then on newer Slurm more fields
  // ("Comment=", "Extra="): the reason ends at the first such stamp, else at the first of those
  // fields, else at the end of the line.
  const auto at = line.find(" Reason=");
  if (at != std::string_view::npos) {
    const auto rest = line.substr(at + 8);
    std::size_t end = rest.size();
    for (std::size_t open = rest.find(" ["); open != std::string_view::npos;
         open = rest.find(" [", open + 1)) {
      const auto close = rest.find(']', open);
      const auto sign = rest.find('@', open);
      if (close == std::string_view::npos || sign == std::string_view::npos || sign > close)
        continue;
      const auto stamp = rest.substr(open + 2, close - open - 2);
      if (stamp.find(' ') != std::string_view::npos || sign == open + 2) continue;
      end = open;
      node.reason_by = std::string(rest.substr(open + 2, sign - open - 2));
      node.reason_at = std::string(rest.substr(sign + 1, close - sign - 1));
      break;
    }
    if (end == rest.size())
      for (std::string_view next : {" Comment=", " Extra=", " ResumeAfterTime="})
        end = std::min(end,
                       rest.find(next) == std::string_view::npos ? rest.size() : rest.find(next));
    const std::string reason = trimmed(rest.substr(0, end));
    if (reason != "(null)" && reason != "none") node.reason = reason;
  }
  return node;
}

bool drained_by_dltune(const NodeState& node) {
  return node.drain() && node.reason.rfind(kReasonPrefix, 0) == 0;
}

Result<NodeState> Scontrol::show_node(const std::string& name) const {
  auto r = program::run({"scontrol", "-o", "show", "node", name}, with_timeout(timeout));
  if (!r) return fail(r.error().message() + " (is Slurm installed on this node?)");
  if (r->exit_code != 0 || r->timed_out) return fail(r->failure("scontrol show node " + name));
  auto node = parse_show_node(r->out);
  if (!node) return tl::unexpected(node.error());
  if (node->name != name)
    return fail("scontrol answered for node " + node->name + ", not for " + name);
  return node;
}

Result<void> Scontrol::drain(const std::string& name, const std::string& reason) const {
  return update(
      *this, {"scontrol", "update", "nodename=" + name, "state=drain", "reason=" + reason}, name);
}

Result<void> Scontrol::resume(const std::string& name) const {
  return update(*this, {"scontrol", "update", "nodename=" + name, "state=resume"}, name);
}

}  // namespace dltune::slurm

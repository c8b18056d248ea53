// The plan and the journal's transactions as text and JSON (schemas in docs/json.md).
#include "tune/render.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/time_format.hpp"

namespace dltune::tune {

using inventory::Json;

Json to_json(const Plan& plan) {
  Json items = Json::array();
  for (const auto& i : plan.items) {
    Json changes = Json::array();
    for (const auto& c : i.changes) {
      Json x{{"key", c.key},
             {"kind", c.kind},
             {"target", c.target},
             {"new", c.new_value},
             {"implied", c.implied}};
      if (c.old_value) x["old"] = *c.old_value;
      changes.push_back(std::move(x));
    }
    items.push_back(Json{{"key", i.key},
                         {"status", status_name(i.status)},
                         {"summary", i.summary},
                         {"reason", i.reason},
                         {"origin", i.origin},
                         {"changes", std::move(changes)},
                         {"notes", i.notes}});
  }
  return Json{{"schema", "dltune.tune.plan/1"},
              {"profile", plan.profile},
              {"persist", plan.persist},
              {"items", std::move(items)}};
}

std::string render_text(const Plan& plan) {
  std::string out = fmt::format("dltune tune: profile {}{}\n\n", plan.profile,
                                plan.persist ? ", persistent"
                                             : ", live only (add --persist to "
                                               "keep it across reboots)");
  // Where each setting comes from, when the profile is made of more than one (includes, --set).
  bool mixed = plan.chain.size() > 1;
  for (const auto& i : plan.items) mixed = mixed || i.origin != plan.items.front().origin;
  int n = 0;
  for (const auto& i : plan.items) {
    out += fmt::format("  {:<14}  {:<28}  {}\n", status_name(i.status), i.key, i.summary);
    if (mixed && !i.origin.empty()) out += fmt::format("{:18}from {}\n", "", i.origin);
    if (i.status == PlanItem::Status::kChange) {
      for (const auto& c : i.changes) {
        ++n;
        if (c.kind == "file")
          out += fmt::format("{:18}{} {}\n", "", c.old_value ? "rewrite" : "create", c.target);
        else if (c.implied)
          out += fmt::format("{:18}{}: {} (changed by the kernel; restored on rollback)\n", "",
                             c.target, c.old_value.value_or("?"));
      }
    }
    for (const auto& note : i.notes) out += fmt::format("{:18}note: {}\n", "", note);
  }
  out += fmt::format("\n{} change(s)\n", n);
  return out;
}

Json to_json(const TxRecord& t) {
  Json changes = Json::array();
  for (const auto& c : t.changes) {
    Json x{{"seq", c.seq},
           {"key", c.key},
           {"kind", c.kind},
           {"target", c.target},
           {"new", c.kind == "file" ? std::string("(file content)") : c.new_value},
           {"state", change_state_name(c.state)},
           {"changed_at", c.changed_at}};
    if (c.old_value) x["old"] = c.kind == "file" ? std::string("(file content)") : *c.old_value;
    if (c.backup) x["backup"] = *c.backup;
    changes.push_back(std::move(x));
  }
  Json j{{"id", t.id},
         {"command", t.command},
         {"profile", t.profile},
         {"state", tx_state_name(t.state)},
         {"started_at", t.started_at},
         {"changes", std::move(changes)}};
  if (t.finished_at) j["finished_at"] = *t.finished_at;
  if (t.error) j["error"] = *t.error;
  return j;
}

namespace {

std::string when(std::int64_t t) {
  return text::format_time(t, "%Y-%m-%d %H:%M:%S", text::TimeZone::kUtc);
}

}  // namespace

bool JournalStatus::clean() const {
  return pending.empty() && drift.empty() &&
         std::none_of(history.begin(), history.end(), [](const auto& t) { return incomplete(t); });
}

Result<JournalStatus> read_status(const host::Root& root, Journal& journal) {
  auto history = journal.history();
  if (!history) return tl::unexpected(history.error());
  auto pending = journal.pending();
  if (!pending) return tl::unexpected(pending.error());
  JournalStatus s;
  s.drift = find_drift(root, *history);
  s.history = std::move(*history);
  s.pending = std::move(*pending);
  s.boot = boot_readers(root);
  return s;
}

Json to_json(const JournalStatus& s, const std::string& state_dir) {
  Json applied = Json::array(), unfinished = Json::array(), drifted = Json::array(),
       incomplete_ones = Json::array();
  for (const auto& t : s.history) {
    if (t.state == TxState::kApplied) applied.push_back(to_json(t));
    if (incomplete(t)) incomplete_ones.push_back(to_json(t));
  }
  for (const auto& t : s.pending) unfinished.push_back(to_json(t));
  for (const auto& d : s.drift)
    drifted.push_back(Json{{"key", d.key},
                           {"target", d.target},
                           {"expected", d.expected},
                           {"actual", d.actual},
                           {"tx", d.tx}});
  return Json{
      {"schema", "dltune.tune.status/1"}, {"state_dir", state_dir},        {"applied", applied},
      {"unfinished", unfinished},         {"incomplete", incomplete_ones}, {"drift", drifted},
      {"boot", to_json(s.boot)}};
}

std::string render_text(const JournalStatus& s) {
  std::string out;
  for (const auto& t : s.pending)
    out += fmt::format(
        "UNFINISHED  transaction {} ({}, started {}): {} change(s) journaled; run "
        "`dltune tune rollback {}`\n",
        t.id, t.command, when(t.started_at), t.changes.size(), t.id);
  for (const auto& t : s.history)
    if (incomplete(t))
      out += fmt::format(
          "INCOMPLETE  transaction {} ({}, started {}) failed and was not fully rolled back: "
          "run `dltune tune rollback {}` once the cause is fixed\n",
          t.id, t.command, when(t.started_at), t.id);
  int applied = 0;
  for (const auto& t : s.history) {
    if (t.state != TxState::kApplied) continue;
    ++applied;
    out += fmt::format("applied     transaction {} ({}, {}): {} change(s)\n", t.id, t.command,
                       when(t.started_at), t.changes.size());
  }
  for (const auto& d : s.drift)
    out += fmt::format("drift       {}: transaction {} wrote {}, now {} ({})\n", d.key, d.tx,
                       d.expected, d.actual, d.target);
  if (applied == 0 && s.pending.empty()) out += "no applied transactions\n";
  return out + render_text(s.boot);
}

Json history_json(const std::vector<TxRecord>& history) {
  Json all = Json::array();
  for (const auto& t : history) all.push_back(to_json(t));
  return Json{{"schema", "dltune.tune.history/1"}, {"transactions", all}};
}

std::string render_history(const std::vector<TxRecord>& history) {
  std::string out;
  for (const auto& t : history) {
    out += fmt::format("transaction {}  {}  {}  {}\n", t.id, tx_state_name(t.state),
                       when(t.started_at), t.command);
    if (t.error) out += fmt::format("    error: {}\n", *t.error);
    for (const auto& c : t.changes)
      out += fmt::format("    {:>3} {:<10} {:<28} {} -> {}  [{}]\n", c.seq, c.kind, c.key,
                         c.kind == "file" ? (c.old_value ? "(old file)" : "(none)")
                                          : c.old_value.value_or("(none)"),
                         c.kind == "file" ? "(new file)" : c.new_value, change_state_name(c.state));
  }
  if (history.empty()) out += "no transactions\n";
  return out;
}

std::optional<std::string> unfinished_refusal(Journal& journal) {
  auto pending = journal.pending();
  if (!pending || pending->empty()) return std::nullopt;
  return fmt::format(
      "transaction {} was left unfinished (a crash?): run `dltune tune rollback {}` first; "
      "nothing was changed",
      pending->front().id, pending->front().id);
}

std::vector<std::string> unfinished_warnings(const std::string& state_dir) {
  std::vector<std::string> out;
  if (::access((state_dir + "/state.db").c_str(), F_OK) != 0) return out;
  auto journal = Journal::open_read_only(state_dir);
  if (!journal) return out;
  auto pending = (*journal)->pending();
  if (!pending) return out;
  for (const auto& t : *pending)
    out.push_back(fmt::format(
        "tune transaction {} ({}) was left unfinished: the host may be half-changed; run "
        "`dltune tune rollback {}`",
        t.id, t.command, t.id));
  return out;
}

std::int64_t rollback_target(Journal& journal) {
  if (auto pending = journal.pending(); pending && !pending->empty()) return pending->front().id;
  if (auto history = journal.history())
    for (const auto& t : *history)
      if (needs_rollback(t)) return t.id;
  return 0;
}

Json to_json(const ApplyResult& r) {
  return Json{{"tx", r.tx}, {"changed", r.changed}};
}

std::string render_text(const ApplyResult& r) {
  return fmt::format(
      "transaction {}: {} change(s) applied and verified; undo with `dltune tune rollback {}`",
      r.tx, r.changed, r.tx);
}

Json to_json(const RollbackResult& r) {
  return Json{{"tx", r.tx}, {"restored", r.restored}, {"problems", r.problems}};
}

std::string render_text(const RollbackResult& r) {
  return fmt::format("transaction {}: {} value(s) restored{}", r.tx, r.restored,
                     r.problems.empty() ? "" : fmt::format(", {} could not be", r.problems.size()));
}

std::vector<std::string> problem_lines(const RollbackResult& r) {
  std::vector<std::string> lines;
  for (const auto& p : r.problems) lines.push_back("rollback: " + p);
  if (!r.problems.empty())
    lines.push_back(fmt::format(
        "rollback: transaction {} is not wholly rolled back; once the cause is fixed, run "
        "`dltune tune rollback` again (`dltune tune status` shows what is left)",
        r.tx));
  return lines;
}

}  // namespace dltune::tune

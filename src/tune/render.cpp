// The plan and the journal's transactions as text and JSON (schemas in docs/json.md).
#include "tune/render.hpp"

#include <fmt/format.h>

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
  int n = 0;
  for (const auto& i : plan.items) {
    out += fmt::format("  {:<14}  {:<28}  {}\n", status_name(i.status), i.key, i.summary);
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

}  // namespace dltune::tune

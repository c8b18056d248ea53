#pragma once
// How tune's plan and journal are shown: text for people, JSON for scripts (the schemas
// dltune.tune.plan/1 and the history's transactions, docs/json.md).
#include <string>

#include "inventory/json.hpp"
#include "tune/journal.hpp"
#include "tune/plan.hpp"

namespace dltune::tune {

[[nodiscard]] inventory::Json to_json(const Plan& plan);
[[nodiscard]] std::string render_text(const Plan& plan);
[[nodiscard]] inventory::Json to_json(const TxRecord& t);

}  // namespace dltune::tune

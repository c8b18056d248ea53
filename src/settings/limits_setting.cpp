// The resource limits new logins get (limits.nofile, limits.memlock): only persistent, through
// dltune's limits.d drop-in; `dltune run` gives a job its limits directly.
#include <fmt/format.h>

#include "settings/catalog.hpp"

namespace dltune::settings {

Result<void> plan_limits(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const std::string name = e.key.substr(std::string_view("limits.").size());
  const auto want = e.expected.values.empty() ? std::string() : e.expected.values.front();
  if (!context.persist) {
    item.status = PlanItem::Status::kNotTunable;
    item.summary =
        "limits are set for new logins: use --persist (limits.d), or start jobs with `dltune run`";
    return {};
  }
  context.persisted.limits[name] = want;
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} soft and hard {} for new logins", name, want);
  item.notes.push_back(
      "a running process keeps its limits: log in again (or restart the service) to get them");
  return {};
}

}  // namespace dltune::settings

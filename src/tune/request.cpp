#include "tune/request.hpp"

#include <unistd.h>

#include <cerrno>

#include <fmt/core.h>

#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/data_paths.hpp"
#include "tune/render.hpp"

namespace dltune::tune {

std::string PlanRequest::command_line() const {
  std::string command = "tune apply -p " + profile;
  for (const auto& s : sets) command += " --set " + s;
  for (const auto& o : only) command += " --only " + o;
  for (const auto& d : data) command += " --data " + d;
  if (cgroups) command += " --cgroups";
  if (persist) command += " --persist";
  return command;
}

Outcome<Plan> plan_for(const host::Root& root, const PlanRequest& request) {
  auto profile = settings::load_profile(request.profile, root, settings::validate_key);
  if (!profile) return refused("profile: " + profile.error().message());
  if (auto set = settings::apply_sets(*profile, request.sets,
                                      settings::set_key_validator(root, settings::validate_key));
      !set)
    return refused(set.error());
  if (auto ok = settings::check_data_option(root, request.data); !ok) return refused(ok.error());
  const auto facts = inventory::collect(root, request.collect);
  auto plan = make_plan(root, facts, *profile, request.only, request.persist,
                        PlanOptions{request.data, request.cgroups});
  // A value that cannot be read (errno) is a failure of the host, not bad input.
  if (!plan) return tl::unexpected(Failure{plan.error().errno_ == 0, plan.error()});
  return std::move(*plan);
}

Result<std::unique_ptr<Journal>> journal_to_read(
    const std::string& state_dir, const std::function<void(const std::string&)>& notice) {
  if (::access(state_dir.c_str(), F_OK) != 0 && errno == ENOENT && notice)
    notice(
        fmt::format("no journal in {} yet: nothing was applied with this --state-dir", state_dir));
  return Journal::open_read_only(state_dir);
}

Result<std::unique_ptr<Journal>> journal_for_apply(const std::string& state_dir) {
  auto journal = Journal::open(state_dir);
  if (!journal) return tl::unexpected(journal.error());
  if (auto refusal = unfinished_refusal(**journal)) return fail(*refusal);
  return journal;
}

Outcome<RollbackResult> rollback(const host::Root& root, const std::string& state_dir,
                                 std::int64_t tx) {
  auto journal = Journal::open(state_dir);
  if (!journal) return tl::unexpected(Failure{false, journal.error()});
  if (tx == 0) tx = rollback_target(**journal);
  if (tx == 0) return refused("no transaction to roll back");
  auto r = rollback_tx(root, **journal, tx);
  if (!r) return refused(r.error());
  return std::move(*r);
}

}  // namespace dltune::tune

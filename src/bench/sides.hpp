#pragma once
// The two sides of `dltune bench`: a profile (or the host as it is), optionally only
// some of its settings, and options for `dltune run`. What the host would be under each side is
// compared before anything runs: identical sides are refused.
#include <optional>
#include <string>
#include <vector>

#include "launch/run_job.hpp"
#include "tune/plan.hpp"

namespace dltune::bench {

struct Side {
  std::string profile;                // empty: the host as it is (nothing applied) or `sets`
  std::vector<std::string> sets;      // --set-a/--set-b KEY=VALUE: over the profile, or alone
  std::vector<std::string> only;      // tune's --only: just these settings of the profile
  std::vector<std::string> run_args;  // options for `dltune run` ("--cpu-quota=0.5")
  std::optional<tune::Plan> plan;     // made from the host before the first run
  launch::RunRequest run;             // the job as this side runs it (run_args parsed)

  // For people: "current host", "training --only vm.swappiness", "current host, run
  // --cpu-quota=0.5", "--set thp.enabled=never", "training --set vm.swappiness=60".
  [[nodiscard]] std::string label() const;
  // Whether the side changes settings (a profile or --set values).
  [[nodiscard]] bool changes_settings() const { return !profile.empty() || !sets.empty(); }
};

// Plans `side` against the host as it is: its run request once (so that a value run would refuse,
// --memory=lots, is refused before anything is changed) and its profile's changes (Side::plan;
// `data` as tune's --data). Errors name the side ("-b training: ...", "B's run options: ...").
[[nodiscard]] Result<void> plan_side(const host::Root& root, const inventory::HostFacts& facts,
                                     char name, Side& side, const std::vector<std::string>& data);

// The refusal when A and B would run the job under the same settings on this host; nullopt when
// they differ in a setting or a run option.
[[nodiscard]] std::optional<std::string> same_sides(const Side& a, const Side& b);

// A setting whose value differs between the sides: under A and under B (the value now where a
// side does not change it).
struct SettingDifference {
  std::string key, target, a, b;
  std::string from_a, from_b;  // the profile (or --set) each side's value comes from; empty: now
};

// Every target either plan would change, with its value under each side; only those that differ.
[[nodiscard]] std::vector<SettingDifference> differences(const Side& a, const Side& b);

// Run options only one side has (or in another order): "--cpu-quota=0.5 (B)".
[[nodiscard]] std::vector<std::string> run_differences(const Side& a, const Side& b);

}  // namespace dltune::bench

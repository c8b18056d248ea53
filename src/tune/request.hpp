#pragma once
// `dltune tune` as library calls: the requests its subcommands make, checked and carried out.
// cli parses options into these, calls one function and prints the result.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "tune/journal.hpp"
#include "tune/plan.hpp"
#include "tune/transaction.hpp"

namespace dltune::tune {

struct PlanRequest {
  std::string profile = "training";  // a name or a file
  std::vector<std::string> only;     // setting ids; empty: all
  std::vector<std::string> sets;     // --set KEY=VALUE: over the profile (origin "--set")
  std::vector<std::string> data;     // absolute paths that hold training data
  bool persist = false;
  bool cgroups = false;
  inventory::CollectOptions collect;
  // What the journal keeps of the command: "tune apply -p training --only vm.swappiness".
  [[nodiscard]] std::string command_line() const;
};

// Why a request was not carried out: bad input (nothing was read or changed) or a failure of the
// host (a value that cannot be read, a journal that cannot be opened).
template <class T>
using Outcome = tl::expected<T, Failure>;

// Loads the profile, checks the data paths, reads the host through `root` and makes the plan.
[[nodiscard]] Outcome<Plan> plan_for(const host::Root& root, const PlanRequest& request);

// The journal an apply writes to: opened for writing, refused while a transaction a crash left
// unfinished is there (the host may be half-changed; `tune rollback` first).
[[nodiscard]] Result<std::unique_ptr<Journal>> journal_for_apply(const std::string& state_dir);
// The journal `tune status` and `history` read: opened read-only (an absent database reads as
// nothing applied, which `notice` is told when the state directory itself is missing); a file or
// another program's database is an error naming it.
[[nodiscard]] Result<std::unique_ptr<Journal>> journal_to_read(
    const std::string& state_dir, const std::function<void(const std::string&)>& notice);

// Rolls back transaction `tx`, or with 0 the one `tune rollback` undoes by default; nothing to
// roll back is bad input.
[[nodiscard]] Outcome<RollbackResult> rollback(const host::Root& root, const std::string& state_dir,
                                               std::int64_t tx);

}  // namespace dltune::tune

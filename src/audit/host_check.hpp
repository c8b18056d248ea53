#pragma once
// A host judged against a profile, from the profile's name to the report: the one sequence that
// `check`, Slurm's health check and a recording share (the profile loaded with its --set values
// over it, the host's facts collected, every entry judged).
#include <string>
#include <vector>

#include "audit/check.hpp"
#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::audit {

struct HostCheckRequest {
  std::string profile = "training";  // a built-in name, /etc/dltune/profiles/NAME or a file
  std::vector<std::string> sets;     // KEY=VALUE over the profile (--set)
  inventory::CollectOptions collect;
  CheckOptions options;
};

struct HostCheck {
  inventory::HostFacts facts;
  CheckReport report;
};

// Errors: the profile's ("profile: ..." when it cannot be loaded; a --set value's own message),
// then run_check's (an --only or --skip id the profile does not have). Nothing is collected
// before the profile has loaded.
[[nodiscard]] Result<HostCheck> check_host(const host::Root& root, const HostCheckRequest& request);

}  // namespace dltune::audit

#pragma once
// The audit: every entry of a profile judged against a host's facts (docs/architecture.md `check`).
#include <string>
#include <vector>

#include "audit/finding.hpp"
#include "core/error.hpp"
#include "inventory/host_facts.hpp"
#include "settings/profile.hpp"

namespace dltune::audit {

struct CheckOptions {
  std::vector<std::string> only;        // judge only these ids
  std::vector<std::string> skip;        // leave these out
  std::vector<std::string> data_paths;  // mount.noatime: where the data lives
  // How `tune -p` names the profile (the name or file the user gave; default: its name): every
  // `dltune tune apply` a finding prints carries it, so that it runs as printed.
  std::string profile_arg;
};

struct CheckReport {
  std::string profile;
  std::vector<std::string> chain;
  std::vector<Finding> findings;  // in profile order
  int ok = 0, info = 0, warn = 0, critical = 0, not_applicable = 0;
};

// Fails (bad input) when --only or --skip names an id the profile does not have.
[[nodiscard]] Result<CheckReport> run_check(const inventory::HostFacts& facts,
                                            const host::Root& root,
                                            const settings::Profile& profile,
                                            const CheckOptions& options);

// 0 nothing above info, 1 warnings, 2 a critical finding.
[[nodiscard]] int exit_code(const CheckReport& r);

[[nodiscard]] inventory::Json to_json(const CheckReport& r, const inventory::HostFacts& facts);
// How the text report looks: every finding's evidence and reason (`verbose`), the width to wrap
// reasons at, and severities in colour (for a terminal that wants it).
struct TextStyle {
  bool verbose = false;
  std::size_t width = 100;
  bool color = false;
};
[[nodiscard]] std::string render_text(const CheckReport& r, const TextStyle& style);

}  // namespace dltune::audit

#pragma once
// The audit: every entry of a profile judged against a host's facts (docs/architecture.md `check`).
#include <string>
#include <string_view>
#include <vector>

#include "audit/finding.hpp"
#include "core/error.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "settings/profile.hpp"

namespace dltune::audit {

struct CheckOptions {
  std::vector<std::string> only;        // judge only these ids
  std::vector<std::string> skip;        // leave these out
  std::vector<std::string> data_paths;  // mount.noatime: where the data lives
  // How `tune -p` names the profile (the name or file the user gave; default: its name): every
  // `dltune tune apply` a finding prints carries it, so that it runs as printed.
  std::string profile_arg;
  // --baseline: the hardware baseline file to judge the host against (audit/baseline.hpp),
  // instead of the profile's own `baseline`.
  std::optional<std::string> baseline;
};

struct CheckReport {
  std::string profile;
  std::vector<std::string> chain;
  std::vector<Finding> findings;  // in profile order
  int ok = 0, info = 0, warn = 0, critical = 0, not_applicable = 0;
  int unknown = 0;  // applicable findings that could not be judged (counted in their severity too)
};

// Fails (bad input) when --only or --skip names an id the profile does not have.
[[nodiscard]] Result<CheckReport> run_check(const inventory::HostFacts& facts,
                                            const host::Root& root,
                                            const settings::Profile& profile,
                                            const CheckOptions& options);

// 0 nothing above info, 1 warnings, 2 a critical finding.
[[nodiscard]] int exit_code(const CheckReport& r);

// The applicable findings at or above `at_least`, in profile order: what a node's health
// judgement counts (Slurm's health check, node-problem-detector's plugin).
[[nodiscard]] std::vector<Finding> failing(const CheckReport& r, settings::Severity at_least);

// The applicable findings that could not be judged and whose setting the profile rates at or
// above `at_least` when it is not met: what a node's health judgement cannot call healthy.
[[nodiscard]] std::vector<Finding> unknown(const CheckReport& r, settings::Severity at_least);

// One line for a scheduler: `prefix`, the first finding's id and summary, then the others' ids,
// at most `max` characters ("dltune: shm.size: /dev/shm is 64 MiB, expected at least 1 GiB; +2:
// gpu.ecc, limits.nofile"; ids that do not fit are counted: "+5: gpu.ecc, 4 more"). Empty for no
// finding.
[[nodiscard]] std::string short_reason(const std::vector<Finding>& failing, std::string_view prefix,
                                       std::size_t max);

// node-problem-detector's custom plugin protocol (deploy/kubernetes/node-problem-detector/):
// exit 0 OK, 1 a problem, 2 unknown, and one line of message on stdout, at most
// kNpdMessageMax characters (the plugin's max_output_length). What could not be judged is never
// reported healthy: NPD's "unknown".
struct NpdVerdict {
  int exit_code = 0;
  std::string message;  // without its newline
};
inline constexpr std::size_t kNpdMessageMax = 200;
[[nodiscard]] NpdVerdict npd_verdict(const CheckReport& r, settings::Severity at_least);
// Why the host could not be judged at all, as the plugin's message (exit 2).
[[nodiscard]] NpdVerdict npd_cannot_judge(const std::string& why);

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

#pragma once
// The node health check Slurm runs (slurm.conf HealthCheckProgram, as LBNL's NHC): check's
// findings at or above a severity drain the node with a short reason naming them; a node that
// is healthy again is resumed only when dltune drained it (its reason starts "dltune: "), never a
// node an admin drained. Nothing is changed when the node cannot be judged.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "audit/check.hpp"
#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "settings/finding.hpp"
#include "slurm/node.hpp"

namespace dltune::slurm {

struct HealthRequest {
  std::string node;  // Slurm's NodeName; empty: SLURMD_NODENAME, else this host's short name
  std::string profile = "training";
  std::vector<std::string> only, skip;  // check's --only and --skip
  std::optional<std::string> baseline;  // check's --baseline: the hardware baseline file
  settings::Severity drain_on = settings::Severity::kCritical;
  bool dry_run = false;  // judge and say what would be done; change nothing
  Scontrol scontrol;
};

enum class HealthAction {
  kNone,            // healthy and not drained, or unhealthy and drained already for these reasons
  kDrain,           // unhealthy: drained with the reason
  kUpdateReason,    // unhealthy and drained by dltune for other findings: the reason is updated
  kResume,          // healthy again and drained by dltune: resumed
  kKeepAdminDrain,  // drained by someone else: left alone, healthy or not
  // Drained by dltune, nothing fails now, but an id its reason names could not be judged (NVML
  // did not answer for gpu.ecc): kept drained, the reason saying so.
  kKeepUnknown,
};
[[nodiscard]] const char* action_name(HealthAction a);  // "none", "drain", ...

// What to do, from the node's state and the judgement (pure). `unknown_reason`: not empty when
// an id of the node's drain reason could not be judged (unknown_for_reason), the reason to keep.
[[nodiscard]] HealthAction decide(const NodeState& node, bool healthy, const std::string& reason,
                                  const std::string& unknown_reason = {});

// The ids a drain reason of ours names ("dltune: gpu.ecc: ...; +2: gpu.nvlink, 1 more" gives
// gpu.ecc and gpu.nvlink), and whether it left some out ("1 more").
struct ReasonIds {
  std::vector<std::string> ids;
  bool truncated = false;
};
[[nodiscard]] ReasonIds reason_ids(const std::string& reason);
// The unknown findings that keep a node drained for `reason`: those with an id it names, or,
// when it left ids out, every one rated at or above `drain_on`.
[[nodiscard]] std::vector<settings::Finding> unknown_for_reason(const audit::CheckReport& check,
                                                                const std::string& reason,
                                                                settings::Severity drain_on);

// "dltune: shm.size: /dev/shm is 64 MiB, expected at least 1 GiB; +2: gpu.ecc, limits.nofile":
// the first finding's id and summary, then the others' ids, at most `max` characters (ids that
// do not fit are counted: "+5: gpu.ecc, 4 more").
[[nodiscard]] std::string drain_reason(const std::vector<settings::Finding>& failing,
                                       std::size_t max = 200);

struct HealthReport {
  std::string node;
  std::string host;  // this host's short name
  NodeState before;
  std::string profile;
  std::string drain_on;                    // "critical"
  std::vector<settings::Finding> failing;  // findings at or above drain_on
  // Unknown findings for ids of the drain reason (only when dltune drained the node).
  std::vector<settings::Finding> unknown;
  std::string reason;  // the drain reason when unhealthy, or when kept drained for unknown ids
  HealthAction action = HealthAction::kNone;
  bool dry_run = false;
  [[nodiscard]] bool healthy() const { return failing.empty(); }
  // 0 healthy, 1 unhealthy (drained, or drained already) or kept drained while unknown.
  [[nodiscard]] int exit_code() const { return healthy() && unknown.empty() ? 0 : 1; }
};

// The facts the check needs: this host, `root` (the live one in production).
struct HealthContext {
  const host::Root& root;
  inventory::CollectOptions collect;
  std::string this_host;        // short host name (gethostname up to the first '.')
  std::string slurmd_nodename;  // $SLURMD_NODENAME, as slurmd sets it for the health program
};

// Judges the node and acts. Errors (nothing changed): a profile that does not load, an unknown
// id, scontrol missing or failing, a node Slurm does not know or that runs on another host, a
// drain or resume that scontrol refused.
[[nodiscard]] Result<HealthReport> health_check(const HealthRequest& request,
                                                const HealthContext& context);
// The same under a watchdog: past `timeout_ns` the process says watchdog_message on stderr and
// exits with `exit_status` (slurmd's health program must not hang on a stuck NVML or mount).
[[nodiscard]] Result<HealthReport> health_check_within(const HealthRequest& request,
                                                       const HealthContext& context,
                                                       std::int64_t timeout_ns, int exit_status);

[[nodiscard]] inventory::Json to_json(const HealthReport& r);
[[nodiscard]] std::string render_text(const HealthReport& r);

}  // namespace dltune::slurm

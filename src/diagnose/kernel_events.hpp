#pragma once
// What a kernel log line means for a training host, for `dltune doctor`: pure
// classifiers of one message's text (the part after the timestamp and facility), whichever source
// it came from (/dev/kmsg, the journal, kern.log). Groundwork: the sources, --since/--follow and
// the command itself come next.
//
// Each form is the kernel's (or the NVIDIA driver's) own printk format, named at its parser in
// kernel_events.cpp; the unit tests hold real lines with their sources. Matching is by fixed
// strings, never regular expressions: doctor must scan a large log at grep's speed.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::diagnose {

enum class Severity { kInfo, kWarning, kCritical };
[[nodiscard]] const char* severity_name(Severity s);  // "info", "warning", "critical"

// One Xid code's meaning (knowledge/xid.toml).
struct XidInfo {
  int code = 0;
  std::string name, meaning, action, source;
  Severity severity = Severity::kWarning;
};
struct XidTable {
  std::vector<XidInfo> codes;  // by code
  [[nodiscard]] const XidInfo* find(int code) const;
};
[[nodiscard]] Result<XidTable> parse_xid_table(std::string_view toml_text, std::string_view name);
[[nodiscard]] const Result<XidTable>& builtin_xid_table();

struct KernelEvent {
  std::string kind;  // oom_kill, xid, gpu_lost, aer, pcie_link, hung_task, soft_lockup,
                     // segfault, general_protection, page_alloc_failure, fs_error, nvme_timeout,
                     // driver_mismatch, gpu_probe_failed, gpu_init_failed, nouveau_bound,
                     // memory_error, machine_check, sxid
  Severity severity = Severity::kWarning;
  std::string explanation;  // plain words
  std::string action;       // what to do
  // What the line named: pid, task, device, pci, xid, cgroup, order, mc, dimm, cpu, bank, sxid,
  // link, ...
  std::map<std::string, std::string> fields;
};

// The event a message's text is, or nullopt for a line that is none of the kinds above.
[[nodiscard]] std::optional<KernelEvent> classify(std::string_view text, const XidTable& xids);

}  // namespace dltune::diagnose

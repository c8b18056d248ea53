// Kernel log lines → events (diagnose/kernel_events.hpp). Each parser names the printk format it
// reads; a line that does not have the form exactly is no event (never a guess).
#include "diagnose/kernel_events.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/embedded.hpp"
#include "host/parse/kmsg.hpp"

namespace dltune::diagnose {

namespace {

using std::string_view;

std::optional<string_view> after(string_view text, string_view marker) {
  const auto at = text.find(marker);
  if (at == string_view::npos) return std::nullopt;
  return text.substr(at + marker.size());
}

// The leading digits of `s` as a number (nullopt without any).
std::optional<long long> leading_number(string_view s) {
  long long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr == s.data()) return std::nullopt;
  return v;
}

string_view until(string_view s, string_view stop) {
  const auto at = s.find(stop);
  return at == string_view::npos ? s : s.substr(0, at);
}

string_view trim(string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

// What a task name says about a training job (torch 2.2+ names DataLoader workers
// "pt_data_worker": torch/utils/data/_utils/worker.py).
std::string who(string_view task) {
  if (task == "pt_data_worker") return "a DataLoader worker";
  if (task.starts_with("python") || task.starts_with("pt_main_thread"))
    return "a Python process (a training job's main process or an older torch's DataLoader "
           "worker)";
  return "";
}

KernelEvent event(const char* kind, Severity s, std::string explanation, std::string action) {
  KernelEvent e;
  e.kind = kind;
  e.severity = s;
  e.explanation = std::move(explanation);
  e.action = std::move(action);
  return e;
}

// mm/oom_kill.c __oom_kill_process: "%s: Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB,
// file-rss:%lukB, shmem-rss:%lukB, UID:%u pgtables:%lukB oom_score_adj:%hd", the prefix "Out of
// memory" or "Memory cgroup out of memory" (Linux 5.3+; older kernels print "Killed process %d
// (%s) total-vm:..." on a line of its own).
std::optional<KernelEvent> oom_kill(string_view text) {
  const auto rest = after(text, "Killed process ");
  if (!rest) return std::nullopt;
  const auto pid = leading_number(*rest);
  const auto open = rest->find(" (");
  const auto close = rest->find(") ");
  if (!pid || open == string_view::npos || close == string_view::npos || close < open)
    return std::nullopt;
  const auto task = rest->substr(open + 2, close - open - 2);
  const bool memcg = text.find("Memory cgroup out of memory") != string_view::npos;
  const auto anon = after(*rest, "anon-rss:");
  const std::string role = who(task);
  auto e = event(
      "oom_kill", Severity::kCritical,
      fmt::format("The kernel killed process {} ({}){} because {} ran out of memory{}.", *pid, task,
                  role.empty() ? "" : ", " + role,
                  memcg ? "its memory cgroup (the job's limit)" : "the machine",
                  anon ? fmt::format(" (it held {} of anonymous memory)", until(*anon, ",")) : ""),
      memcg ? "Raise the job's memory limit (dltune run --memory), or need less: fewer DataLoader "
              "workers, a smaller batch or prefetch_factor."
            : "Need less memory (fewer DataLoader workers, a smaller batch or prefetch_factor), "
              "stop what else uses it, or add swap on a fast local disk.");
  e.fields["pid"] = std::to_string(*pid);
  e.fields["task"] = std::string(task);
  e.fields["scope"] = memcg ? "cgroup" : "global";
  if (anon) e.fields["anon_rss"] = std::string(until(*anon, ","));
  return e;
}

// The NVIDIA driver's "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen
// off the bus." (older drivers: "NVRM: Xid (0000:01:00): 3, C 00000005 ...").
std::optional<KernelEvent> xid(string_view text, const XidTable& table) {
  const auto rest = after(text, "NVRM: Xid (");
  if (!rest) return std::nullopt;
  const auto close = rest->find("): ");
  if (close == string_view::npos) return std::nullopt;
  auto pci = rest->substr(0, close);
  if (pci.starts_with("PCI:")) pci.remove_prefix(4);
  const auto tail = rest->substr(close + 3);
  const auto code = leading_number(tail);
  if (!code) return std::nullopt;
  const auto* info = table.find(static_cast<int>(*code));
  const auto detail = trim(tail.substr(std::min(
      tail.size(), tail.find(", ") == string_view::npos ? tail.size() : tail.find(", ") + 2)));
  KernelEvent e =
      info != nullptr
          ? event("xid", info->severity,
                  fmt::format("Xid {} ({}) on the GPU at PCI {}: {}", *code, info->name, pci,
                              info->meaning),
                  info->action)
          : event("xid", Severity::kWarning,
                  fmt::format("Xid {} on the GPU at PCI {}: a code not in dltune's table ({})",
                              *code, pci, detail),
                  "Look the code up in NVIDIA's Xid catalog "
                  "(https://docs.nvidia.com/deploy/xid-errors/) and run the GPU's diagnostics.");
  e.fields["xid"] = std::to_string(*code);
  e.fields["pci"] = std::string(pci);
  if (const auto p = after(tail, "pid="); p && leading_number(*p))
    e.fields["pid"] = std::to_string(*leading_number(*p));
  if (const auto n = after(tail, "name=")) e.fields["task"] = std::string(until(*n, ","));
  if (!detail.empty()) e.fields["detail"] = std::string(detail);
  return e;
}

// The driver's "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus." without an Xid line.
std::optional<KernelEvent> gpu_lost(string_view text) {
  if (text.find("NVRM: ") == string_view::npos ||
      text.find("has fallen off the bus") == string_view::npos)
    return std::nullopt;
  auto e = event("gpu_lost", Severity::kCritical,
                 "A GPU stopped answering on PCIe: every job on it is lost (power, heat, the slot "
                 "or the GPU itself).",
                 "Reboot to get it back; check power delivery, temperatures and seating, and the "
                 "PCIe errors before it.");
  if (const auto at = after(text, "NVRM: GPU ")) {
    auto pci = until(*at, ": ");
    if (pci.starts_with("at ")) pci.remove_prefix(3);
    if (pci.starts_with("PCI:")) pci.remove_prefix(4);
    e.fields["pci"] = std::string(pci);
  }
  return e;
}

// drivers/pci/pcie/aer.c: "PCIe Bus Error: severity=%s, type=%s, (%s)" after the device's name
// ("pcieport 0000:00:01.0: "), and "AER: %s error received: %s" (Corrected, Uncorrected
// (Non-Fatal), Uncorrected (Fatal), "Multiple Corrected").
std::optional<KernelEvent> aer(string_view text) {
  std::string severity, device, type;
  if (const auto s = after(text, "PCIe Bus Error: severity=")) {
    severity = std::string(until(*s, ","));
    if (const auto t = after(*s, "type=")) type = std::string(until(*t, ","));
    const auto prefix = text.substr(0, text.find(": PCIe Bus Error"));
    const auto sp = prefix.rfind(' ');
    device = std::string(sp == string_view::npos ? prefix : prefix.substr(sp + 1));
  } else if (const auto r = after(text, "AER: ")) {
    const auto received = r->find(" error received: ");
    if (received == string_view::npos) return std::nullopt;
    severity = std::string(r->substr(0, received));
    if (severity.starts_with("Multiple ")) severity = severity.substr(9);
    device = std::string(trim(r->substr(received + 17)));
  } else {
    return std::nullopt;
  }
  const bool corrected = severity == "Corrected";
  auto e =
      event("aer", corrected ? Severity::kWarning : Severity::kCritical,
            corrected ? fmt::format("A corrected PCIe error on {}{}: the link retried and went on; "
                                    "many of them slow transfers and can precede a failure.",
                                    device, type.empty() ? "" : " (" + type + ")")
                      : fmt::format("An uncorrected PCIe error ({}) on {}: the device may have "
                                    "lost data or stopped.",
                                    severity, device),
            corrected ? "Count them (doctor's summary): a steady stream on a GPU's link means "
                        "a bad riser, slot or cable; reseat or service it."
                      : "Drain the jobs on that device, check it (nvidia-smi, dltune env's "
                        "PCIe link) and service the link or the device.");
  e.fields["device"] = device;
  e.fields["severity"] = severity;
  if (!type.empty()) e.fields["type"] = type;
  return e;
}

// drivers/pci/pci.c __pcie_print_link_status: "%u.%03u Gb/s available PCIe bandwidth, limited by
// %s x%d link at %s (capable of %u.%03u Gb/s with %s x%d link)".
std::optional<KernelEvent> pcie_link(string_view text) {
  const auto limited = after(text, "available PCIe bandwidth, limited by ");
  if (!limited) return std::nullopt;
  const auto at = after(*limited, " link at ");
  const auto capable = after(*limited, "(capable of ");
  auto e =
      event("pcie_link", Severity::kWarning,
            fmt::format("A PCIe device runs below its link's capability: limited by {} at {}"
                        "{}.",
                        until(*limited, " link at "), at ? until(*at, " ") : "?",
                        capable ? fmt::format(" (capable of {})", until(*capable, ")")) : ""),
            "A GPU on a downgraded link moves data to and from the host slower: check the slot "
            "(dltune env shows each GPU's link), reseat the card or fix the riser.");
  const auto colon = text.find(": ");
  if (colon != string_view::npos) {
    const auto prefix = text.substr(0, colon);
    const auto sp = prefix.rfind(' ');
    e.fields["device"] = std::string(sp == string_view::npos ? prefix : prefix.substr(sp + 1));
  }
  e.fields["limited_by"] = std::string(until(*limited, " link at "));
  if (at) e.fields["at"] = std::string(until(*at, " "));
  return e;
}

// kernel/hung_task.c: "INFO: task %s:%d blocked for more than %ld seconds."
std::optional<KernelEvent> hung_task(string_view text) {
  const auto rest = after(text, "INFO: task ");
  if (!rest) return std::nullopt;
  const auto blocked = rest->find(" blocked for more than ");
  if (blocked == string_view::npos) return std::nullopt;
  const auto name_pid = rest->substr(0, blocked);
  const auto colon = name_pid.rfind(':');
  if (colon == string_view::npos) return std::nullopt;
  const auto task = name_pid.substr(0, colon);
  const auto seconds = leading_number(rest->substr(blocked + 23));
  const std::string role = who(task);
  auto e = event("hung_task", Severity::kWarning,
                 fmt::format("Process {} ({}){} waited in the kernel (D state) for more than {} s: "
                             "usually storage or a network file system that stopped answering.",
                             name_pid.substr(colon + 1), task, role.empty() ? "" : ", " + role,
                             seconds.value_or(0)),
                 "Check the file system the job reads (NFS, Lustre, a failing disk: fs and NVMe "
                 "errors in doctor); a DataLoader stuck here stalls the whole job.");
  e.fields["task"] = std::string(task);
  e.fields["pid"] = std::string(name_pid.substr(colon + 1));
  return e;
}

// kernel/watchdog.c: "BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]"
std::optional<KernelEvent> soft_lockup(string_view text) {
  const auto rest = after(text, "BUG: soft lockup - CPU#");
  if (!rest || !leading_number(*rest) || rest->find(" stuck for ") == string_view::npos)
    return std::nullopt;
  auto e =
      event("soft_lockup", Severity::kCritical,
            fmt::format("CPU {} ran kernel code without yielding for {}: a driver or the "
                        "kernel is stuck (often under heavy I/O or a GPU driver fault).",
                        until(*rest, " "), until(after(*rest, "stuck for ").value_or("?"), "!")),
            "Note the task and the stack that follow in the log; update the kernel or the "
            "driver named there; frequent lockups on a VM can be host overcommit (steal).");
  e.fields["cpu"] = std::string(until(*rest, " "));
  if (const auto t = after(*rest, "! ["))
    e.fields["task"] = std::string(until(until(*t, "]"), ":"));
  return e;
}

// arch/x86/mm/fault.c show_signal_msg: "%s%s[%d]: segfault at %lx ip %px sp %px error %lx" and
// " in %s[...]"; arch/x86/kernel/traps.c: "traps: %s[%d] general protection fault ip:%lx sp:%lx
// error:%lx" and " in %s[...]".
std::optional<KernelEvent> crash(string_view text) {
  const bool segv = text.find("]: segfault at ") != string_view::npos;
  const bool gpf = text.find("] general protection fault ip:") != string_view::npos;
  if (!segv && !gpf) return std::nullopt;
  auto head = text.substr(0, text.find(segv ? "]: segfault" : "] general protection"));
  if (head.starts_with("traps: ")) head.remove_prefix(7);
  const auto open = head.rfind('[');
  if (open == string_view::npos) return std::nullopt;
  const auto task = head.substr(0, open);
  const auto pid = head.substr(open + 1);
  if (task.empty() || !leading_number(pid)) return std::nullopt;
  const auto in = after(text, " in ");
  const auto lib = in ? until(*in, "[") : string_view();
  const std::string role = who(task);
  auto e =
      event(segv ? "segfault" : "general_protection", Severity::kWarning,
            fmt::format("Process {} ({}){} crashed with {}{}.", pid, task,
                        role.empty() ? "" : ", " + role,
                        segv ? "a segmentation fault" : "a general protection fault",
                        lib.empty() ? "" : fmt::format(" in {}", lib)),
            "A native crash: note the library named; mismatched CUDA/cuDNN/NCCL libraries "
            "(dltune check), a bad extension build or faulty memory are the usual causes. In a "
            "DataLoader worker it ends the job with 'DataLoader worker exited unexpectedly'.");
  e.fields["task"] = std::string(task);
  e.fields["pid"] = std::string(pid);
  if (!lib.empty()) e.fields["library"] = std::string(lib);
  return e;
}

// mm/page_alloc.c warn_alloc: "%s: page allocation failure: order:%u, mode:%#x(%pGg),
// nodemask=%*pbl"
std::optional<KernelEvent> page_alloc_failure(string_view text) {
  const auto at = text.find(": page allocation failure: order:");
  if (at == string_view::npos) return std::nullopt;
  const auto task = text.substr(0, at);
  const auto order = leading_number(text.substr(at + 33));
  auto e =
      event("page_alloc_failure", Severity::kWarning,
            fmt::format(
                "The kernel could not find {} contiguous pages (order {}) for {}: "
                "memory is fragmented or short.",
                // (a negative order, which no kernel prints, shifted by a
                // negative count: found by fuzz_kernel_log)
                order && *order >= 0 ? std::to_string(1LL << std::min<long long>(*order, 20)) : "?",
                order.value_or(-1), task),
            "Usually harmless when it is rare; frequent ones under a training job mean memory "
            "pressure: fewer workers, or vm.min_free_kbytes higher (dltune tune).");
  e.fields["task"] = std::string(task);
  if (order) e.fields["order"] = std::to_string(*order);
  return e;
}

// fs/ext4/super.c: "EXT4-fs error (device %s): %s:%d: ..."; fs/xfs: "XFS (%s): ..." with a metadata
// or log I/O error, corruption, or a shutdown.
std::optional<KernelEvent> fs_error(string_view text) {
  std::string device;
  if (const auto e4 = after(text, "EXT4-fs error (device ")) {
    device = std::string(until(*e4, ")"));
  } else if (const auto x = after(text, "XFS (")) {
    if (text.find("I/O error") == string_view::npos &&
        text.find("Corruption") == string_view::npos &&
        text.find("shut down") == string_view::npos && text.find("shutdown") == string_view::npos)
      return std::nullopt;
    device = std::string(until(*x, ")"));
  } else {
    return std::nullopt;
  }
  auto e = event("fs_error", Severity::kCritical,
                 fmt::format("The file system on {} reported an error: reads of the dataset or "
                             "writes of checkpoints there may fail or return bad data.",
                             device),
                 "Check the disk (smartctl, NVMe errors in doctor) and run the file system's check "
                 "when it is unmounted; move data and checkpoints elsewhere meanwhile.");
  e.fields["device"] = device;
  return e;
}

// drivers/nvme/host/pci.c nvme_timeout: "I/O %d QID %d timeout, aborting" (newer: "I/O tag %d
// (%04x) opcode %#x (%s) QID %d timeout, aborting"), after "nvme nvmeN: ".
std::optional<KernelEvent> nvme_timeout(string_view text) {
  const auto dev = after(text, "nvme nvme");
  if (!dev || text.find(" QID ") == string_view::npos ||
      text.find(" timeout, ") == string_view::npos)
    return std::nullopt;
  const std::string device = "nvme" + std::string(until(*dev, ":"));
  auto e =
      event("nvme_timeout", Severity::kWarning,
            fmt::format("An I/O to {} timed out and was aborted: the drive stalled.", device),
            "Check the drive's health (smartctl -a, nvme smart-log) and its firmware; repeated "
            "timeouts stall the readers of a dataset on it (storage-bound in profile).");
  e.fields["device"] = device;
  return e;
}

Severity parse_severity(string_view s, bool& ok) {
  ok = true;
  if (s == "critical") return Severity::kCritical;
  if (s == "warning") return Severity::kWarning;
  if (s == "info") return Severity::kInfo;
  ok = false;
  return Severity::kInfo;
}

}  // namespace

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return "critical";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "info";
}

const XidInfo* XidTable::find(int code) const {
  const auto it = std::lower_bound(codes.begin(), codes.end(), code,
                                   [](const XidInfo& x, int c) { return x.code < c; });
  return it != codes.end() && it->code == code ? &*it : nullptr;
}

Result<XidTable> parse_xid_table(std::string_view toml_text, std::string_view name) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text, name);
  } catch (const toml::parse_error& e) {
    return fail(fmt::format("{} at line {}, column {} of", e.description(), e.source().begin.line,
                            e.source().begin.column),
                std::string(name));
  }
  const auto* arr = doc["xid"].as_array();
  if (arr == nullptr || !arr->is_array_of_tables() || arr->empty())
    return fail("no [[xid]] tables", std::string(name));
  XidTable t;
  std::set<int> seen;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const auto& x = *arr->get(i)->as_table();
    const std::string where = fmt::format("{}: [[xid]] #{}", name, i + 1);
    XidInfo info;
    // as_integer, not value<int64_t>: toml++ converts a float such as 1e99 to an integer
    // without a range check, which is undefined (found by fuzz_toml).
    const auto* code = x["code"].as_integer();
    if (code == nullptr || code->get() <= 0 || code->get() > std::numeric_limits<int>::max())
      return fail("code: expected a positive whole number", where);
    info.code = static_cast<int>(code->get());
    for (auto [key, field] :
         {std::pair{"name", &info.name}, std::pair{"meaning", &info.meaning},
          std::pair{"action", &info.action}, std::pair{"source", &info.source}}) {
      const auto v = x[key].value<std::string>();
      if (!v || v->empty()) return fail(fmt::format("{}: expected a non-empty string", key), where);
      *field = *v;
    }
    bool ok = false;
    info.severity = parse_severity(x["severity"].value_or(std::string()), ok);
    if (!ok) return fail("severity: expected critical, warning or info", where);
    for (const auto& [k, v] : x)
      if (std::set<std::string_view>{"code", "name", "meaning", "action", "severity", "source"}
              .count(k.str()) == 0)
        return fail(fmt::format("unknown key '{}'", k.str()), where);
    if (!seen.insert(info.code).second)
      return fail(fmt::format("Xid {} is listed twice", info.code), where);
    t.codes.push_back(std::move(info));
  }
  std::sort(t.codes.begin(), t.codes.end(),
            [](const XidInfo& a, const XidInfo& b) { return a.code < b.code; });
  return t;
}

const Result<XidTable>& builtin_xid_table() {
  static const Result<XidTable> kTable = load_knowledge<XidTable>(
      "xid",
      [](std::string_view text, const std::string& where) { return parse_xid_table(text, where); });
  return kTable;
}

namespace {

std::optional<KernelEvent> oom_context(string_view text) {
  const auto k = host::parse::oom_kill(text);
  if (!k) return std::nullopt;
  auto e = event(
      "oom_context", Severity::kInfo,
      fmt::format("OOM kill of {} ({}): constraint {}, limit hit in {}, victim in {}.", k->pid,
                  k->task, k->constraint, k->oom_memcg.empty() ? "the whole machine" : k->oom_memcg,
                  k->task_memcg.empty() ? "/" : k->task_memcg),
      "See the OOM kill it belongs to.");
  e.fields["pid"] = std::to_string(k->pid);
  e.fields["task"] = k->task;
  e.fields["constraint"] = k->constraint;
  e.fields["oom_memcg"] = k->oom_memcg;
  e.fields["cgroup"] = k->task_memcg;
  return e;
}

}  // namespace

std::optional<KernelEvent> classify(std::string_view text, const XidTable& xids) {
  // Dispatch on how each form begins, so that an ordinary line costs a few byte compares and at
  // most one short search (doctor scans logs at grep's speed): the subsystem's own prefix, or a
  // "NAME: " / "DEVICE ADDRESS: " prefix within the first 64 bytes.
  if (text.size() < 8) return std::nullopt;
  using namespace std::string_view_literals;  // no strlen per comparison
  switch (text[0]) {                          // one byte decides which prefix can match
    case 'N':
      if (text.starts_with("NVRM: "sv)) {
        if (auto e = xid(text, xids)) return e;
        return gpu_lost(text);
      }
      break;
    case 'o':
      if (text.starts_with("oom-kill:"sv)) return oom_context(text);
      break;
    case 'O':
    case 'M':
    case 'K':
      if (text.starts_with("Out of memory"sv) ||
          text.starts_with("Memory cgroup out of memory"sv) || text.starts_with("Killed process"sv))
        return oom_kill(text);
      break;
    case 'I':
      if (text.starts_with("INFO: task "sv)) return hung_task(text);
      break;
    case 'w':
    case 'B':
      if (text.starts_with("watchdog: BUG: soft lockup"sv) ||
          text.starts_with("BUG: soft lockup"sv))
        return soft_lockup(text);
      break;
    case 't':
      if (text.starts_with("traps: "sv)) return crash(text);
      break;
    case 'E':
    case 'X':
      if (text.starts_with("EXT4-fs error"sv) || text.starts_with("XFS ("sv)) return fs_error(text);
      break;
    case 'n':
      if (text.starts_with("nvme nvme"sv)) return nvme_timeout(text);
      break;
    case 'A':
      if (text.starts_with("AER: "sv)) return aer(text);
      break;
    default:
      break;
  }
  const auto colon = text.substr(0, 64).find(": "sv);
  if (colon == string_view::npos) return std::nullopt;
  const auto rest = text.substr(colon + 2);
  // "pcieport 0000:00:01.0: AER: ...", "nvidia 0000:3b:00.0: PCIe Bus Error: ...", "... 2.000
  // Gb/s available PCIe bandwidth, limited by ..."; the address's own colons come first, so the
  // prefix ends at the first ": ".
  if (rest.starts_with("AER: "sv) || rest.starts_with("PCIe Bus Error"sv)) return aer(text);
  if (!rest.empty() && rest[0] >= '0' && rest[0] <= '9' &&
      rest.substr(0, 40).find(" available PCIe bandwidth"sv) != string_view::npos)
    return pcie_link(text);
  // "python3[4242]: segfault at ..." and "python3: page allocation failure: order:..."
  if (colon > 0 && text[colon - 1] == ']' && rest.starts_with("segfault at "sv)) return crash(text);
  if (rest.starts_with("page allocation failure: order:"sv)) return page_alloc_failure(text);
  return std::nullopt;
}

}  // namespace dltune::diagnose

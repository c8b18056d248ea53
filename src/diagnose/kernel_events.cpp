// Kernel log lines → events (diagnose/kernel_events.hpp). Each parser names the printk format it
// reads; a line that does not have the form exactly is no event (never a guess).
#include "diagnose/kernel_events.hpp"
#include "core/toml_parse.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include <fmt/core.h>
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

// A PCI address as the kernel names a device: "0000:3b:00.0" (domain:bus:device.function).
bool is_pci_address(string_view s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (i != 4 && i != 7 && i != 10 && !hex) return false;
  }
  return true;
}

// A driver version at the start of `s` ("535.104.05", "1.0-7184") without the sentence's final
// dot; empty when there is none.
string_view version_at(string_view s) {
  auto v = s.substr(0, s.find_first_not_of("0123456789.-"));
  while (!v.empty() && (v.back() == '.' || v.back() == '-')) v.remove_suffix(1);
  return v;
}

// The fix of check's gpu.nouveau (audit/gpu_rules.cpp), said the same way.
constexpr const char* kNouveauFix =
    "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > "
    "/etc/modprobe.d/blacklist-nouveau.conf && update-initramfs -u && reboot";

// The NVIDIA driver's version check (RmPerformVersionCheck): "NVRM: API mismatch: the client has
// the version %s, but\nNVRM: this kernel module has the version %s.  Please\nNVRM: make sure that
// this kernel module and all NVIDIA driver\nNVRM: components have the same version." and, in newer
// drivers, "the client '%s' (pid %u)\nNVRM: has the version %s, but this kernel module has\nNVRM:
// the version %s.  Please ...". One record with its newlines ("\x0a" in /dev/kmsg, "#012" in
// rsyslog's files), or on older kernels one record a line, when the first names only the client.
// Lines: stackhpc/ansible-slurm-appliance#287 (syslog, "#012"), Frogging-Family/nvidia-all#394
// (the client's name and pid), NVIDIA/nvidia-docker#182.
std::optional<KernelEvent> driver_mismatch(string_view text) {
  if (!text.starts_with("NVRM: API mismatch: the client")) return std::nullopt;
  const auto module_at = text.find("kernel module has");
  const auto head = text.substr(0, module_at);  // the client's part
  std::string client, pid;
  if (const auto c = after(head, "the client '")) {
    client = std::string(until(*c, "'"));
    if (const auto p = after(*c, "(pid "); p && leading_number(*p))
      pid = std::to_string(*leading_number(*p));
  }
  const auto cv = after(head, "has the version ");
  const auto client_version = cv ? version_at(*cv) : string_view();
  string_view module_version;
  if (module_at != string_view::npos) {
    if (const auto mv = after(text.substr(module_at), "the version "))
      module_version = version_at(*mv);
  }
  const auto version = [](string_view v) {
    return v.empty() ? std::string("version unknown") : "version " + std::string(v);
  };
  auto e = event(
      "driver_mismatch", Severity::kCritical,
      fmt::format("The NVIDIA driver's user-space libraries{} ({}) do not match its loaded kernel "
                  "module ({}): CUDA, NVML and nvidia-smi fail ('Driver/library version "
                  "mismatch') until they do.",
                  client.empty() ? ""
                                 : fmt::format(" used by {}{}", client,
                                               pid.empty() ? "" : " (pid " + pid + ")"),
                  version(client_version), version(module_version)),
      "Reboot so that the installed driver's kernel module loads, or reload it: stop what holds "
      "the GPUs (jobs, nvidia-persistenced, nvidia-fabricmanager, dcgm), then modprobe -r "
      "nvidia_drm nvidia_modeset nvidia_uvm nvidia && modprobe nvidia. If they still differ, "
      "reinstall the driver so that kernel module and user space are one version.");
  if (!client_version.empty()) e.fields["client_version"] = std::string(client_version);
  if (!module_version.empty()) e.fields["module_version"] = std::string(module_version);
  if (!client.empty()) e.fields["task"] = client;
  if (!pid.empty()) e.fields["pid"] = pid;
  return e;
}

// The driver core's probe failure of the nvidia driver (drivers/base/dd.c): "%s: probe of %s
// failed with error %d" on older kernels, "probe with driver %s failed with error %d" after the
// device's "nvidia 0000:01:00.0: " on newer ones; and the NVIDIA driver's own count, "NVRM: The
// NVIDIA probe routine failed for %d device(s)." ("was not called for %d device(s)." when another
// driver such as nouveau holds them). The cause is in the NVRM lines before them. Lines:
// pop-os/cosmic-epoch#2146 (the newer form); DaoCloud's KubeCon HK 2024 talk "Sit Back and Relax
// with Fault Awareness and Robust Instant Recovery for Large Scale AI Workloads" (an H100 fallen
// off the bus: the older form and the count); mattshma/bigdata#133 ("was not called").
std::optional<KernelEvent> probe_failed(string_view text) {
  constexpr string_view kOld = "nvidia: probe of ";
  constexpr string_view kNew = "probe with driver nvidia failed with error ";
  constexpr string_view kRoutine = "NVRM: The NVIDIA probe routine ";
  string_view pci;
  std::optional<long long> error;
  if (text.starts_with(kOld)) {
    const auto rest = text.substr(kOld.size());
    pci = until(rest, " ");
    if (const auto f = after(rest, " failed with error ")) error = leading_number(*f);
  } else if (text.starts_with("nvidia ")) {
    const auto rest = text.substr(7);
    pci = until(rest, ": ");
    if (const auto f = after(rest, ": "); f && f->starts_with(kNew))
      error = leading_number(f->substr(kNew.size()));
  } else if (text.starts_with(kRoutine)) {
    constexpr string_view kFailed = "failed for ", kNotCalled = "was not called for ";
    const auto rest = text.substr(kRoutine.size());
    const bool not_called = rest.starts_with(kNotCalled);
    if (!not_called && !rest.starts_with(kFailed)) return std::nullopt;
    const auto count = leading_number(rest.substr(not_called ? kNotCalled.size() : kFailed.size()));
    if (!count) return std::nullopt;
    auto e =
        not_called
            ? event("gpu_probe_failed", Severity::kCritical,
                    fmt::format("The NVIDIA driver was not offered {} GPU(s): another driver "
                                "(nouveau, or vfio-pci for a VM) holds them, so CUDA cannot use "
                                "them.",
                                *count),
                    fmt::format("See which driver holds each GPU (lspci -nnk -d 10de:); if it is "
                                "nouveau, blacklist it and rebuild the initramfs: {}",
                                kNouveauFix))
            : event("gpu_probe_failed", Severity::kCritical,
                    fmt::format("The NVIDIA driver could not take {} GPU(s): they are not usable "
                                "(CUDA and nvidia-smi do not see them).",
                                *count),
                    "Read the NVRM lines just before it for the cause (a GPU this driver release "
                    "does not support, a PCI BAR the BIOS did not assign, a GPU fallen off the "
                    "bus); fix it, then reboot.");
    e.fields["count"] = std::to_string(*count);
    return e;
  } else {
    return std::nullopt;
  }
  if (!is_pci_address(pci) || !error) return std::nullopt;
  auto e = event("gpu_probe_failed", Severity::kCritical,
                 fmt::format("The NVIDIA driver could not take the GPU at PCI {} (probe error {}): "
                             "the GPU is not usable (CUDA and nvidia-smi do not see it).",
                             pci, *error),
                 "Read the NVRM lines just before it for the cause (a GPU this driver release does "
                 "not support, a PCI BAR the BIOS did not assign, a GPU fallen off the bus); fix "
                 "it, then reboot.");
  e.fields["pci"] = std::string(pci);
  e.fields["error"] = std::to_string(*error);
  return e;
}

// The NVIDIA driver's RmInitAdapter (NVIDIA/open-gpu-kernel-modules,
// src/nvidia/arch/nvalloc/unix/src/osinit.c): NV_DEV_PRINTF "RmInitAdapter failed! (0x%x:0x%x:%d)"
// after "NVRM: GPU 0000:0a:00.0: " (older drivers: "NVRM: RmInitAdapter failed! (...)", no GPU).
// The "rm_init_adapter failed, device minor number N" line after it is no event of its own. Lines:
// NVIDIA/gpu-operator#1146, Bumblebee-Project/Bumblebee#722 (the older form).
std::optional<KernelEvent> gpu_init_failed(string_view text) {
  const auto rest = after(text, "RmInitAdapter failed! (");
  if (!rest || rest->find(')') == string_view::npos) return std::nullopt;
  const auto code = until(*rest, ")");
  string_view pci;
  if (text.starts_with("NVRM: GPU ")) {
    pci = until(text.substr(10), ": ");
    if (!is_pci_address(pci)) pci = {};
  }
  auto e = event("gpu_init_failed", Severity::kCritical,
                 fmt::format("The NVIDIA driver failed to initialise the GPU{} (RmInitAdapter {}): "
                             "the GPU is not usable; usually its power, its seating or its "
                             "firmware.",
                             pci.empty() ? "" : fmt::format(" at PCI {}", pci), code),
                 "Cold-reboot the node (power off, then on); if it fails again, reseat the GPU, "
                 "check its power cables and supply and update the driver and the GPU's firmware; "
                 "have the GPU serviced if it recurs.");
  if (!pci.empty()) e.fields["pci"] = std::string(pci);
  e.fields["code"] = std::string(code);
  return e;
}

// nouveau's chipset line, drivers/gpu/drm/nouveau/nvkm/engine/device/base.c nvkm_device_ctor:
// nvdev_info "NVIDIA %s (%08x)" (the chip and its BOOT0 register) after the device's "nouveau
// 0000:02:00.0: ", once per GPU that nouveau takes; its "DRM: ..." and "bios: ..." lines that
// follow are no events of their own, so that each GPU counts once. Line:
// dartraiden/NVIDIA-patcher#73 ("nouveau 0000:02:00.0: NVIDIA GA102 (b72000a1)").
std::optional<KernelEvent> nouveau_bound(string_view text) {
  const auto rest = text.substr(8);  // after "nouveau "
  const auto pci = until(rest, ": ");
  if (pci.size() == rest.size() || !is_pci_address(pci)) return std::nullopt;
  const auto msg = trim(rest.substr(pci.size() + 2));
  const auto open = msg.find(" (");
  if (!msg.starts_with("NVIDIA ") || !msg.ends_with(')') || open == string_view::npos || open < 8)
    return std::nullopt;
  const auto chip = msg.substr(7, open - 7);
  auto e = event("nouveau_bound", Severity::kWarning,
                 fmt::format("The open-source nouveau driver took the NVIDIA GPU at PCI {} ({}), "
                             "so the NVIDIA driver cannot: CUDA does not see this GPU.",
                             pci, chip),
                 fmt::format("Blacklist nouveau and rebuild the initramfs: {} (on RHEL-like "
                             "systems dracut -f instead of update-initramfs -u).",
                             kNouveauFix));
  e.fields["pci"] = std::string(pci);
  e.fields["chip"] = std::string(chip);
  return e;
}

// EDAC's memory errors, drivers/edac/edac_mc.c edac_ce_error / edac_ue_error: "EDAC MC%d: %d CE
// %s%son %s (%s page:0x%lx offset:0x%lx grain:%ld syndrome:0x%lx%s%s)" and "... %d UE %s%son %s
// (...)", with the error ("memory read error", or none) and the DIMM's label
// ("CPU_SrcID#0_Ha#0_Chan#1_DIMM#0", "any memory", "unknown memory"); before Linux 3.5 "EDAC MC%d:
// CE row %d, channel %d, label \"%s\": %d %s" and its UE alike. A memory-controller driver's own
// lines (edac_mc_chipset_printk: "EDAC sbridge MC1: HANDLING MCE MEMORY ERROR", "EDAC skx MC3:
// CPU 0: Machine Check Event: ...") come before the EDAC MCn line of the same error and are no
// events of their own. Lines: radiasoft/devops#134 (a CE, sbridge);
// https://lore.kernel.org/r/20210812152548.GA1579021@agluck-desk2.amr.corp.intel.com (a UE, skx);
// https://tikiold.cldn.cz/tiki-index.php?page=MemoryECCError (the old form).
std::optional<KernelEvent> memory_error(string_view text) {
  const auto digits = text.find_first_not_of("0123456789", 7);  // after "EDAC MC"
  if (digits == 7 || digits == string_view::npos || text.substr(digits, 2) != ": ")
    return std::nullopt;
  const auto mc = std::string(text.substr(7, digits - 7));
  auto body = text.substr(digits + 2);
  std::string type, label, error, location;
  long long count = 1;
  if (body.starts_with("CE ") || body.starts_with("UE ")) {  // before Linux 3.5
    type = std::string(body.substr(0, 2));
    const auto l = after(body, "label \"");
    if (!l) return std::nullopt;
    label = std::string(until(*l, "\""));
    if (const auto n = after(*l, "\": "); n && leading_number(*n)) count = *leading_number(*n);
  } else {
    const auto n = leading_number(body);
    const auto sp = body.find(' ');
    if (!n || sp == string_view::npos) return std::nullopt;
    count = *n;
    body = body.substr(sp + 1);
    if (!body.starts_with("CE ") && !body.starts_with("UE ")) return std::nullopt;
    type = std::string(body.substr(0, 2));
    body = body.substr(3);
    const auto paren = body.find(" (");
    const auto head = body.substr(0, paren);
    if (head.starts_with("on ")) {
      label = std::string(head.substr(3));
    } else {
      const auto on = head.rfind(" on ");
      if (on == string_view::npos) return std::nullopt;
      error = std::string(head.substr(0, on));
      label = std::string(head.substr(on + 4));
    }
    if (paren != string_view::npos)
      location = std::string(trim(until(body.substr(paren + 2), " page:")));
  }
  if (label.empty() || count < 1) return std::nullopt;
  const bool corrected = type == "CE";
  const std::string what =
      fmt::format("{} {}memory error{} on {}{}", count, corrected ? "corrected " : "uncorrected ",
                  count == 1 ? "" : "s", label, location.empty() ? "" : " (" + location + ")");
  auto e =
      corrected
          ? event("memory_error", Severity::kWarning,
                  fmt::format("Memory controller {} reported {}: ECC repaired the data, but a DIMM "
                              "whose count keeps growing is failing.",
                              mc, what),
                  fmt::format("Watch this DIMM's count of corrected errors in "
                              "/sys/devices/system/edac/mc/mc{}/ (dimm*/dimm_label, "
                              "dimm*/dimm_ce_count; or ras-mc-ctl --error-count) and replace the "
                              "DIMM if it keeps growing.",
                              mc))
          : event("memory_error", Severity::kCritical,
                  fmt::format("Memory controller {} reported {}: data in memory was lost; what "
                              "read it was killed or got bad data.",
                              mc, what),
                  fmt::format("Drain the node and replace the DIMM ({} on memory controller {}); "
                              "jobs that ran here may have computed on corrupted data.",
                              label, mc));
  e.fields["mc"] = mc;
  e.fields["count"] = std::to_string(count);
  e.fields["dimm"] = label;
  e.fields["type"] = type;
  if (!error.empty()) e.fields["error"] = error;
  if (!location.empty()) e.fields["location"] = location;
  return e;
}

// Machine checks, arch/x86/kernel/cpu/mce/core.c (pr_fmt "mce: ", HW_ERR "[Hardware Error]: "):
// __print_mce "CPU %d: Machine Check%s: %Lx Bank %d: %016Lx" (" Exception" when raised as one),
// then its TSC, ADDR, MISC and PROCESSOR lines (no events of their own); mce_notify_irq "Machine
// check events logged"; mce_panic's reason "Machine check: %s" before it panics; kill_me_maybe
// "Uncorrected hardware memory error in user-access at %llx". Bit 61 (UC) of the bank's status
// says whether the error was corrected (Intel SDM vol. 3B, IA32_MCi_STATUS). Lines:
// andikleen/mcelog#70, home-assistant/operating-system#2989, andikleen/mcelog#116, the LKML mail
// of memory_error above (user-access).
std::optional<KernelEvent> machine_check(string_view text) {
  constexpr string_view kHw = "mce: [Hardware Error]: ";
  constexpr const char* kDecode =
      "Decode it with rasdaemon (ras-mc-ctl --errors) or mcelog (mcelog --client); have the node "
      "serviced if machine checks repeat (the same CPU, bank or DIMM).";
  constexpr const char* kDrain =
      "Drain the node; decode the error with rasdaemon (ras-mc-ctl --errors) or mcelog (mcelog "
      "--client) and have the CPU, memory or board serviced before it runs jobs again.";
  constexpr string_view kUserAccess = "mce: Uncorrected hardware memory error in user-access at ";
  if (text.starts_with(kUserAccess)) {
    const auto address = trim(text.substr(kUserAccess.size()));
    auto e = event("machine_check", Severity::kCritical,
                   fmt::format("A process read memory with an uncorrected error (physical address "
                               "{}): the kernel killed it or took the page out of use.",
                               address),
                   kDrain);
    e.fields["address"] = std::string(address);
    return e;
  }
  if (!text.starts_with(kHw)) return std::nullopt;
  const auto rest = trim(text.substr(kHw.size()));
  if (rest.starts_with("Machine check events logged"))
    return event("machine_check", Severity::kWarning,
                 "The CPU logged hardware errors (machine checks) of the CPU, its caches, the "
                 "memory or the bus; the lines around it, rasdaemon or mcelog say which.",
                 kDecode);
  if (rest.starts_with("CPU ")) {
    const auto cpu = leading_number(rest.substr(4));
    const auto bank_at = rest.find(" Bank ");
    if (!cpu || rest.find(": Machine Check") == string_view::npos || bank_at == string_view::npos)
      return std::nullopt;
    const auto bank = leading_number(rest.substr(bank_at + 6));
    if (!bank) return std::nullopt;
    const auto status = until(after(rest.substr(bank_at), ": ").value_or(""), " ");
    const char top = status.size() == 16 ? status[0] : '0';
    const int nibble = top >= '0' && top <= '9'   ? top - '0'
                       : top >= 'a' && top <= 'f' ? top - 'a' + 10
                       : top >= 'A' && top <= 'F' ? top - 'A' + 10
                                                  : 0;
    const bool uncorrected = (nibble & 0x2) != 0;  // bit 61 of the status
    auto e =
        event("machine_check", uncorrected ? Severity::kCritical : Severity::kWarning,
              fmt::format("CPU {} reported {} hardware error (machine check, bank {}{}): {}", *cpu,
                          uncorrected ? "an uncorrected" : "a corrected", *bank,
                          status.empty() ? "" : fmt::format(", status {}", status),
                          uncorrected
                              ? "data was lost; the kernel may have killed a process or stopped."
                              : "the CPU, its cache, the memory or the bus had a fault it fixed."),
              uncorrected ? kDrain : kDecode);
    e.fields["cpu"] = std::to_string(*cpu);
    e.fields["bank"] = std::to_string(*bank);
    if (!status.empty()) e.fields["status"] = std::string(status);
    return e;
  }
  if (rest.starts_with("Machine check: ") || rest.find("Uncorrected") != string_view::npos)
    return event("machine_check", Severity::kCritical,
                 fmt::format("An uncorrected hardware error (machine check): {}.", rest), kDrain);
  return std::nullopt;
}

// kernel/panic.c panic(): "Kernel panic - not syncing: %s" with the reason mce_panic
// (arch/x86/kernel/cpu/mce/core.c) gives it: "Fatal machine check", "Fatal machine check on
// current CPU", "Fatal local machine check", "Machine check from unknown source" (older kernels:
// "Fatal Machine check"), after "mce: [Hardware Error]: Machine check: Processor context corrupt".
// Other panics are not machine checks and no event here.
std::optional<KernelEvent> fatal_machine_check(string_view text) {
  constexpr string_view kPanic = "Kernel panic - not syncing: ";
  if (!text.starts_with(kPanic)) return std::nullopt;
  const auto reason = trim(text.substr(kPanic.size()));
  if (reason.find("achine check") == string_view::npos) return std::nullopt;
  return event("machine_check", Severity::kCritical,
               fmt::format("The kernel stopped (panic: {}) on a hardware error it could not "
                           "recover from: the node went down with every job on it.",
                           reason),
               "Drain the node; read the machine check logged before the panic (rasdaemon: "
               "ras-mc-ctl --errors; mcelog; the BMC's event log: ipmitool sel list) and have the "
               "CPU, memory or board serviced.");
}

// The NVSwitch driver's SXid (NVIDIA/open-gpu-kernel-modules,
// src/common/nvswitch/kernel/inc/common_nvswitch.h NVSWITCH_PRINT_SXID): "nvidia-%s: SXid
// (PCI:%04x:%02x:%02x.%x): %05d, " and, intr_nvswitch.h, "Fatal, Link %02d %s%s", "Non-fatal,
// Link %02d %s%s", "Correctable, Link %02d %s%s" (the last %s " (First)" or none) or "Fatal, %s,
// instance=%d, chiplet=%d"; the lines after it about the same error ("Severity 5 Engine instance
// 00 Sub-engine instance 00", "Data {...}") are no events of their own. Lines: the MENTHOS data
// set (https://huggingface.co/datasets/LHRS-UM-FERI/MENTHOS-dataset-rootcause); what they mean:
// NVIDIA Fabric Manager User Guide
// (https://docs.nvidia.com/datacenter/tesla/pdf/fabric-manager-user-guide.pdf).
std::optional<KernelEvent> sxid(string_view text) {
  constexpr string_view kTag = ": SXid (PCI:";
  const auto tag = text.find(kTag);
  if (tag == string_view::npos || tag <= 7) return std::nullopt;
  const auto sw = text.substr(7, tag - 7);  // "nvswitch0" of "nvidia-nvswitch0"
  const auto rest = text.substr(tag + kTag.size());
  const auto close = rest.find("): ");
  if (close == string_view::npos) return std::nullopt;
  const auto pci = rest.substr(0, close);
  auto tail = rest.substr(close + 3);
  const auto code = leading_number(tail);
  const auto comma = tail.find(", ");
  if (!code || *code < 0 || comma == string_view::npos) return std::nullopt;
  tail = tail.substr(comma + 2);
  string_view kind;
  for (const string_view k : {"Fatal", "Non-fatal", "Correctable"})
    if (tail.starts_with(k) && tail.substr(k.size()).starts_with(", ")) kind = k;
  if (kind.empty()) return std::nullopt;  // "Severity N Engine instance ...", "Data {...}"
  tail = tail.substr(kind.size() + 2);
  std::optional<long long> link;
  if (tail.starts_with("Link ")) {
    link = leading_number(tail.substr(5));
    const auto sp = tail.find(' ', 5);
    tail = sp == string_view::npos ? string_view() : tail.substr(sp + 1);
  }
  auto detail = trim(tail);
  if (detail.ends_with("(First)")) detail = trim(detail.substr(0, detail.size() - 7));
  const std::string what =
      fmt::format("NVSwitch {} (PCI {}) reported {} error SXid {}{}{}", sw, pci,
                  kind == "Fatal"       ? "a fatal"
                  : kind == "Non-fatal" ? "a non-fatal"
                                        : "a corrected",
                  *code, link ? fmt::format(" on link {}", *link) : "",
                  detail.empty() ? "" : fmt::format(" ({})", detail));
  const char* watch =
      "Watch how often it comes (doctor's counts): frequent ones on the same switch or link mean "
      "a failing link or switch; have it serviced.";
  auto e = kind == "Fatal"
               ? event("sxid", Severity::kCritical,
                       what +
                           ": the NVLink fabric through this switch stopped, so multi-GPU jobs "
                           "over NVLink on this node fail or hang.",
                       "Stop the node's jobs, restart the fabric (systemctl restart "
                       "nvidia-fabricmanager) and reset the GPUs (nvidia-smi -r) or reboot the "
                       "node; have the switch tray or baseboard serviced if it recurs.")
           : kind == "Non-fatal"
               ? event("sxid", Severity::kWarning,
                       what +
                           ": the switch carries on, but traffic on that link was dropped or "
                           "retried.",
                       watch)
               : event("sxid", Severity::kInfo, what + ": the hardware corrected it.", watch);
  e.fields["switch"] = std::string(sw);
  e.fields["pci"] = std::string(pci);
  e.fields["sxid"] = std::to_string(*code);
  e.fields["severity"] = std::string(kind);
  if (link) e.fields["link"] = std::to_string(*link);
  if (!detail.empty()) e.fields["detail"] = std::string(detail);
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
  auto parsed = parse_toml(toml_text, name);
  if (!parsed) return tl::unexpected(parsed.error());
  const toml::table& doc = *parsed;
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

// amdgpu's failures (Linux drivers/gpu/drm/amd/amdgpu): amdgpu_job.c amdgpu_job_timedout,
// "ring %s timeout, signaled seq=%u, emitted seq=%u" (DRM_ERROR: "[drm:amdgpu_job_timedout
// [amdgpu]] *ERROR* ring ..."; dev_err since 6.x: "amdgpu ADDRESS: amdgpu: ring ...") and "ring
// %s timeout, but soft recovered"; amdgpu_device.c "GPU reset begin!", "GPU reset(%d)
// succeeded!", "GPU reset(%d) failed"; amdgpu_ras.c "%ld uncorrectable hardware errors detected
// in %s block" (also "... detected in total in %s block", "socket: %d, die: %d, %lld new
// uncorrectable ...") and the same for correctable errors.
std::optional<KernelEvent> amdgpu(string_view text) {
  std::string pci;
  if (text.starts_with("amdgpu ")) {
    const auto end = text.find(": ", 7);
    if (end == string_view::npos) return std::nullopt;
    pci = std::string(text.substr(7, end - 7));
  }
  const auto with_pci = [&](KernelEvent e) {
    if (!pci.empty()) e.fields["pci"] = pci;
    return e;
  };
  const std::string gpu = pci.empty() ? "an AMD GPU" : "the AMD GPU at PCI " + pci;
  if (const auto ring = after(text, "ring "); ring && ring->find(" timeout") != string_view::npos) {
    const auto name = until(*ring, " ");
    if (ring->find(" timeout, but soft recovered") != string_view::npos) {
      auto e = event("amdgpu_ring_timeout", Severity::kWarning,
                     fmt::format("A job on ring {} of {} did not finish in time; the driver "
                                 "recovered the ring without a reset.",
                                 name, gpu),
                     "Watch for more: a ring that keeps timing out ends in a GPU reset.");
      e.fields["ring"] = std::string(name);
      e.fields["recovered"] = "true";
      return with_pci(std::move(e));
    }
    if (ring->find(" timeout, signaled seq=") == string_view::npos) return std::nullopt;
    auto e = event("amdgpu_ring_timeout", Severity::kCritical,
                   fmt::format("A job on ring {} of {} did not finish within amdgpu's job "
                               "timeout: the GPU hung, and the driver resets it (the work of "
                               "every process on it is lost).",
                               name, gpu),
                   "The next line names the process that ran. A hang that comes back on the same "
                   "GPU is the hardware: run its diagnostics (AMD's RVS or AGFHC) and update its "
                   "firmware; on several GPUs, suspect the kernel, ROCm or the job's code.");
    e.fields["ring"] = std::string(name);
    return with_pci(std::move(e));
  }
  if (text.find("GPU reset begin!") != string_view::npos)
    return with_pci(event("amdgpu_reset", Severity::kWarning,
                          fmt::format("The driver began to reset {}: every process using it "
                                      "loses its work.",
                                      gpu),
                          "See the ring timeout or RAS error before it for the cause."));
  if (const auto r = after(text, "GPU reset(")) {
    if (r->find(") succeeded") != string_view::npos)
      return with_pci(event("amdgpu_reset", Severity::kInfo,
                            fmt::format("The reset of {} succeeded.", gpu),
                            "Restart the jobs that were on it."));
    if (r->find(") failed") != string_view::npos)
      return with_pci(event("amdgpu_reset_failed", Severity::kCritical,
                            fmt::format("The reset of {} failed: it is unusable until the node "
                                        "reboots.",
                                        gpu),
                            "Drain the node and reboot it; service the GPU if it happens again."));
    return std::nullopt;
  }
  const auto detected = text.find(" hardware errors detected in ");
  if (detected == string_view::npos) return std::nullopt;
  const auto block = until(text.substr(text.rfind(" in ") + 4), " ");
  const bool uncorrectable = text.substr(0, detected).ends_with("uncorrectable");
  // The count is the number before "[new ]uncorrectable" / "correctable".
  auto head = text.substr(0, detected);
  head = head.substr(0, head.rfind(' '));
  if (head.ends_with(" new")) head.remove_suffix(4);
  const auto count = leading_number(head.substr(head.rfind(' ') + 1));
  auto e = uncorrectable
               ? event("amdgpu_ras_uncorrectable", Severity::kCritical,
                       fmt::format("{} uncorrectable hardware error(s) in the {} block of {}: "
                                   "data was lost.",
                                   count ? std::to_string(*count) : "Some", block, gpu),
                       "Drain the node: the GPU needs a reset, and service if it happens again. "
                       "`dltune check` reads its RAS counts and retired pages (gpu.ecc).")
               : event("amdgpu_ras_correctable", Severity::kInfo,
                       fmt::format("{} correctable hardware error(s) in the {} block of {}.",
                                   count ? std::to_string(*count) : "Some", block, gpu),
                       "Harmless one by one; a steady stream means the part is wearing out.");
  e.fields["block"] = std::string(block);
  if (count) e.fields["count"] = std::to_string(*count);
  return with_pci(std::move(e));
}

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
        if (auto e = gpu_lost(text)) return e;
        if (text.starts_with("NVRM: API mismatch: "sv)) return driver_mismatch(text);
        if (text.starts_with("NVRM: The NVIDIA probe routine "sv)) return probe_failed(text);
        return gpu_init_failed(text);
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
      if (text.starts_with("Kernel panic - not syncing: "sv)) return fatal_machine_check(text);
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
      if (text.starts_with("EDAC MC"sv)) return memory_error(text);
      break;
    case 'n':
      if (text.starts_with("nvme nvme"sv)) return nvme_timeout(text);
      // A device's own lines that are none of these ("nvidia 0000:3b:00.0: PCIe Bus Error: ...")
      // go on to the "DEVICE ADDRESS: " forms below.
      if (text.starts_with("nvidia-nvswitch"sv)) {
        if (auto e = sxid(text)) return e;
      } else if (text.starts_with("nouveau "sv)) {
        if (auto e = nouveau_bound(text)) return e;
      } else if (text.starts_with("nvidia"sv)) {
        if (auto e = probe_failed(text)) return e;
      }
      break;
    case 'm':
      if (text.starts_with("mce: "sv)) return machine_check(text);
      break;
    case 'A':
      if (text.starts_with("AER: "sv)) return aer(text);
      break;
    case 'a':
      if (text.starts_with("amdgpu "sv))
        if (auto e = amdgpu(text)) return e;
      break;
    case '[':
      if (text.starts_with("[drm:amdgpu_"sv)) return amdgpu(text);
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

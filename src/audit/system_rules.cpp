// Checks on the OS side that no kind of setting changes: /dev/shm, swap, the IOMMU, PCIe ACS,
// RDMA ports, the CPUs' idle states against the wake-up latency `run` holds (the settings' own
// judges are in settings/).
#include "audit/system_rules.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/data_paths.hpp"
#include "settings/mount_setting.hpp"
#include "settings/setting.hpp"
#include "settings/sysctl_files.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::audit {

std::vector<Finding> shm_size(const AuditInput& in, const settings::ProfileEntry& entry) {
  const auto& shm = in.facts.memory.shm;
  if (!shm || !shm->size_bytes) return {not_applicable(entry, "memory", "/dev/shm is not mounted")};
  Finding f = judge(
      entry, "memory", std::to_string(*shm->size_bytes),
      {{"/proc/self/mountinfo", fmt::format("/dev/shm {} ({})", shm->fstype, shm->size_source)}});
  const auto want = text::to_uint(entry.expected.values.empty() ? "" : entry.expected.values[0]);
  f.summary = fmt::format("/dev/shm is {}{}", text::human_bytes(*shm->size_bytes),
                          f.severity == Severity::kOk || !want
                              ? ""
                              : ", expected at least " + text::human_bytes(*want));
  // 8 GiB (room for several workers' image batches), or the profile's minimum when it asks for
  // more, in whole GiB rounded up: a fix that does not meet the profile is no fix.
  constexpr std::uint64_t kGiB = 1ULL << 30;
  const std::uint64_t gib =
      std::max<std::uint64_t>(8, want ? *want / kGiB + (*want % kGiB != 0) : 8);
  if (f.severity != Severity::kOk) {
    f.fix = Fix{
        fmt::format("mount -o remount,size={}G /dev/shm  (and the same size= in /etc/fstab)", gib),
        false};
  }
  container_advice(in, f,
                   fmt::format("docker run --shm-size={}g (or --ipc=host; on Kubernetes an "
                               "emptyDir with medium: Memory at /dev/shm)",
                               gib));
  return {f};
}

std::vector<Finding> swap_consistency(const AuditInput& in, const settings::ProfileEntry& entry) {
  const auto& m = in.facts.memory;
  const auto it = m.sysctls.find("vm.swappiness");
  const std::string swappiness = it == m.sysctls.end() ? "" : it->second;
  if (!m.swaps_known) {
    // A tree without /proc/swaps (or one that does not parse): not "no swap".
    Finding f = judge(entry, "memory", "unknown", {{"/proc/swaps", "cannot be read"}});
    f.severity = settings::Severity::kInfo;
    f.unknown = true;
    f.actual = "unknown";
    f.summary = "cannot tell whether this host has swap: /proc/swaps could not be read";
    return {f};
  }
  const bool has_swap = !m.swap_devices.empty();
  const auto sw = text::to_uint(swappiness);
  const bool consistent = !has_swap || (sw && *sw <= 10);
  Finding f = judge(
      entry, "memory", consistent ? "true" : "false",
      {{"/proc/swaps", has_swap ? fmt::format("{} swap device(s), {}", m.swap_devices.size(),
                                              text::human_bytes(m.swap_total_bytes.value_or(0)))
                                : "no swap"},
       {"/proc/sys/vm/swappiness", swappiness}});
  f.actual = has_swap ? "swap with vm.swappiness " + swappiness : "no swap";
  if (!has_swap) {
    f.summary = "no swap: vm.swappiness has no effect, and memory pressure ends in OOM kills";
  } else if (consistent) {
    f.summary =
        fmt::format("swap with vm.swappiness {}: the kernel swaps only under pressure", swappiness);
  } else {
    f.summary =
        fmt::format("swap with vm.swappiness {}: the job's memory may be swapped out", swappiness);
    // The shell line: swap.consistency is not a setting tune changes (vm.swappiness is, when the
    // profile sets it: that finding has its own tune command).
    f.fix = Fix{"sysctl -w vm.swappiness=10  (or swapoff -a; persist it in /etc/sysctl.d)", false};
    f.notes.push_back(
        "measured on a 2-vCPU Debian 12 virtual machine: swap-ins on a slow swap device made "
        "a training job 13 times slower (dltune's docs/measurements.md)");
  }
  container_advice(in, f, "");
  return {f};
}

std::vector<Finding> iommu_mode(const AuditInput& in, const settings::ProfileEntry& entry) {
  const auto& c = in.facts.os.cmdline;
  if (!c) return {not_applicable(entry, "kernel", "/proc/cmdline could not be read")};
  std::string mode = "default";
  if (c->iommu == "pt")
    mode = "pt";
  else if (c->iommu == "off" || c->intel_iommu == "off" || c->amd_iommu == "off")
    mode = "off";
  else if (c->intel_iommu == "on" || c->amd_iommu == "on" || c->iommu == "force")
    mode = "on";
  Finding f = judge(entry, "kernel", mode, {{"/proc/cmdline", c->raw}});
  if (mode == "default" && f.severity != Severity::kOk) {
    f.severity = Severity::kInfo;
    f.summary = "no IOMMU option on the kernel command line: the kernel's build default decides";
  }
  if (f.severity != Severity::kOk)
    f.fix = Fix{"add iommu=pt to GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub, reboot",
                false};
  container_advice(in, f, "");
  return {f};
}

// The idle states of CPU 0 (/sys/devices/system/cpu/cpu0/cpuidle/stateN: name, latency in µs,
// disable; Documentation/admin-guide/pm/cpuidle.rst, "Representation of Idle States"): the
// deepest one not disabled against the profile's cpu.latency_us, which `dltune run` holds on
// /dev/cpu_dma_latency while a job runs (a request that exists only while a process holds the
// file open: nothing for tune to set).
std::vector<Finding> cpu_latency(const AuditInput& in, const settings::ProfileEntry& entry) {
  const std::string dir = "/sys/devices/system/cpu/cpu0/cpuidle";
  const auto want = text::to_uint(entry.expected.values.empty() ? "" : entry.expected.values[0]);
  if (!want) return {not_applicable(entry, "cpu", "cpu.latency_us is not a number of µs")};
  std::optional<std::uint64_t> deepest;
  std::string name;
  std::vector<std::string> states;
  for (int i = 0; i < 32; ++i) {
    const std::string s = dir + "/state" + std::to_string(i);
    const auto latency = settings::read_trimmed(in.root, s + "/latency");
    if (!latency) break;
    const auto us = text::to_uint(*latency);
    const auto n =
        settings::read_trimmed(in.root, s + "/name").value_or("state" + std::to_string(i));
    const bool disabled = settings::read_trimmed(in.root, s + "/disable").value_or("0") == "1";
    states.push_back(fmt::format("{} {} µs{}", n, us ? std::to_string(*us) : "?",
                                 disabled ? " (disabled)" : ""));
    if (us && !disabled && (!deepest || *us >= *deepest)) {
      deepest = *us;
      name = n;
    }
  }
  if (!deepest)
    return {not_applicable(entry, "cpu",
                           "no CPU idle states in sysfs (cpuidle off: a VM's, or the firmware "
                           "decides)")};
  Finding f = judge(entry, "cpu", std::to_string(*deepest), {{dir, text::join(states, ", ")}});
  f.actual = fmt::format("{} µs ({})", *deepest, name);
  f.expected = fmt::format("at most {} µs to wake while a job runs", *want);
  const bool met = *deepest <= *want;
  f.severity = met ? Severity::kOk : Severity::kInfo;
  f.summary =
      met ? fmt::format("the deepest CPU idle state, {}, wakes in {} µs, within cpu.latency_us {}",
                        name, *deepest, *want)
          : fmt::format(
                "the deepest CPU idle state, {}, takes {} µs to wake, above cpu.latency_us "
                "{}: dltune run keeps the CPUs out of it while a job runs",
                name, *deepest, *want);
  if (!met)
    f.fix =
        Fix{"dltune run -p PROFILE -- COMMAND (the profile's cpu.latency_us is held on "
            "/dev/cpu_dma_latency while the job runs)",
            true};
  container_advice(in, f, "");
  return {f};
}

}  // namespace dltune::audit

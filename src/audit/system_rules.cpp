// Rules on the OS side: sysctls, THP, CPU governor, limits, /dev/shm, mount options, swap.
#include "audit/system_rules.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.hpp"
#include "settings/data_paths.hpp"
#include "settings/mount_setting.hpp"
#include "settings/sysctl_files.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::audit {

namespace {

Fix tune_fix(const std::string& key) {
  return Fix{"dltune tune apply --only " + key, true};
}

// Inside a container the host's settings are not ours to change: say what the runtime can set
// and that the rest is the host's to fix.
void container_advice(const AuditInput& in, Finding& f, const std::string& runtime_flag) {
  if (!in.in_container || f.severity == Severity::kOk || !f.applicable) return;
  if (!runtime_flag.empty()) {
    f.fix = Fix{runtime_flag, false};
    f.notes.push_back(
        "inside a container: the container runtime sets it when the container starts");
  } else {
    f.fix = Fix{"on the host: " + tune_fix(f.id).command, false};
    f.notes.push_back("inside a container this is the host's setting: the host must change it");
  }
}

Finding not_applicable(const settings::ProfileEntry& entry, const char* area, std::string why) {
  Finding f;
  f.id = entry.key;
  f.area = area;
  f.applicable = false;
  f.severity = Severity::kOk;
  f.summary = entry.key + ": not applicable: " + why;
  f.expected = entry.expected.text();
  f.reason = entry.reason;
  f.source = entry.source;
  return f;
}

Severity worse(Severity a, Severity b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

}  // namespace

std::vector<Finding> sysctl_rule(const AuditInput& in, const settings::ProfileEntry& entry) {
  const char* area = area_of(entry.key);
  auto path = settings::sysctl_path(entry.key);
  if (!path) return {not_applicable(entry, area, path.error().message())};
  auto raw = in.root.read(*path, 65536);
  if (!raw) {
    Finding f = judge(entry, area, "", {{*path, raw.error().message()}});
    f.summary = fmt::format("{}: cannot read {}", entry.key, raw.error().message());
    f.severity = Severity::kInfo;
    return {f};
  }
  if (!*raw) {
    // Inside a container only the namespaced sysctls (net.*, some kernel.*) are visible.
    return {not_applicable(entry, area,
                           in.in_container
                               ? "not visible inside this container (a host-wide setting: check "
                                 "it on the host)"
                               : "this kernel has no " + *path)};
  }
  const std::string value = text::normalise_spaces(**raw);
  std::string actual = value;
  if (entry.field) {
    const auto fl = text::fields(value);
    const auto i = static_cast<std::size_t>(*entry.field - 1);
    actual = i < fl.size() ? std::string(fl[i]) : "";
  }
  Finding f = judge(entry, area, actual, {{*path, value}});
  if (entry.field) f.summary += fmt::format(" (field {} of \"{}\")", *entry.field, value);
  if (f.severity != Severity::kOk) f.fix = tune_fix(entry.key);
  if (in.sysctl_files) {
    auto key = settings::sysctl_normalise(entry.key);
    if (key) {
      for (const auto& s : in.sysctl_files->sources(*key))
        f.evidence.push_back({fmt::format("{}:{}", s.file, s.line), s.value});
      for (const auto& s : in.sysctl_files->overriding_dltune(*key))
        f.notes.push_back(
            fmt::format("{}:{} sets {} = {} and is applied after {}: it would "
                        "override a persisted value at boot",
                        s.file, s.line, entry.key, s.value, settings::kDltuneSysctlFile));
    }
  }
  // net.* sysctls are per network namespace, so a container may set them itself; the rest are
  // the host's (docker run --sysctl accepts only namespaced ones).
  const bool namespaced = entry.key.starts_with("net.");
  std::string flag;
  if (namespaced && !entry.expected.values.empty())
    flag = fmt::format("docker run --sysctl {}={}", entry.key,
                       entry.expected.kind == settings::Expected::Kind::kAtLeast
                           ? entry.expected.values[0]
                           : entry.expected.values[0]);
  container_advice(in, f, flag);
  return {f};
}

std::vector<Finding> thp_rule(const AuditInput& in, const settings::ProfileEntry& entry) {
  const bool enabled = entry.key == "thp.enabled";
  const auto& choice = enabled ? in.facts.memory.thp_enabled : in.facts.memory.thp_defrag;
  const std::string path =
      std::string("/sys/kernel/mm/transparent_hugepage/") + (enabled ? "enabled" : "defrag");
  if (!choice || !choice->selected)
    return {not_applicable(entry, "memory",
                           "this kernel has no transparent huge pages (" + path + ")")};
  Finding f = judge(entry, "memory", *choice->selected,
                    {{path, fmt::format("{}", fmt::join(choice->options, " "))}});
  if (f.severity != Severity::kOk) f.fix = tune_fix(entry.key);
  container_advice(in, f, "");
  return {f};
}

std::vector<Finding> cpu_governor(const AuditInput& in, const settings::ProfileEntry& entry) {
  const auto& g = in.facts.cpu.governors;
  if (g.empty())
    return {not_applicable(entry, "cpu",
                           "no cpufreq on this host (fixed frequency, or the hypervisor's)")};
  std::vector<std::string> parts;
  std::vector<Evidence> ev;
  bool all_ok = true;
  for (const auto& [gov, cpus] : g) {
    parts.push_back(g.size() == 1 ? gov
                                  : fmt::format("{} on CPUs {}", gov, text::format_cpu_list(cpus)));
    ev.push_back(
        {fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpus.front()),
         fmt::format("{} (CPUs {})", gov, text::format_cpu_list(cpus))});
    all_ok = all_ok && entry.expected.matches(gov);
  }
  const std::string actual = fmt::format("{}", fmt::join(parts, ", "));
  Finding f = judge(entry, "cpu", all_ok ? entry.expected.values.front() : actual, std::move(ev));
  f.actual = actual;
  if (!all_ok) {
    f.summary = fmt::format("cpu.governor is {}, expected {}", actual, f.expected);
    f.fix = tune_fix(entry.key);
  }
  container_advice(in, f, "");
  return {f};
}

std::vector<Finding> limit_rule(const AuditInput& in, const settings::ProfileEntry& entry) {
  const std::string name = entry.key.substr(entry.key.find('.') + 1);  // "nofile"
  const auto it = in.facts.memory.limits.find(name);
  if (it == in.facts.memory.limits.end())
    return {not_applicable(entry, "limits", "/proc/self/limits does not say")};
  auto text_of = [](const std::optional<std::uint64_t>& v) {
    return v ? std::to_string(*v) : std::string("unlimited");
  };
  const std::string soft = text_of(it->second.soft), hard = text_of(it->second.hard);
  Finding s = judge(entry, "limits", soft, {});
  Finding h = judge(entry, "limits", hard, {});
  Finding f =
      judge(entry, "limits", soft, {{"/proc/self/limits", "soft " + soft + ", hard " + hard}});
  f.severity = worse(s.severity, h.severity);
  f.actual = "soft " + soft + ", hard " + hard;
  f.summary = f.severity == Severity::kOk
                  ? fmt::format("{} is {}", entry.key, f.actual)
                  : fmt::format("{} is {}, expected {} for both", entry.key, f.actual, f.expected);
  if (f.severity != Severity::kOk) {
    f.fix = Fix{"dltune tune apply --persist --only " + entry.key, true};
    f.notes.push_back(
        "these are the limits of the process that ran dltune, which the jobs it "
        "starts inherit; limits.d changes take effect at the next login");
  }
  const std::string want = entry.expected.values.empty() ? "" : entry.expected.values[0];
  const std::string ulimit = want == "unlimited" ? "-1" : want + ":" + want;
  container_advice(in, f, "docker run --ulimit " + name + "=" + ulimit);
  return {f};
}

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
  if (f.severity != Severity::kOk) {
    f.fix = Fix{"mount -o remount,size=8G /dev/shm  (and the same size= in /etc/fstab)", false};
  }
  container_advice(in, f,
                   "docker run --shm-size=8g (or --ipc=host; on Kubernetes an emptyDir "
                   "with medium: Memory at /dev/shm)");
  return {f};
}

std::vector<Finding> mount_noatime(const AuditInput& in, const settings::ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = in.data_paths.empty() ? settings::default_data_paths() : in.data_paths;
  for (const auto& d : settings::data_file_systems(in.root, in.facts, paths)) {
    const auto* best = d.fs;
    const std::string mode = settings::atime_mode(text::join(best->options, ","));
    Finding f =
        judge(entry, "storage", mode == "noatime" ? "true" : "false",
              {{"/proc/self/mountinfo", fmt::format("{} {} {}", best->mount_point, best->fstype,
                                                    fmt::join(best->options, ","))}});
    f.actual = mode;
    if (f.severity == Severity::kOk) {
      f.summary = fmt::format("{} ({}) is mounted noatime", best->mount_point, best->fstype);
    } else {
      // relatime writes an access time at most once a day per file: little to gain.
      if (mode == "relatime") f.severity = Severity::kInfo;
      f.summary =
          fmt::format("{} ({}) is mounted {}, not noatime{}", best->mount_point, best->fstype, mode,
                      d.path == best->mount_point ? "" : " (holds " + d.path + ")");
      f.fix = Fix{fmt::format("dltune tune apply --only mount.noatime{} --persist",
                              in.data_paths.empty() ? "" : " --data " + d.path),
                  true};
      f.notes.push_back(
          "every read of a training file also writes its access time unless the "
          "file system is mounted noatime");
    }
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(not_applicable(entry, "storage", "no file system holds the data paths"));
  return out;
}

std::vector<Finding> block_read_ahead(const AuditInput& in, const settings::ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = in.data_paths.empty() ? settings::default_data_paths() : in.data_paths;
  for (const auto& d : settings::data_file_systems(in.root, in.facts, paths)) {
    if (!d.disk) continue;
    const std::string file = "/sys/block/" + *d.disk + "/queue/read_ahead_kb";
    auto raw = in.root.read(file, 4096);
    if (!raw || !*raw) continue;
    const std::string kb = text::normalise_spaces(**raw);
    if (std::any_of(out.begin(), out.end(), [&](const Finding& f) {
          return !f.evidence.empty() && f.evidence.front().path == file;
        }))
      continue;
    Finding f = judge(entry, "storage", kb, {{file, kb}});
    f.summary = fmt::format("{} (holding {}) reads ahead {} KiB{}", *d.disk, d.fs->mount_point, kb,
                            f.severity == Severity::kOk ? "" : ", expected " + f.expected);
    if (f.severity != Severity::kOk)
      f.fix = Fix{fmt::format("dltune tune apply --only block.read_ahead_kb{} --persist",
                              in.data_paths.empty() ? "" : " --data " + d.path),
                  true};
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(not_applicable(entry, "storage", "no disk under the data paths' file systems"));
  return out;
}

std::vector<Finding> swap_consistency(const AuditInput& in, const settings::ProfileEntry& entry) {
  const auto& m = in.facts.memory;
  const auto it = m.sysctls.find("vm.swappiness");
  const std::string swappiness = it == m.sysctls.end() ? "" : it->second;
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
    f.fix = tune_fix("vm.swappiness");
    f.notes.push_back(
        "measured on the development VM: swap-ins on a slow swap device made a "
        "training job 14x slower (dltune's docs/measurements.md)");
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

}  // namespace dltune::audit

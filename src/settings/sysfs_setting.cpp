// Values in sysfs that tune changes: transparent huge pages, the CPU frequency governor and
// energy-performance preference, and the read-ahead of the disks under the training data. Their
// boot-time form is a tmpfiles.d line; a disk's, a rule of dltune's udev file (a disk can come
// up under another name at the next boot).
#include <algorithm>

#include <fmt/format.h>

#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/data_paths.hpp"

namespace dltune::settings {

namespace {

constexpr const char* kThpDir = "/sys/kernel/mm/transparent_hugepage/";
constexpr const char* kGovernorGlob = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor";
constexpr const char* kGovernorsOffered =
    "/sys/devices/system/cpu/cpu*/cpufreq/scaling_available_governors";

// A choice the kernel lists in its own file (THP's "always [madvise] never", cpufreq's
// scaling_available_governors) can only take a value from that list. The profile's wish with the
// first value the host offers in front, so that tune writes one the kernel takes; unchanged when
// the host's list is unknown. None of the profile's values offered: the reason, naming the
// setting, the value, the file and what it allows.
Result<Expected> offered(const ProfileEntry& e, const std::vector<std::string>& options,
                         const std::string& file) {
  if (options.empty() || e.expected.kind == Expected::Kind::kAtLeast) return e.expected;
  for (const auto& v : e.expected.values) {
    if (std::find(options.begin(), options.end(), v) == options.end()) continue;
    Expected want = e.expected;
    std::erase(want.values, v);
    want.values.insert(want.values.begin(), v);
    return want;
  }
  return fail(fmt::format("{} = {} ({}): this host does not offer {}; {} allows {}", e.key,
                          e.expected.text(), e.origin.empty() ? "profile" : "profile " + e.origin,
                          e.expected.values.size() == 1 ? "it" : "any of them", file,
                          fmt::join(options, ", ")));
}

// check's form of the same refusal: a finding that says the profile asks for what this host
// cannot be set to, with no tune command (tune would refuse it too).
std::optional<Finding> not_offered(const ProfileEntry& e, const char* area,
                                   const std::string& actual,
                                   const std::vector<std::string>& options,
                                   const std::string& file) {
  auto want = offered(e, options, file);
  if (want) return std::nullopt;
  Finding f = judge(e, area, actual, {{file, fmt::format("{}", fmt::join(options, " "))}});
  if (f.severity == Severity::kOk) return std::nullopt;  // it is what the host has: fine
  f.summary = fmt::format("{} is {}; the profile asks for {}, which this host does not offer",
                          e.key, actual, e.expected.text());
  f.notes.push_back(want.error().what);
  f.fix =
      Fix{fmt::format("choose one of {} for {} in the profile", fmt::join(options, ", "), e.key),
          false};
  return f;
}

}  // namespace

Result<void> plan_thp(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const bool enabled = e.key == "thp.enabled";
  const auto& memory = context.facts.memory;
  const auto& choice = enabled ? memory.thp_enabled : memory.thp_defrag;
  if (!choice || !choice->selected) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = "no transparent huge pages in this kernel";
    return {};
  }
  const std::string path = std::string(kThpDir) + (enabled ? "enabled" : "defrag");
  auto want = offered(e, choice->options, path);
  if (!want) return tl::unexpected(want.error());
  const auto target = target_value(*want, *choice->selected, std::nullopt);
  context.persisted.sysfs[path] = target.value_or(*choice->selected);
  if (!target) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = "already " + *choice->selected;
    return {};
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> {}", *choice->selected, *target);
  item.changes.push_back({e.key, "sysfs", path, *choice->selected, *target, false});
  return {};
}

namespace {

// A per-CPU cpufreq file (the governor, the energy-performance preference): `values` is value ->
// CPUs, `offered_list` what the driver offers, `file` the name under cpuN/cpufreq/.
struct PerCpu {
  const std::map<std::string, std::vector<int>>& values;
  const std::vector<std::string>& offered_list;
  const char* file;
  const char* glob;     // every CPU's, for the tmpfiles.d line
  const char* offered;  // the file that lists what is offered, as a glob
  const char* none;     // the summary where no CPU has the file
};

std::string cpu_file(int cpu, const char* file) {
  return fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/{}", cpu, file);
}

Result<void> plan_per_cpu(PlanContext& context, const ProfileEntry& e, PlanItem& item,
                          const PerCpu& f) {
  if (f.values.empty()) {
    item.status = PlanItem::Status::kNotApplicable;
    item.summary = f.none;
    return {};
  }
  if (e.expected.values.empty()) return {};
  auto want = offered(e, f.offered_list, f.offered);
  if (!want) return tl::unexpected(want.error());
  // At boot every CPU gets it (tmpfiles.d's w lines take a glob).
  const auto& first = f.values.begin()->first;
  context.persisted.sysfs[f.glob] =
      want->matches(first) && f.values.size() == 1 ? first : want->values.front();
  std::vector<std::string> from;
  std::string target_value_text;
  for (const auto& [value, cpus] : f.values) {
    const auto target = target_value(*want, value, std::nullopt);
    if (!target) continue;
    target_value_text = *target;
    from.push_back(fmt::format("{} on CPUs {}", value, text::format_cpu_list(cpus)));
    for (int cpu : cpus)
      item.changes.push_back({e.key, "sysfs", cpu_file(cpu, f.file), value, *target, false});
  }
  if (item.changes.empty()) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = "already " + e.expected.text() + " on every CPU";
    return {};
  }
  item.status = PlanItem::Status::kChange;
  item.summary = fmt::format("{} -> {}", fmt::join(from, ", "), target_value_text);
  return {};
}

std::vector<Finding> check_per_cpu(const CheckInput& in, const ProfileEntry& entry, const PerCpu& f,
                                   const char* none) {
  const auto& g = f.values;
  if (g.empty()) return {not_applicable(entry, "cpu", none)};
  std::vector<std::string> parts;
  std::vector<Evidence> ev;
  bool all_ok = true;
  for (const auto& [value, cpus] : g) {
    parts.push_back(
        g.size() == 1 ? value : fmt::format("{} on CPUs {}", value, text::format_cpu_list(cpus)));
    ev.push_back({cpu_file(cpus.front(), f.file),
                  fmt::format("{} (CPUs {})", value, text::format_cpu_list(cpus))});
    all_ok = all_ok && entry.expected.matches(value);
  }
  const std::string actual = fmt::format("{}", fmt::join(parts, ", "));
  if (auto n = not_offered(entry, "cpu", actual, f.offered_list, f.offered)) return {*n};
  Finding out = judge(entry, "cpu", all_ok ? entry.expected.values.front() : actual, std::move(ev));
  out.actual = actual;
  if (!all_ok) {
    out.summary = fmt::format("{} is {}, expected {}", entry.key, actual, out.expected);
    out.fix = tune_fix(entry.key);
  }
  container_advice(in, out, "");
  return {out};
}

PerCpu governor_files(const inventory::CpuFacts& cpu) {
  return {cpu.governors, cpu.available_governors, "scaling_governor",
          kGovernorGlob, kGovernorsOffered,       "no cpufreq on this host"};
}

PerCpu epp_files(const inventory::CpuFacts& cpu) {
  return {cpu.epp,
          cpu.available_epp,
          "energy_performance_preference",
          "/sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference",
          "/sys/devices/system/cpu/cpu*/cpufreq/energy_performance_available_preferences",
          "no energy-performance preference on this host (intel_pstate or amd-pstate in active "
          "mode has one)"};
}

}  // namespace

Result<void> plan_governor(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  return plan_per_cpu(context, e, item, governor_files(context.facts.cpu));
}

Result<void> plan_epp(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  return plan_per_cpu(context, e, item, epp_files(context.facts.cpu));
}

Result<void> plan_read_ahead(PlanContext& context, const ProfileEntry& e, PlanItem& item) {
  const auto paths = context.data_paths.empty() ? default_data_paths() : context.data_paths;
  std::vector<std::string> from, ok, seen;
  for (const auto& d : data_file_systems(context.root, context.facts, paths)) {
    if (!d.disk) continue;
    const std::string path = "/sys/block/" + *d.disk + "/queue/read_ahead_kb";
    if (std::find(seen.begin(), seen.end(), *d.disk) != seen.end())
      continue;  // two file systems on one disk
    seen.push_back(*d.disk);
    const auto current = read_trimmed(context.root, path);
    if (!current) continue;
    const auto target = target_value(e.expected, *current, std::nullopt);
    persist_disk_attribute(context, *d.disk, "queue/read_ahead_kb", target.value_or(*current));
    if (!target) {
      ok.push_back(fmt::format("{} {} KiB", *d.disk, *current));
      continue;
    }
    from.push_back(fmt::format("{} {} -> {} KiB", *d.disk, *current, *target));
    item.changes.push_back({e.key, "sysfs", path, *current, *target, false});
  }
  finish_disk_plan(item, from, ok, "no disk under the data paths' file systems");
  return {};
}

void finish_disk_plan(PlanItem& item, const std::vector<std::string>& from,
                      const std::vector<std::string>& ok, const char* none_summary) {
  if (item.changes.empty()) {
    item.status = ok.empty() ? PlanItem::Status::kNotApplicable : PlanItem::Status::kAlreadyOk;
    item.summary = ok.empty() ? none_summary : fmt::format("already {}", fmt::join(ok, ", "));
    return;
  }
  item.status = PlanItem::Status::kChange;
  item.summary = text::join(from, ", ");
}

void persist_disk_attribute(PlanContext& context, const std::string& disk,
                            const std::string& attribute, const std::string& value) {
  auto& by_name = context.persisted.udev_by_name;
  const auto named = [&] {
    if (std::find(by_name.begin(), by_name.end(), disk) == by_name.end()) by_name.push_back(disk);
  };
  // Without udev (no rules directory: a container, a minimal VM) a tmpfiles.d line instead,
  // which names the disk as it is named now.
  if (!context.root.exists("/etc/udev/rules.d")) {
    context.persisted.sysfs["/sys/block/" + disk + "/" + attribute] = value;
    named();
    return;
  }
  const auto m = udev_disk_match(context.root, disk);
  context.persisted.udev[m.match][attribute] = value;
  if (m.by_name) named();
}

std::vector<Finding> check_thp(const CheckInput& in, const ProfileEntry& entry) {
  const bool enabled = entry.key == "thp.enabled";
  const auto& choice = enabled ? in.facts.memory.thp_enabled : in.facts.memory.thp_defrag;
  const std::string path =
      std::string("/sys/kernel/mm/transparent_hugepage/") + (enabled ? "enabled" : "defrag");
  if (!choice || !choice->selected)
    return {not_applicable(entry, "memory",
                           "this kernel has no transparent huge pages (" + path + ")")};
  // The fix is the profile's, wherever the host runs: no container advice.
  if (auto f = not_offered(entry, "memory", *choice->selected, choice->options, path)) return {*f};
  Finding f = judge(entry, "memory", *choice->selected,
                    {{path, fmt::format("{}", fmt::join(choice->options, " "))}});
  if (f.severity != Severity::kOk) f.fix = tune_fix(entry.key);
  container_advice(in, f, "");
  return {f};
}

std::vector<Finding> check_governor(const CheckInput& in, const ProfileEntry& entry) {
  return check_per_cpu(in, entry, governor_files(in.facts.cpu),
                       "no cpufreq on this host (fixed frequency, or the hypervisor's)");
}

namespace {

// Intel's energy-performance bias beside the preference (Documentation/admin-guide/pm/
// intel_epb.rst): reported as evidence, and a note where it leans to saving power (8 and up:
// balance-power, power), which the CPU's own power management (turbo, uncore clocks, and the
// frequency itself where HWP has no EPP) follows. Without a preference, such a bias is the
// finding itself (info).
const char* epb_name(int v) {
  switch (v) {
    case 0:
      return "performance";
    case 4:
      return "balance-performance";
    case 6:
      return "normal";
    case 8:
      return "balance-power";
    case 15:
      return "power";
    default:
      return nullptr;
  }
}

void add_epb(const inventory::CpuFacts& cpu, const ProfileEntry& entry, Finding& f) {
  std::vector<std::string> saving;
  for (const auto& [bias, cpus] : cpu.epb) {
    const char* name = epb_name(bias);
    const std::string shown = name ? fmt::format("{} ({})", bias, name) : std::to_string(bias);
    f.evidence.push_back(
        {fmt::format("/sys/devices/system/cpu/cpu{}/power/energy_perf_bias", cpus.front()),
         fmt::format("{} (CPUs {})", shown, text::format_cpu_list(cpus))});
    if (bias >= 8)
      saving.push_back(fmt::format("{} on CPUs {}", shown, text::format_cpu_list(cpus)));
  }
  if (saving.empty()) return;
  const std::string note = fmt::format(
      "energy_perf_bias leans to saving power ({}): turbo, the uncore's clock and, where HWP has "
      "no preference, the frequency follow it; write `performance` (or 0-6) to each CPU's "
      "power/energy_perf_bias, as x86_energy_perf_policy does (intel_epb.rst)",
      fmt::join(saving, ", "));
  if (f.applicable) {
    f.notes.push_back(note);
    return;
  }
  const std::string why = f.summary;
  f = judge(entry, "cpu", "", std::move(f.evidence));
  f.severity = Severity::kInfo;
  f.actual = fmt::format("energy_perf_bias {}", fmt::join(saving, ", "));
  f.summary = fmt::format("no energy-performance preference here ({}); energy_perf_bias is {}", why,
                          fmt::join(saving, ", "));
  f.notes.push_back(note);
}

}  // namespace

std::vector<Finding> check_epp(const CheckInput& in, const ProfileEntry& entry) {
  auto f = epp_files(in.facts.cpu);
  std::string none = f.none;
  if (in.facts.cpu.scaling_driver)
    none += fmt::format("; the cpufreq driver is {}", *in.facts.cpu.scaling_driver);
  auto out = check_per_cpu(in, entry, f, none.c_str());
  if (!out.empty()) add_epb(in.facts.cpu, entry, out.front());
  return out;
}

std::vector<Finding> check_read_ahead(const CheckInput& in, const ProfileEntry& entry) {
  std::vector<Finding> out;
  const auto paths = check_data_paths(in.facts, in.data_paths);
  for (const auto& d : data_file_systems(in.root, in.facts, paths)) {
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
    if (f.severity != Severity::kOk) f.fix = data_fix(entry.key, in.data_paths, d.path);
    container_advice(in, f, "");
    out.push_back(std::move(f));
  }
  if (out.empty())
    out.push_back(not_applicable(entry, "storage", "no disk under the data paths' file systems"));
  return out;
}

}  // namespace dltune::settings

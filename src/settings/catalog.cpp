#include "settings/catalog.hpp"

#include <set>

#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "settings/profile.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::settings {

const std::vector<KeySpec>& catalog() {
  static const std::vector<KeySpec> kCatalog = {
      {"thp.enabled", "memory", plan_thp, check_thp},
      {"thp.defrag", "memory", plan_thp, check_thp},
      {"cpu.governor", "cpu", plan_governor, check_governor},
      {"cpu.epp", "cpu", plan_epp, check_epp},
      {"cpu.latency_us", "cpu", nullptr, nullptr},
      {"irq.affinity", "cpu", plan_irq_affinity, check_irq_affinity},
      {"limits.nofile", "limits", plan_limits, check_limits},
      {"limits.memlock", "limits", plan_limits, check_limits},
      {"shm.size", "memory", nullptr, nullptr},
      {"mount.noatime", "storage", plan_mount, check_mount},
      {"block.read_ahead_kb", "storage", plan_read_ahead, check_read_ahead},
      {"block.scheduler", "storage", plan_scheduler, check_scheduler},
      {"block.nr_requests", "storage", plan_nr_requests, check_nr_requests},
      {"storage.data_device", "storage", nullptr, nullptr},
      {"storage.trim", "storage", nullptr, nullptr},
      {"swap.consistency", "memory", nullptr, nullptr},
      {"iommu.mode", "kernel", nullptr, nullptr},
      {"pci.acs", "kernel", nullptr, nullptr},
      {"pci.gpu_nic", "network", nullptr, nullptr},
      {"rdma.ports", "network", nullptr, nullptr},
      {"nic.settings", "network", nullptr, nullptr},
      {"gpu.health", "gpu", nullptr, nullptr},
      {"gpu.persistence", "gpu", plan_gpu_persistence, check_gpu_persistence},
      {"gpu.nouveau", "gpu", nullptr, nullptr},
      {"gpu.driver_match", "gpu", nullptr, nullptr},
      {"gpu.driver_cuda", "gpu", nullptr, nullptr},
      {"gpu.pcie_link", "gpu", nullptr, nullptr},
      {"gpu.ecc", "gpu", nullptr, nullptr},
      {"gpu.throttle", "gpu", nullptr, nullptr},
      {"gpu.power_limit", "gpu", nullptr, nullptr},
      {"gpu.mig", "gpu", nullptr, nullptr},
      {"gpu.nvlink", "gpu", nullptr, nullptr},
      {"gpu.numa_placement", "gpu", nullptr, nullptr},
      {"env.training", "environment", nullptr, nullptr},
      {"build.toolchain", "environment", nullptr, nullptr},
      {"blas.library", "environment", nullptr, nullptr},
      // sysctl(8) families: the top directories of /proc/sys.
      {"vm.", "memory", plan_sysctl, check_sysctl},
      {"net.", "network", plan_sysctl, check_sysctl},
      {"kernel.", "kernel", plan_sysctl, check_sysctl},
      {"fs.", "kernel", plan_sysctl, check_sysctl},
      {"dev.", "kernel", plan_sysctl, check_sysctl},
      {"user.", "kernel", plan_sysctl, check_sysctl},
      {"abi.", "kernel", plan_sysctl, check_sysctl},
  };
  return kCatalog;
}

const char* area_of(const std::string& key) {
  const auto* spec = spec_for(key);
  return spec != nullptr ? spec->area : "kernel";
}

const KeySpec* spec_for(std::string_view key) {
  for (const auto& s : catalog()) {
    const std::string_view k = s.key;
    if (s.family() ? key.starts_with(k) && key.size() > k.size() : key == k) return &s;
  }
  return nullptr;
}

Result<void> validate_key(const std::string& key) {
  const KeySpec* s = spec_for(key);
  if (s == nullptr)
    return fail("unknown setting (not a sysctl, a known sysfs setting, a limit or a check):", key);
  if (s->family()) {
    auto path = sysctl_path(key);
    if (!path) return tl::unexpected(path.error());
  }
  return {};
}

namespace {

Result<std::optional<std::string>> read_file(const host::Root& root, const std::string& target) {
  return root.read(target);
}

Result<std::string> write_file(const host::Root& root, const std::string& target,
                               const std::string& value) {
  if (auto w = root.write_atomic(target, value); !w) return tl::unexpected(w.error());
  auto back = root.read(target);
  if (!back) return tl::unexpected(back.error());
  if (!*back) return fail("the file vanished after it was written:", target, ENOENT);
  return **back;
}

}  // namespace

const ChangeKind kFileChange = {"file", read_file, write_file, true};

const ChangeKind* change_kind(std::string_view name) {
  static const ChangeKind* const kKinds[] = {&kSysctlChange, &kSysfsChange, &kCgroupChange,
                                             &kFileChange,   &kMountChange, &kNvmlChange,
                                             &kIrqChange};
  for (const ChangeKind* k : kKinds)
    if (name == k->name) return k;
  return nullptr;
}

const char* status_name(PlanItem::Status s) {
  switch (s) {
    case PlanItem::Status::kChange:
      return "change";
    case PlanItem::Status::kAlreadyOk:
      return "ok";
    case PlanItem::Status::kNotTunable:
      return "not tunable";
    case PlanItem::Status::kNotApplicable:
      return "not applicable";
  }
  return "?";
}

std::optional<std::string> target_value(const Expected& expected, const std::string& current,
                                        std::optional<int> field) {
  const std::string value = text::normalise_spaces(current);
  if (!field) {
    if (expected.matches(value)) return std::nullopt;
    return expected.values.front();
  }
  auto parts = text::fields(value);
  const auto i = static_cast<std::size_t>(*field - 1);
  if (i >= parts.size()) return std::nullopt;  // not the shape the profile expects: leave it
  if (expected.matches(parts[i])) return std::nullopt;
  std::string out;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (!out.empty()) out += ' ';
    out += k == i ? expected.values.front() : std::string(parts[k]);
  }
  return out;
}

std::string effective_value(std::string_view raw) {
  if (raw.find('[') != std::string_view::npos) {
    const auto choice = host::parse::bracket_choice(raw);
    if (choice.selected) return *choice.selected;
  }
  return text::normalise_spaces(raw);
}

Result<std::optional<std::string>> read_setting(const host::Root& root, const std::string& key,
                                                const std::string& path) {
  auto r = root.read(path, 65536);
  if (!r) return fail(key + ": " + r.error().what, r.error().input, r.error().errno_);
  if (!*r) return std::optional<std::string>();
  return std::optional<std::string>(text::normalise_spaces(**r));
}

std::optional<std::string> read_trimmed(const host::Root& root, const std::string& path) {
  auto r = read_setting(root, path, path);
  return r ? *r : std::nullopt;
}

std::vector<std::string> known_setting_ids() {
  std::set<std::string> ids;
  for (const auto& spec : catalog())
    if (!spec.family()) ids.insert(spec.key);
  const auto any_key = [](const std::string&) -> Result<void> { return {}; };
  for (const auto& name : builtin_profiles())
    if (const auto text = builtin_profile_text(name))
      if (auto profile = parse_profile(*text, "profiles/" + name + ".toml", any_key))
        for (const auto& entry : profile->entries) ids.insert(entry.key);
  return {ids.begin(), ids.end()};
}

}  // namespace dltune::settings

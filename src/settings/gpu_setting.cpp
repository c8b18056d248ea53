// GPU persistence mode, changed through NVML (gpu/persistence_setting.hpp). The target names the
// GPU by UUID, so that a rollback after a reboot or a re-enumeration reaches the same GPU.
#include <fmt/format.h>

#include "gpu/persistence_setting.hpp"
#include "settings/catalog.hpp"

namespace dltune::settings {

namespace {

const char* on_off(bool v) {
  return v ? "on" : "off";
}

// "GPU 1 (NVIDIA H100 80GB HBM3)", or with its bus id when NVML gave no name.
std::string gpu_label(const gpu::Device& d) {
  if (d.name) return fmt::format("GPU {} ({})", d.index, *d.name);
  return gpu::label(d);
}

void not_applicable(PlanItem& item, std::string why) {
  item.status = PlanItem::Status::kNotApplicable;
  item.summary = std::move(why);
}

Result<std::optional<std::string>> read_nvml(const host::Root&, const std::string& target) {
  return gpu::read_nvml_setting(target);
}

Result<std::string> write_nvml(const host::Root&, const std::string& target,
                               const std::string& value) {
  return gpu::write_nvml_setting(target, value);
}

void plan(const inventory::HostFacts& facts, const ProfileEntry& entry, bool persist,
          PlanItem& item) {
  const auto& g = facts.gpu;
  const auto want = entry.expected.as_bool();
  if (!want) {
    item.status = PlanItem::Status::kNotTunable;
    item.summary =
        fmt::format("the profile's value '{}' is neither true nor false", entry.expected.text());
    return;
  }
  if (!inventory::has_nvidia_gpu(g)) return not_applicable(item, inventory::kNoNvidiaGpu);
  // NVML changes the GPUs of the machine dltune runs on, never those of a capture (--root).
  if (g.nvml_from_capture)
    return not_applicable(item,
                          "the GPU facts come from a capture (--root): tune changes GPUs only on "
                          "the host it runs on");
  if (!g.nvml.loaded)
    return not_applicable(item,
                          "NVML did not load: " + g.nvml.error.value_or("no error was given"));
  if (g.nvml.devices.empty())
    return not_applicable(item, "NVML lists no GPU, although the PCI bus has NVIDIA GPUs");

  std::vector<std::string> changed;
  int known = 0;
  for (const auto& d : g.nvml.devices) {
    if (!d.persistence_mode || !d.uuid) {
      item.notes.push_back(fmt::format("{}: NVML reported no {}; left alone", gpu_label(d),
                                       d.uuid ? "persistence mode" : "UUID"));
      continue;
    }
    ++known;
    if (*d.persistence_mode == *want) continue;
    changed.push_back(gpu_label(d));
    item.changes.push_back({entry.key, "nvml", fmt::format("nvml:{}/persistence_mode", *d.uuid),
                            on_off(*d.persistence_mode), on_off(*want), false});
  }
  if (known == 0) return not_applicable(item, "NVML reported the persistence mode of no GPU");
  if (changed.empty()) {
    item.status = PlanItem::Status::kAlreadyOk;
    item.summary = fmt::format("already {} on every GPU", on_off(*want));
  } else {
    item.status = PlanItem::Status::kChange;
    item.summary =
        fmt::format("{} -> {} on {}", on_off(!*want), on_off(*want), fmt::join(changed, ", "));
  }
  // NVML reference, nvmlDeviceSetPersistenceMode: "not persistent across reboots"; the mode is
  // off again at boot unless NVIDIA's daemon turns it on.
  if (persist && *want)
    item.notes.push_back(
        "NVML's setting lasts until the next reboot; to keep persistence mode on across reboots "
        "enable NVIDIA's daemon: systemctl enable --now nvidia-persistenced (dltune writes no "
        "systemd unit)");
}

}  // namespace

const ChangeKind kNvmlChange = {"nvml", read_nvml, write_nvml, false};

Result<void> plan_gpu_persistence(PlanContext& context, const ProfileEntry& entry, PlanItem& item) {
  plan(context.facts, entry, context.persist, item);
  return {};
}

}  // namespace dltune::settings

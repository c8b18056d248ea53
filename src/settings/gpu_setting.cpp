// GPU persistence mode, changed through NVML (gpu/persistence_setting.hpp). The target names the
// GPU by UUID, so that a rollback after a reboot or a re-enumeration reaches the same GPU.
#include <fmt/format.h>

#include "gpu/persistence_setting.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/gpu_judge.hpp"

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

std::vector<Finding> check_gpu_persistence(const CheckInput& in, const ProfileEntry& e) {
  using namespace gpu_judge;
  const auto& g = in.facts.gpu;
  const bool want = expected_bool(e).value_or(true);
  const std::string expected = want ? "on" : "off";
  if (!has_nvidia_gpu(g)) return no_gpu(e, expected);
  if (!g.nvml.loaded) return without_nvml(e, g, "persistence mode", expected);
  if (g.nvml.devices.empty()) return nvml_lists_none(e, g, expected);
  std::vector<Finding> out;
  for (const auto& d : g.nvml.devices) {
    Finding f = frame(e, expected);
    const auto who = label(d);
    if (!d.persistence_mode) {
      f.severity = Severity::kInfo;
      f.summary = fmt::format("{}: NVML did not report persistence mode", who);
      f.evidence.push_back({nvml_path(g), fmt::format("{}: persistence mode not reported", who)});
      out.push_back(std::move(f));
      continue;
    }
    f.actual = *d.persistence_mode ? "on" : "off";
    f.evidence.push_back({nvml_path(g), fmt::format("{}: persistence mode {}", who, f.actual)});
    if (*d.persistence_mode == want) {
      f.summary = fmt::format("{}: persistence mode is {}", who, f.actual);
    } else {
      f.severity = not_met(e);
      f.summary = fmt::format("{}: persistence mode is {}, expected {}", who, f.actual, expected);
      // tune sets it through NVML (nvmlDeviceSetPersistenceMode), as nvidia-smi -pm does.
      f.fix = Fix{"dltune tune apply --only " + e.key, true};
      if (want)
        f.notes.push_back(
            "Persistence mode set through NVML (dltune tune, nvidia-smi -pm 1) lasts until the "
            "next reboot; NVIDIA's daemon keeps it on across reboots: systemctl enable --now "
            "nvidia-persistenced.");
      host_only(f, in, "the GPUs' persistence mode");
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::settings

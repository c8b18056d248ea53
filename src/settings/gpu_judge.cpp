#include "settings/gpu_judge.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/core.h>

#include "core/text.hpp"
#include "inventory/capture_files.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::settings::gpu_judge {

Finding frame(const ProfileEntry& entry, std::string expected) {
  Finding f;
  f.id = entry.key;
  f.area = kArea;
  f.severity = Severity::kOk;
  f.expected = std::move(expected);
  f.reason = entry.reason;
  f.source = entry.source;
  return f;
}

Severity not_met(const ProfileEntry& entry) {
  return severity_from(entry.severity).value_or(Severity::kWarn);
}

std::optional<bool> expected_bool(const ProfileEntry& entry) {
  return entry.expected.as_bool();
}

std::vector<Finding> no_gpu(const ProfileEntry& entry, std::string expected) {
  Finding f = frame(entry, std::move(expected));
  f.applicable = false;
  f.summary = kNoGpu;
  f.evidence.push_back({"/sys/bus/pci/devices", "no NVIDIA display or 3D controller"});
  return {std::move(f)};
}

std::vector<Finding> without_nvml(const ProfileEntry& entry, const inventory::GpuFacts& g,
                                  std::string_view what, std::string expected) {
  Finding f = frame(entry, std::move(expected));
  f.severity = Severity::kInfo;
  f.unknown = true;
  const std::string error = g.nvml.error.value_or("it did not load");
  f.summary = fmt::format("{} cannot be checked without NVML: {}", what, error);
  f.evidence.push_back({nvml_path(g), error});
  f.notes.push_back(
      "NVML (libnvidia-ml.so.1) comes with the NVIDIA driver; inside a container the NVIDIA "
      "Container Toolkit mounts it (docker run --gpus all), and Apptainer or Singularity with "
      "--nv (apptainer exec --nv IMAGE). A capture holds NVML's answer only when it was taken "
      "on the GPU host itself.");
  return {std::move(f)};
}

std::vector<Finding> not_asked(const ProfileEntry& entry) {
  Finding f = frame(entry, "not checked");
  f.severity = Severity::kInfo;
  f.summary = fmt::format("{} is not checked: the profile sets it to false", entry.key);
  return {std::move(f)};
}

std::string nvml_path(const inventory::GpuFacts& g) {
  return g.nvml_from_capture ? inventory::capture_files::kNvml : "nvml";
}

std::string label(const inventory::GpuFacts& g, const inventory::PciGpu& d) {
  if (d.nvml_index) return fmt::format("GPU {} ({})", *d.nvml_index, d.address);
  std::size_t index = 0;
  for (const auto& other : g.devices) {  // sorted by address
    if (&other == &d) break;
    if (other.vendor == d.vendor && other.compute) ++index;
  }
  return fmt::format("GPU {} ({})", index, d.address);
}

void host_only(Finding& f, const CheckInput& in, std::string_view what) {
  if (!in.in_container) return;
  f.notes.push_back(fmt::format(
      "This runs in a container ({}), which cannot change {}: the host must. Run the fix on "
      "the host.",
      in.facts.os.container.value_or("container"), what));
  if (f.fix) f.fix->by_dltune = false;
}

std::vector<Finding> nvml_lists_none(const ProfileEntry& e, const inventory::GpuFacts& g,
                                     std::string expected) {
  Finding f = frame(e, std::move(expected));
  f.severity = Severity::kInfo;
  f.unknown = true;
  f.summary = "NVML lists no GPU, although the PCI bus has NVIDIA GPUs";
  f.evidence.push_back({nvml_path(g), "0 devices"});
  return {std::move(f)};
}

std::optional<std::string> unreadable(const gpu::Device& d,
                                      std::initializer_list<std::string_view> calls) {
  for (const auto& e : d.errors)
    if (e.find("NVML_ERROR_GPU_IS_LOST") != std::string::npos) return e;
  for (const auto& e : d.errors)
    for (const auto call : calls)
      if (e.starts_with(call)) return e;
  return std::nullopt;
}

Finding unknown_for_gpu(const ProfileEntry& entry, const inventory::GpuFacts& g,
                        const gpu::Device& d, std::string_view what, std::string expected,
                        const std::string& why) {
  Finding f = frame(entry, std::move(expected));
  f.severity = Severity::kInfo;
  f.unknown = true;
  f.actual = "unknown";
  f.summary = fmt::format("{}: {} cannot be read: {}", label(d), what, why);
  f.evidence.push_back({nvml_path(g), fmt::format("{}: {}", label(d), why)});
  return f;
}

}  // namespace dltune::settings::gpu_judge

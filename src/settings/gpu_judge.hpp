#pragma once
// What the GPU judges share (GPU persistence's in gpu_setting.cpp, audit's GPU checks): the
// finding's frame, the "no GPU" and "no NVML" findings, and how GPUs and NVML are named in
// evidence.
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/backend.hpp"
#include "inventory/gpu.hpp"
#include "settings/judge.hpp"

namespace dltune::settings::gpu_judge {

inline constexpr const char* kArea = "gpu";
inline constexpr const char* kNoGpu = inventory::kNoNvidiaGpu;

// A finding for `entry` with id, area, expected, reason and source filled in; severity ok.
[[nodiscard]] Finding frame(const ProfileEntry& entry, std::string expected);
// The severity the profile gives `entry` when it is not met (warn when it names none).
[[nodiscard]] Severity not_met(const ProfileEntry& entry);
// A profile's boolean value ("true", "false"); nullopt when it is not one.
[[nodiscard]] std::optional<bool> expected_bool(const ProfileEntry& entry);

// Why one GPU's facts for a rule could not be read: NVML lost the GPU (any call said
// NVML_ERROR_GPU_IS_LOST), or one of `calls` failed (a call that is merely not supported leaves no
// error). A rule then says unknown for that GPU, never ok.
[[nodiscard]] std::optional<std::string> unreadable(const gpu::Device& d,
                                                    std::initializer_list<std::string_view> calls);
// The unknown finding for one GPU whose `what` could not be read (`why`: unreadable's answer).
[[nodiscard]] Finding unknown_for_gpu(const ProfileEntry& entry, const inventory::GpuFacts& g,
                                      const gpu::Device& d, std::string_view what,
                                      std::string expected, const std::string& why);

// An NVIDIA GPU in sysfs or in NVML's answer.
using inventory::has_nvidia_gpu;
// The one finding for a host without NVIDIA GPUs: not applicable.
[[nodiscard]] std::vector<Finding> no_gpu(const ProfileEntry& entry, std::string expected);
// The one finding for a fact that needs NVML when NVML did not load: info, with NVML's error.
[[nodiscard]] std::vector<Finding> without_nvml(const ProfileEntry& entry,
                                                const inventory::GpuFacts& g, std::string_view what,
                                                std::string expected);
// The one finding when NVML lists no GPU although the PCI bus has NVIDIA GPUs (a GPU lost, or a
// container without them): info.
[[nodiscard]] std::vector<Finding> nvml_lists_none(const ProfileEntry& entry,
                                                   const inventory::GpuFacts& g,
                                                   std::string expected);
// For a check the profile turns off (value false): one info finding saying it was not made.
[[nodiscard]] std::vector<Finding> not_asked(const ProfileEntry& entry);

// Where NVML's facts came from: "nvml" (asked live) or the capture's nvml.json.
[[nodiscard]] std::string nvml_path(const inventory::GpuFacts& g);
// "GPU 3 (0000:5d:00.0)" for an NVML device.
using gpu::label;
// "GPU 5 (0000:ab:00.0)" for a sysfs GPU: NVML's index when NVML knows it, else its place among
// the NVIDIA GPUs in PCI bus order (the order nvidia-smi numbers them by default).
[[nodiscard]] std::string label(const inventory::GpuFacts& g, const inventory::PciGpu& d);

// Inside a container, a fix that only the host can make: say so in the notes.
void host_only(Finding& f, const CheckInput& in, std::string_view what);

}  // namespace dltune::settings::gpu_judge

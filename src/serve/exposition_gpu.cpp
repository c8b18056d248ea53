// The GPUs' families, from NVML as the Sample holds it (monitor/gpu_collector.cpp). Every GPU
// series has the labels gpu (NVML's index) and uuid, and those dcgm-exporter's series have for
// joins (UUID, modelName, Hostname: dcgm-exporter's pkg/dcgmexporter label names); a value NVML
// did not give is left out.
#include <iterator>

#include <fmt/format.h>

#include "diagnose/kernel_events.hpp"
#include "serve/exposition.hpp"

namespace dltune::serve {

namespace {

using monitor::Gpu;
using enum MetricType;

// The labels of every GPU series, formatted once per GPU and render.
struct GpuLabels {
  GpuLabels(const Gpu& g, std::string_view host) : index_(g.index), gpu(g), hostname(host) {}
  [[nodiscard]] std::string_view index() const { return {index_.data(), index_.size()}; }
  [[nodiscard]] std::string_view uuid() const {
    return gpu.uuid ? std::string_view(*gpu.uuid) : std::string_view();
  }
  [[nodiscard]] std::string_view model() const {
    return gpu.name ? std::string_view(*gpu.name) : std::string_view();
  }
  fmt::format_int index_;
  const Gpu& gpu;
  std::string_view hostname;
};

// dltune's own (gpu, uuid), then dcgm-exporter's (UUID, modelName, Hostname).
#define DLTUNE_GPU_LABELS(l)                                                                      \
  {"gpu", (l).index()}, {"uuid", (l).uuid()}, {"UUID", (l).uuid()}, {"modelName", (l).model()}, { \
    "Hostname", (l).hostname                                                                      \
  }

// One family over every GPU that has the value: `get` returns an optional.
template <class Get>
void each(std::span<const Gpu> gpus, std::string_view hostname, MetricSink& sink, const char* name,
          MetricType type, const char* help, Get get) {
  sink.family(name, type, help);
  for (const auto& g : gpus) {
    const auto v = get(g);
    if (!v) continue;
    const GpuLabels l(g, hostname);
    sink.sample({DLTUNE_GPU_LABELS(l)}, *v);
  }
}

std::optional<double> ratio(const std::optional<std::uint32_t>& pct) {
  if (!pct) return std::nullopt;
  return static_cast<double>(*pct) / 100.0;
}

std::optional<std::uint64_t> widen(const std::optional<std::uint32_t>& v) {
  if (!v) return std::nullopt;
  return *v;
}

std::optional<std::uint64_t> mhz_to_hz(const std::optional<std::uint32_t>& mhz) {
  if (!mhz) return std::nullopt;
  return std::uint64_t{*mhz} * 1'000'000;
}

// nvmlDeviceGetPcieThroughput says KB/s; taken as 1024 bytes, as the Model does
// (monitor/model_process.cpp).
std::optional<std::uint64_t> kib_to_bytes(const std::optional<std::uint32_t>& kib) {
  if (!kib) return std::nullopt;
  return std::uint64_t{*kib} * 1024;
}

double kib_to_bytes(std::uint64_t kib) {
  return static_cast<double>(kib) * 1024;
}

}  // namespace

void render_gpus(const monitor::Sample* s, bool gpus_on, std::string_view hostname,
                 MetricSink& sink) {
  const std::span<const Gpu> gpus =
      s != nullptr && gpus_on ? std::span<const Gpu>(s->gpus) : std::span<const Gpu>();
  // NVML answered when it listed a GPU and named it (the collector leaves a GPU it could not get
  // a handle for without uuid and name).
  bool up = false;
  for (const auto& g : gpus) up = up || ((g.uuid || g.name) && g.vendor != "amd");
  sink.family("dltune_nvml_up", kGauge,
              "1 when NVML is loaded and answered for at least one GPU, else 0 (also 0 with "
              "--no-gpus)");
  if (s != nullptr) sink.sample({}, std::uint64_t{up ? 1u : 0u});

  // Labelled by the PCI address alone, so that the series stays the same when the GPU drops out
  // of NVML's list (it then has no index or UUID).
  sink.family("dltune_gpu_up", kGauge,
              "1 for each GPU on PCI that its driver's interface answered for at the last "
              "reading (NVML for NVIDIA, amdgpu's sysfs for AMD), 0 when it did not: NVML not "
              "loaded, the GPU missing from NVML's list, its handle failing, or NVML saying it "
              "is lost (Xid 79). pci_bus_id as dltune_gpu_info has it");
  if (s != nullptr && gpus_on)
    for (const auto& slot : s->gpu_slots)
      sink.sample(
          {{"pci_bus_id", slot.pci_bus_id}, {"vendor", slot.vendor}, {"Hostname", hostname}},
          std::uint64_t{slot.up ? 1u : 0u});

  sink.family("dltune_gpu_info", kGauge,
              "1 for each GPU, labelled with its name, PCI bus id, vendor (nvidia: NVML; amd: "
              "amdgpu's sysfs) and device node (nvidiaN, nvmlDeviceGetMinorNumber)");
  for (const auto& g : gpus) {
    const GpuLabels l(g, hostname);
    const std::string_view bus =
        g.pci_bus_id ? std::string_view(*g.pci_bus_id) : std::string_view();
    const std::string_view vendor = g.vendor ? std::string_view(*g.vendor) : std::string_view();
    if (!g.minor_number) {  // no device node known (AMD, or NVML did not say)
      sink.sample(
          {DLTUNE_GPU_LABELS(l), {"name", l.model()}, {"pci_bus_id", bus}, {"vendor", vendor}},
          std::uint64_t{1});
      continue;
    }
    fmt::memory_buffer device;
    fmt::format_to(std::back_inserter(device), "nvidia{}", *g.minor_number);
    sink.sample({DLTUNE_GPU_LABELS(l),
                 {"name", l.model()},
                 {"pci_bus_id", bus},
                 {"vendor", vendor},
                 {"device", std::string_view(device.data(), device.size())}},
                std::uint64_t{1});
  }
  each(gpus, hostname, sink, "dltune_gpu_utilization_ratio", kGauge,
       "Share of NVML's last sample period in which a kernel ran on the GPU "
       "(nvmlDeviceGetUtilizationRates gpu)",
       [](const Gpu& g) { return ratio(g.utilization_gpu_pct); });
  each(gpus, hostname, sink, "dltune_gpu_sm_active_ratio", kGauge,
       "Share of the GPU's SMs that were busy over the last reading interval (NVML GPM "
       "NVML_GPM_METRIC_SM_UTIL, Hopper and newer; DCGM's SM activity): a GPU whose "
       "utilization is high while this is low runs small kernels or waits on launches",
       [](const Gpu& g) { return g.sm_active_ratio; });
  each(gpus, hostname, sink, "dltune_gpu_sm_occupancy_ratio", kGauge,
       "Warps resident on the SMs against their maximum over the last reading interval (NVML "
       "GPM NVML_GPM_METRIC_SM_OCCUPANCY)",
       [](const Gpu& g) { return g.sm_occupancy_ratio; });
  each(gpus, hostname, sink, "dltune_gpu_tensor_active_ratio", kGauge,
       "Share of the last reading interval in which a tensor core pipe was busy (NVML GPM "
       "NVML_GPM_METRIC_ANY_TENSOR_UTIL)",
       [](const Gpu& g) { return g.tensor_active_ratio; });
  each(gpus, hostname, sink, "dltune_gpu_dram_active_ratio", kGauge,
       "Device memory bandwidth used against its peak over the last reading interval (NVML GPM "
       "NVML_GPM_METRIC_DRAM_BW_UTIL)",
       [](const Gpu& g) { return g.dram_active_ratio; });
  each(gpus, hostname, sink, "dltune_gpu_memory_utilization_ratio", kGauge,
       "Share of NVML's last sample period in which device memory was read or written "
       "(nvmlDeviceGetUtilizationRates memory)",
       [](const Gpu& g) { return ratio(g.utilization_memory_pct); });
  each(gpus, hostname, sink, "dltune_gpu_memory_used_bytes", kGauge,
       "Device memory allocated (nvmlDeviceGetMemoryInfo used)",
       [](const Gpu& g) { return g.memory_used_bytes; });
  each(gpus, hostname, sink, "dltune_gpu_memory_free_bytes", kGauge,
       "Device memory free for allocation (nvmlDeviceGetMemoryInfo free: under the v2 call "
       "total less used and the driver's reserve)",
       [](const Gpu& g) { return g.memory_free_bytes; });
  each(gpus, hostname, sink, "dltune_gpu_memory_total_bytes", kGauge,
       "Device memory (nvmlDeviceGetMemoryInfo total)",
       [](const Gpu& g) { return g.memory_total_bytes; });
  each(gpus, hostname, sink, "dltune_gpu_power_watts", kGauge,
       "Power draw (nvmlDeviceGetPowerUsage)", [](const Gpu& g) { return g.power_watts; });
  each(gpus, hostname, sink, "dltune_gpu_energy_joules_total", kCounter,
       "Energy used since the driver was loaded (nvmlDeviceGetTotalEnergyConsumption)",
       [](const Gpu& g) -> std::optional<double> {
         if (!g.energy_mj) return std::nullopt;
         return static_cast<double>(*g.energy_mj) / 1e3;
       });
  each(gpus, hostname, sink, "dltune_gpu_temperature_celsius", kGauge,
       "GPU die temperature (nvmlDeviceGetTemperature NVML_TEMPERATURE_GPU)",
       [](const Gpu& g) { return widen(g.temperature_celsius); });
  each(gpus, hostname, sink, "dltune_gpu_sm_clock_hertz", kGauge,
       "SM clock now (nvmlDeviceGetClockInfo NVML_CLOCK_SM)",
       [](const Gpu& g) { return mhz_to_hz(g.sm_clock_mhz); });
  each(gpus, hostname, sink, "dltune_gpu_memory_clock_hertz", kGauge,
       "Memory clock now (nvmlDeviceGetClockInfo NVML_CLOCK_MEM)",
       [](const Gpu& g) { return mhz_to_hz(g.memory_clock_mhz); });
  each(gpus, hostname, sink, "dltune_gpu_clock_event_reasons", kGauge,
       "Why the clocks are below their maximum, NVML's bit mask "
       "(nvmlDeviceGetCurrentClocksEventReasons)",
       [](const Gpu& g) { return g.clock_event_reasons; });

  sink.family("dltune_gpu_throttled", kGauge,
              "1 when the clocks are held down for this reason, else 0 (a bit of "
              "nvmlDeviceGetCurrentClocksEventReasons, nvml.h nvmlClocksEventReason*)");
  for (const auto& g : gpus) {
    if (!g.clock_event_reasons) continue;
    const GpuLabels l(g, hostname);
    for (const auto& r : kThrottleReasons)
      sink.sample({DLTUNE_GPU_LABELS(l), {"reason", r.label}},
                  std::uint64_t{(*g.clock_event_reasons & r.bit) != 0 ? 1u : 0u});
  }
  each(gpus, hostname, sink, "dltune_gpu_pcie_transmit_bytes_per_second", kGauge,
       "PCIe bytes sent by the GPU per second over NVML's 20 ms window "
       "(nvmlDeviceGetPcieThroughput TX, KB/s times 1024)",
       [](const Gpu& g) { return kib_to_bytes(g.pcie_tx_kib_s); });
  each(gpus, hostname, sink, "dltune_gpu_pcie_receive_bytes_per_second", kGauge,
       "PCIe bytes received by the GPU per second over NVML's 20 ms window "
       "(nvmlDeviceGetPcieThroughput RX, KB/s times 1024)",
       [](const Gpu& g) { return kib_to_bytes(g.pcie_rx_kib_s); });
  sink.family(
      "dltune_gpu_nvlink_bytes_total", kCounter,
      "NVLink data bytes sent (tx) and received (rx) by the GPU over its links since the "
      "driver was loaded (nvmlDeviceGetFieldValues NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX, "
      "KiB times 1024); absent on a GPU without NVLink");
  for (const auto& g : gpus) {
    if (!g.nvlink_tx_kib && !g.nvlink_rx_kib) continue;
    const GpuLabels l(g, hostname);
    // As a double: months of NVLink traffic in bytes can pass 2^64 (Prometheus keeps floats).
    if (g.nvlink_tx_kib)
      sink.sample({DLTUNE_GPU_LABELS(l), {"direction", "tx"}}, kib_to_bytes(*g.nvlink_tx_kib));
    if (g.nvlink_rx_kib)
      sink.sample({DLTUNE_GPU_LABELS(l), {"direction", "rx"}}, kib_to_bytes(*g.nvlink_rx_kib));
  }
  each(gpus, hostname, sink, "dltune_gpu_pcie_replays_total", kCounter,
       "PCIe link-level retransmissions since the driver was loaded "
       "(nvmlDeviceGetPcieReplayCounter)",
       [](const Gpu& g) { return g.pcie_replay_count; });
  each(gpus, hostname, sink, "dltune_gpu_xid_errors_total", kCounter,
       "Xid errors reported by the driver since serve started (NVML critical Xid events)",
       [](const Gpu& g) { return g.xid_errors; });
  each(gpus, hostname, sink, "dltune_gpu_last_xid", kGauge,
       "The code of the last Xid error since serve started (`dltune doctor` explains it)",
       [](const Gpu& g) { return widen(g.last_xid); });
  // By code, with the severity knowledge/xid.toml gives it, so that an alert can page for a
  // GPU's fault and not for an application's (Xid 13, 31, 43); a code the table lacks is
  // "unknown".
  sink.family("dltune_gpu_xid_events_total", kCounter,
              "Xid errors since serve started by code (xid), with the severity dltune's Xid "
              "table gives the code (critical: reset, drain or service the GPU; warning: a job "
              "failed, the GPU is usable; info; unknown: not in the table)");
  const auto& table = diagnose::builtin_xid_table();
  for (const auto& g : gpus) {
    if (g.xid_codes.empty()) continue;
    const GpuLabels l(g, hostname);
    for (const auto& x : g.xid_codes) {
      const diagnose::XidInfo* info = table ? table->find(static_cast<int>(x.code)) : nullptr;
      const fmt::format_int code(x.code);
      sink.sample({DLTUNE_GPU_LABELS(l),
                   {"xid", {code.data(), code.size()}},
                   {"severity", info ? diagnose::severity_name(info->severity) : "unknown"}},
                  x.count);
    }
  }
  sink.family("dltune_gpu_ecc_errors_total", kCounter,
              "Device memory errors that ECC found since the driver was loaded, by type: "
              "corrected, or uncorrected (data was lost) (nvmlDeviceGetTotalEccErrors "
              "NVML_VOLATILE_ECC); absent while ECC is off");
  for (const auto& g : gpus) {
    if (!g.ecc_corrected && !g.ecc_uncorrected) continue;
    const GpuLabels l(g, hostname);
    if (g.ecc_corrected)
      sink.sample({DLTUNE_GPU_LABELS(l), {"type", "corrected"}}, *g.ecc_corrected);
    if (g.ecc_uncorrected)
      sink.sample({DLTUNE_GPU_LABELS(l), {"type", "uncorrected"}}, *g.ecc_uncorrected);
  }
  each(gpus, hostname, sink, "dltune_gpu_compute_processes", kGauge,
       "Compute processes on the GPU now (nvmlDeviceGetComputeRunningProcesses)",
       [](const Gpu& g) -> std::optional<std::uint64_t> {
         // sampled_at_ns: the GPU was read; its process list is then what NVML said.
         if (!g.sampled_at_ns) return std::nullopt;
         return static_cast<std::uint64_t>(g.processes.size());
       });
}

#undef DLTUNE_GPU_LABELS

}  // namespace dltune::serve

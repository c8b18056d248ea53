#include "gpu/nvml_backend.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>

#include "host/parse/pci_device.hpp"

namespace dltune::gpu {

namespace {

using nvml::Return;

// Bounds beyond which a value is not believed (a hostile or broken library, or a GPU that fell
// off the bus and reads as all ones). Generous: several times what any GPU has today.
constexpr std::uint64_t kMaxMemoryBytes = std::uint64_t{16} << 40;  // 16 TiB
constexpr std::uint32_t kMaxClockMhz = 20000;
constexpr std::uint32_t kMaxPcieGeneration = 8;
constexpr std::uint32_t kMaxPcieWidth = 32;
constexpr std::uint32_t kMaxTemperatureCelsius = 200;
constexpr std::uint32_t kMaxPowerMilliwatts = 10'000'000;  // 10 kW

template <class T>
std::optional<T> bounded(T v, T lo, T hi) {
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<bool> enable_state(int v) {
  if (v == nvml::kFeatureEnabled) return true;
  if (v == nvml::kFeatureDisabled) return false;
  return std::nullopt;
}

// The bus id of a PciInfo, normalised; from its numbers when the text is garbled.
template <class Info>
std::optional<std::string> bus_id_of(const Info& info, const char* text, std::size_t cap) {
  if (auto a = host::parse::pci_address(clean_string(text, cap))) return a;
  if (info.domain > 0xffff || info.bus > 0xff || info.device > 0x1f) return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.0", info.domain, info.bus, info.device);
}

// One call into the library, with the error kept when it says something.
class Calls {
 public:
  Calls(const NvmlLibrary& lib, std::vector<std::string>& errors) : lib_(lib), errors_(errors) {}

  // True on success; on failure keeps "name: error" unless the call is merely not supported.
  bool ok(Sym s, Return rc) {
    if (rc == nvml::kSuccess) return true;
    if (rc != nvml::kErrorNotSupported)
      errors_.push_back(fmt::format("{}: {}", lib_.name(s), lib_.describe(rc)));
    return false;
  }

  // A string from nvmlSystemGet*Version (no device) or nvmlDeviceGet{Name,UUID}.
  std::optional<std::string> system_string(Sym s) {
    const auto f = lib_.fn<nvml::StringFn>(s);
    if (f == nullptr) return std::nullopt;
    std::array<char, nvml::kVersionBufferSize + 1> buf{};
    if (!ok(s, f(buf.data(), nvml::kVersionBufferSize))) return std::nullopt;
    return non_empty(clean_string(buf.data(), nvml::kVersionBufferSize));
  }
  std::optional<std::string> device_string(Sym s, nvml::Device h, unsigned cap) {
    const auto f = lib_.fn<nvml::DeviceStringFn>(s);
    if (f == nullptr) return std::nullopt;
    std::array<char, 257> buf{};  // one byte more than the library is told, always NUL
    cap = std::min<unsigned>(cap, buf.size() - 1);
    if (!ok(s, f(h, buf.data(), cap))) return std::nullopt;
    return non_empty(clean_string(buf.data(), cap));
  }
  std::optional<std::uint32_t> device_uint(Sym s, nvml::Device h) {
    const auto f = lib_.fn<nvml::DeviceUintFn>(s);
    unsigned int v = 0;
    if (f == nullptr || !ok(s, f(h, &v))) return std::nullopt;
    return v;
  }
  std::optional<std::uint32_t> clock(Sym s, nvml::Device h, int type) {
    const auto f = lib_.fn<nvml::DeviceClockFn>(s);
    unsigned int v = 0;
    if (f == nullptr || !ok(s, f(h, type, &v))) return std::nullopt;
    return bounded<std::uint32_t>(v, 0, kMaxClockMhz);
  }

  static std::optional<std::string> non_empty(std::string s) {
    if (s.empty()) return std::nullopt;
    return s;
  }

 private:
  const NvmlLibrary& lib_;
  std::vector<std::string>& errors_;
};

void read_pci(const NvmlLibrary& lib, Calls& calls, nvml::Device h, Device& d) {
  if (lib.version_index(Sym::kPciInfo) < 0) return;
  if (lib.version_index(Sym::kPciInfo) <= 1) {  // _v3, _v2
    nvml::PciInfoV2 info{};
    if (calls.ok(Sym::kPciInfo, lib.fn<nvml::DevicePciV2Fn>(Sym::kPciInfo)(h, &info)))
      d.pci_bus_id = bus_id_of(info, info.bus_id, sizeof info.bus_id);
  } else {
    nvml::PciInfoV1 info{};
    if (calls.ok(Sym::kPciInfo, lib.fn<nvml::DevicePciV1Fn>(Sym::kPciInfo)(h, &info)))
      d.pci_bus_id = bus_id_of(info, info.bus_id, sizeof info.bus_id);
  }
}

void read_memory(const NvmlLibrary& lib, Calls& calls, nvml::Device h, Device& d) {
  std::optional<std::uint64_t> total, used;
  if (lib.version_index(Sym::kMemoryInfo) == 0) {
    nvml::MemoryV2 m{};
    m.version = nvml::kMemoryV2Version;
    if (calls.ok(Sym::kMemoryInfo, lib.fn<nvml::DeviceMemoryV2Fn>(Sym::kMemoryInfo)(h, &m))) {
      total = m.total;
      used = m.used;
    }
  } else if (lib.version_index(Sym::kMemoryInfo) == 1) {
    nvml::MemoryV1 m{};
    if (calls.ok(Sym::kMemoryInfo, lib.fn<nvml::DeviceMemoryV1Fn>(Sym::kMemoryInfo)(h, &m))) {
      total = m.total;
      used = m.used;
    }
  }
  if (!total || *total == 0 || *total > kMaxMemoryBytes) return;
  d.memory_total_bytes = total;
  if (used && *used <= *total) d.memory_used_bytes = used;
}

void read_ecc(const NvmlLibrary& lib, Calls& calls, nvml::Device h, Device& d) {
  if (const auto f = lib.fn<nvml::DeviceEccModeFn>(Sym::kEccMode)) {
    int current = -1, pending = -1;
    if (calls.ok(Sym::kEccMode, f(h, &current, &pending))) {
      d.ecc_enabled = enable_state(current);
      d.ecc_pending_enabled = enable_state(pending);
    }
  }
  const auto count = lib.fn<nvml::DeviceEccCountFn>(Sym::kTotalEccErrors);
  if (d.ecc_enabled != true || count == nullptr) return;
  auto read = [&](int error_type, int counter) -> std::optional<std::uint64_t> {
    unsigned long long v = 0;
    if (!calls.ok(Sym::kTotalEccErrors, count(h, error_type, counter, &v))) return std::nullopt;
    return bounded<std::uint64_t>(v, 0, kMaxEccCount);
  };
  d.ecc_errors.volatile_corrected = read(nvml::kMemoryErrorCorrected, nvml::kVolatileEcc);
  d.ecc_errors.volatile_uncorrected = read(nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc);
  d.ecc_errors.aggregate_corrected = read(nvml::kMemoryErrorCorrected, nvml::kAggregateEcc);
  d.ecc_errors.aggregate_uncorrected = read(nvml::kMemoryErrorUncorrected, nvml::kAggregateEcc);
}

constexpr std::uint32_t kMaxRows = 1u << 20;  // spare rows per GPU are in the hundreds
constexpr std::uint32_t kMaxPages = 1u << 20;
constexpr unsigned kMaxMigDevices = 64;  // 7 on an A100 or H100

// Row remapping, or page retirement on older GPUs (a GPU supports one of the two). NOT_SUPPORTED
// is the common answer (no ECC, consumer GPUs, MIG instances active) and is not an error.
void read_memory_health(const NvmlLibrary& lib, Calls& calls, nvml::Device h, Device& d) {
  if (const auto f = lib.fn<nvml::DeviceRemappedRowsFn>(Sym::kRemappedRows)) {
    unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
    if (calls.ok(Sym::kRemappedRows, f(h, &corr, &unc, &pending, &failure)) && corr <= kMaxRows &&
        unc <= kMaxRows && pending <= 1 && failure <= 1)
      d.row_remap = RowRemap{corr, unc, pending == 1, failure == 1};
  }
  if (d.row_remap) return;
  if (const auto f = lib.fn<nvml::DeviceRetiredPagesFn>(Sym::kRetiredPages)) {
    auto pages = [&](int cause) -> std::optional<std::uint32_t> {
      unsigned int count = 0;  // 0 asks for the count only
      const Return rc = f(h, cause, &count, nullptr);
      if (rc != nvml::kSuccess && rc != nvml::kErrorInsufficientSize) {
        calls.ok(Sym::kRetiredPages, rc);
        return std::nullopt;
      }
      return bounded<std::uint32_t>(count, 0, kMaxPages);
    };
    d.retired_pages.multiple_single_bit = pages(nvml::kPageRetirementMultipleSingleBit);
    if (d.retired_pages.multiple_single_bit)
      d.retired_pages.double_bit = pages(nvml::kPageRetirementDoubleBit);
  }
  if (d.retired_pages.multiple_single_bit)
    if (const auto f = lib.fn<nvml::DeviceEnableFn>(Sym::kRetiredPagesPending)) {
      int pending = -1;
      if (calls.ok(Sym::kRetiredPagesPending, f(h, &pending)))
        d.retired_pages.pending = enable_state(pending);
    }
}

// MIG mode and, when it is on, its devices (a GPU instance with a compute instance each).
void read_mig(const NvmlLibrary& lib, Calls& calls, nvml::Device h, Device& d) {
  const auto mode = lib.fn<nvml::DeviceTwoUintFn>(Sym::kMigMode);
  if (mode == nullptr) return;
  unsigned int current = 2, pending = 2;
  if (!calls.ok(Sym::kMigMode, mode(h, &current, &pending))) return;
  d.mig_enabled = enable_state(static_cast<int>(current));
  d.mig_pending_enabled = enable_state(static_cast<int>(pending));
  const auto handle = lib.fn<nvml::DeviceMigHandleFn>(Sym::kMigDeviceHandle);
  if (d.mig_enabled != true || handle == nullptr) return;
  const unsigned max =
      std::min(calls.device_uint(Sym::kMaxMigDeviceCount, h).value_or(0), kMaxMigDevices);
  for (unsigned i = 0; i < max; ++i) {
    nvml::Device m = nullptr;
    const Return rc = handle(h, i, &m);
    if (rc == nvml::kErrorNotFound || rc == nvml::kErrorInvalidArgument) continue;  // a hole
    if (!calls.ok(Sym::kMigDeviceHandle, rc) || m == nullptr) break;
    MigDevice md;
    md.index = i;
    md.name = calls.device_string(Sym::kName, m, nvml::kNameBufferSize);
    md.uuid = calls.device_string(Sym::kUuid, m, nvml::kUuidBufferSize);
    Device scratch;
    read_memory(lib, calls, m, scratch);
    md.memory_total_bytes = scratch.memory_total_bytes;
    md.gpu_instance_id = calls.device_uint(Sym::kGpuInstanceId, m);
    md.compute_instance_id = calls.device_uint(Sym::kComputeInstanceId, m);
    d.mig_devices.push_back(std::move(md));
  }
}

void read_power_and_clocks(const NvmlLibrary& lib, Calls& calls, nvml::Device h, Device& d) {
  auto watts = [](std::optional<std::uint32_t> mw) -> std::optional<double> {
    if (!mw || *mw > kMaxPowerMilliwatts) return std::nullopt;
    return static_cast<double>(*mw) / 1000.0;  // milliwatts (NVML reference)
  };
  d.power_watts = watts(calls.device_uint(Sym::kPowerUsage, h));
  d.power_limit_watts = watts(calls.device_uint(Sym::kPowerLimit, h));
  d.power_management_limit_watts = watts(calls.device_uint(Sym::kPowerManagementLimit, h));
  d.power_default_limit_watts = watts(calls.device_uint(Sym::kPowerDefaultLimit, h));
  if (const auto f = lib.fn<nvml::DeviceTwoUintFn>(Sym::kPowerLimitConstraints)) {
    unsigned int lo = 0, hi = 0;
    if (calls.ok(Sym::kPowerLimitConstraints, f(h, &lo, &hi)) && lo <= hi) {
      d.power_min_limit_watts = watts(lo);
      d.power_max_limit_watts = watts(hi);
    }
  }
  d.app_sm_clock_mhz = calls.clock(Sym::kApplicationsClock, h, nvml::kClockSm);
  d.app_memory_clock_mhz = calls.clock(Sym::kApplicationsClock, h, nvml::kClockMem);
  d.default_app_sm_clock_mhz = calls.clock(Sym::kDefaultApplicationsClock, h, nvml::kClockSm);
  d.default_app_memory_clock_mhz = calls.clock(Sym::kDefaultApplicationsClock, h, nvml::kClockMem);
}

void read_nvlinks(const NvmlLibrary& lib, Calls& calls, nvml::Device h, Device& d) {
  const auto state = lib.fn<nvml::DeviceLinkStateFn>(Sym::kNvLinkState);
  if (state == nullptr) return;
  bool error_kept = false;
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    int active = -1;
    const Return rc = state(h, link, &active);
    // NOT_SUPPORTED (or INVALID_ARGUMENT past the device's last link): no such link.
    if (rc == nvml::kErrorNotSupported || rc == nvml::kErrorInvalidArgument) continue;
    if (rc != nvml::kSuccess) {
      if (!error_kept) error_kept = !calls.ok(Sym::kNvLinkState, rc);  // once, not per link
      continue;
    }
    const auto on = enable_state(active);
    if (!on) continue;
    NvLink l;
    l.link = link;
    l.active = *on;
    if (const auto f = lib.fn<nvml::DeviceLinkUintFn>(Sym::kNvLinkVersion)) {
      unsigned int v = 0;
      if (f(h, link, &v) == nvml::kSuccess && v > 0 && v < 100) l.version = v;
    }
    if (const auto f = lib.fn<nvml::DeviceLinkCounterFn>(Sym::kNvLinkErrorCounter)) {
      auto counter = [&](int which) -> std::optional<std::uint64_t> {
        unsigned long long v = 0;
        if (f(h, link, which, &v) != nvml::kSuccess) return std::nullopt;  // per link: quiet
        return bounded<std::uint64_t>(v, 0, kMaxEccCount);
      };
      l.replay_errors = counter(nvml::kNvLinkErrorDlReplay);
      l.recovery_errors = counter(nvml::kNvLinkErrorDlRecovery);
      l.crc_flit_errors = counter(nvml::kNvLinkErrorDlCrcFlit);
      l.crc_data_errors = counter(nvml::kNvLinkErrorDlCrcData);
    }
    if (*on) {
      if (const auto f = lib.fn<nvml::DeviceLinkUintFn>(Sym::kNvLinkRemoteDeviceType)) {
        unsigned int t = 0xff;
        if (f(h, link, &t) == nvml::kSuccess) {
          if (t == nvml::kNvLinkDeviceTypeGpu) l.remote_type = "gpu";
          if (t == nvml::kNvLinkDeviceTypeSwitch) l.remote_type = "switch";
          if (t == nvml::kNvLinkDeviceTypeIbmNpu) l.remote_type = "ibmnpu";
        }
      }
      const int v = lib.version_index(Sym::kNvLinkRemotePciInfo);
      if (v == 0) {
        nvml::PciInfoV2 info{};
        if (calls.ok(Sym::kNvLinkRemotePciInfo,
                     lib.fn<nvml::DeviceLinkPciV2Fn>(Sym::kNvLinkRemotePciInfo)(h, link, &info)))
          l.remote_pci_bus_id = bus_id_of(info, info.bus_id, sizeof info.bus_id);
      } else if (v == 1) {
        nvml::PciInfoV1 info{};
        if (calls.ok(Sym::kNvLinkRemotePciInfo,
                     lib.fn<nvml::DeviceLinkPciV1Fn>(Sym::kNvLinkRemotePciInfo)(h, link, &info)))
          l.remote_pci_bus_id = bus_id_of(info, info.bus_id, sizeof info.bus_id);
      }
    }
    d.nvlinks.push_back(std::move(l));
  }
}

Device read_device(const NvmlLibrary& lib, unsigned index, nvml::Device h) {
  Device d;
  d.index = index;
  Calls calls(lib, d.errors);
  d.name = calls.device_string(Sym::kName, h, nvml::kNameBufferSize);
  d.uuid = calls.device_string(Sym::kUuid, h, nvml::kUuidBufferSize);
  read_pci(lib, calls, h, d);
  read_memory(lib, calls, h, d);
  if (const auto f = lib.fn<nvml::DeviceEnableFn>(Sym::kPersistenceMode)) {
    int mode = -1;
    if (calls.ok(Sym::kPersistenceMode, f(h, &mode))) d.persistence_mode = enable_state(mode);
  }
  read_ecc(lib, calls, h, d);
  d.sm_clock_mhz = calls.clock(Sym::kClockInfo, h, nvml::kClockSm);
  d.memory_clock_mhz = calls.clock(Sym::kClockInfo, h, nvml::kClockMem);
  d.max_sm_clock_mhz = calls.clock(Sym::kMaxClockInfo, h, nvml::kClockSm);
  d.max_memory_clock_mhz = calls.clock(Sym::kMaxClockInfo, h, nvml::kClockMem);
  if (const auto f = lib.fn<nvml::DeviceU64Fn>(Sym::kClockEventReasons)) {
    unsigned long long mask = 0;
    if (calls.ok(Sym::kClockEventReasons, f(h, &mask))) d.clock_event_reasons = mask;
  }
  auto link = [&](Sym s, std::uint32_t hi) -> std::optional<std::uint32_t> {
    const auto v = calls.device_uint(s, h);
    return v ? bounded<std::uint32_t>(*v, 1, hi) : std::nullopt;
  };
  d.pcie_generation = link(Sym::kCurrPcieLinkGeneration, kMaxPcieGeneration);
  d.pcie_max_generation = link(Sym::kMaxPcieLinkGeneration, kMaxPcieGeneration);
  d.pcie_width = link(Sym::kCurrPcieLinkWidth, kMaxPcieWidth);
  d.pcie_max_width = link(Sym::kMaxPcieLinkWidth, kMaxPcieWidth);
  if (const auto f = lib.fn<nvml::DeviceTemperatureFn>(Sym::kTemperature)) {
    unsigned int t = 0;
    if (calls.ok(Sym::kTemperature, f(h, nvml::kTemperatureGpu, &t)))
      d.temperature_celsius = bounded<std::uint32_t>(t, 0, kMaxTemperatureCelsius);
  }
  read_power_and_clocks(lib, calls, h, d);
  read_memory_health(lib, calls, h, d);
  read_mig(lib, calls, h, d);
  read_nvlinks(lib, calls, h, d);
  return d;
}

// The active links of `from` that reach `to`: to it directly, or, when the links go to
// NVSwitches and NVML says peer access over NVLink works, all of them (the switches connect
// every GPU of the board to every other).
unsigned links_between(const Device& from, const Device& to, std::optional<bool> p2p_nvlink) {
  unsigned direct = 0, switched = 0;
  for (const auto& l : from.nvlinks) {
    if (!l.active) continue;
    if (to.pci_bus_id && l.remote_pci_bus_id == to.pci_bus_id) ++direct;
    if (l.remote_type == "switch") ++switched;
  }
  if (direct > 0) return direct;
  return p2p_nvlink == true ? switched : 0;
}

// Every pair of devices: the common ancestor in the PCIe tree and peer-to-peer over NVLink and
// PCIe (nvidia-smi topo -m and -p2p). Each call's failure is kept once.
void read_topology(const NvmlLibrary& lib, const std::vector<nvml::Device>& handles, Report& r) {
  const auto level = lib.fn<nvml::PairLevelFn>(Sym::kTopologyCommonAncestor);
  const auto p2p = lib.fn<nvml::PairP2pFn>(Sym::kP2PStatus);
  if (level == nullptr && p2p == nullptr) return;
  bool level_error = false, p2p_error = false;
  Calls calls(lib, r.errors);
  for (std::size_t a = 0; a < handles.size(); ++a)
    for (std::size_t b = a + 1; b < handles.size(); ++b) {
      if (handles[a] == nullptr || handles[b] == nullptr) continue;
      GpuPair pair;
      pair.a = r.devices[a].index;
      pair.b = r.devices[b].index;
      if (level != nullptr) {
        int v = -1;
        const Return rc = level(handles[a], handles[b], &v);
        if (rc == nvml::kSuccess && v >= 0 && v <= nvml::kTopologySystem)
          pair.level = v;
        else if (rc != nvml::kSuccess && !level_error)
          level_error = !calls.ok(Sym::kTopologyCommonAncestor, rc);
      }
      if (p2p != nullptr) {
        auto status = [&](int caps) -> std::optional<bool> {
          int st = -1;
          const Return rc = p2p(handles[a], handles[b], caps, &st);
          if (rc != nvml::kSuccess) {
            if (!p2p_error) p2p_error = !calls.ok(Sym::kP2PStatus, rc);
            return std::nullopt;
          }
          return st == nvml::kP2pStatusOk;
        };
        pair.p2p_nvlink = status(nvml::kP2pCapsNvlink);
        pair.p2p_read = status(nvml::kP2pCapsRead);
      }
      pair.nvlinks = links_between(r.devices[a], r.devices[b], pair.p2p_nvlink);
      if (pair.level || pair.p2p_nvlink || pair.p2p_read || pair.nvlinks > 0)
        r.topology.push_back(pair);
    }
}

}  // namespace

Report query_nvml(const NvmlLibrary& lib) {
  Report r;
  r.backend = "nvml";
  r.loaded = true;
  r.library = lib.path();
  Calls calls(lib, r.errors);
  r.driver_version = calls.system_string(Sym::kDriverVersion);
  r.nvml_version = calls.system_string(Sym::kNvmlVersion);
  if (const auto f = lib.fn<nvml::IntOutFn>(Sym::kCudaDriverVersion)) {
    int v = 0;
    if (calls.ok(Sym::kCudaDriverVersion, f(&v))) r.cuda_driver_version = cuda_version_string(v);
  }
  unsigned int count = 0;
  if (!calls.ok(Sym::kDeviceCount, lib.fn<nvml::CountFn>(Sym::kDeviceCount)(&count))) return r;
  r.device_count = count;
  if (count > kMaxDevices) {
    r.errors.push_back(fmt::format("{} said {} devices; only the first {} were read",
                                   lib.name(Sym::kDeviceCount), count, kMaxDevices));
    count = kMaxDevices;
  }
  const auto handle_of = lib.fn<nvml::HandleByIndexFn>(Sym::kHandleByIndex);
  std::vector<nvml::Device> handles;
  for (unsigned i = 0; i < count; ++i) {
    nvml::Device h = nullptr;
    const Return rc = handle_of(i, &h);
    handles.push_back(rc == nvml::kSuccess ? h : nullptr);
    if (rc != nvml::kSuccess || h == nullptr) {
      Device d;
      d.index = i;
      d.errors.push_back(fmt::format("{}: {}", lib.name(Sym::kHandleByIndex),
                                     rc != nvml::kSuccess ? lib.describe(rc) : "null handle"));
      r.devices.push_back(std::move(d));
      continue;
    }
    r.devices.push_back(read_device(lib, i, h));
  }
  read_topology(lib, handles, r);
  return r;
}

Report NvmlBackend::query() {
  auto lib = NvmlLibrary::open(library_, fallbacks_);
  if (!lib) {
    Report r;
    r.backend = "nvml";
    r.library = library_.empty() ? kDefaultLibraryNames[0] : library_;
    r.error = lib.error().message();
    return r;
  }
  return query_nvml(**lib);  // the library is shut down and closed when `lib` goes
}

}  // namespace dltune::gpu

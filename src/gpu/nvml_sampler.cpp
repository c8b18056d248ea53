// NVML read for sampling (nvml_sampler.hpp): every GPU's utilisation, memory, power, clocks,
// PCIe and NVLink traffic, ECC counts, processes and Xid events, each through the symbol table's
// versioned calls.
#include "gpu/nvml_sampler.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <memory>

#include <fmt/core.h>

#include "core/clock.hpp"
#include "gpu/nvml_backend.hpp"
#include "gpu/nvml_library.hpp"
#include "gpu/nvml_types.hpp"

namespace dltune::gpu {

namespace {

// NVLink's data counters: the scope asked for, in this one place. nvml.h describes scopeId as
// the link for per-link fields, and does not say clearly whether NVLINK_THROUGHPUT_DATA_TX/RX
// with scopeId 0 is link 0's count or the GPU's, its links together. Public code that reads them
// (monitoring agents, NVLink benchmarks) passes scopeId 0 and takes the value as the GPU's total;
// so does dltune, until a run on an NVLink GPU says otherwise (compare with the per-link counters
// nvidia-smi nvlink shows). Should it be per link, this becomes one field pair per active link,
// summed.
constexpr unsigned kNvLinkThroughputScope = 0;

// Beyond this an NVLink counter (KiB) is not believed: all ones is a GPU that fell off the bus,
// and 2^60 KiB is decades at any NVLink's speed.
constexpr std::uint64_t kMaxNvLinkKib = std::uint64_t{1} << 60;

// A field value as a counter, read from the member of NVML's value union that its
// nvmlValueType_t names; a negative or unbelievable value is none.
std::optional<std::uint64_t> counter_value(const nvml::FieldValue& v) {
  std::uint64_t out = 0;
  switch (v.value_type) {
    case nvml::kValueTypeUnsignedLongLong:
      out = v.value.ull;
      break;
    case nvml::kValueTypeUnsignedLong:
      out = v.value.ul;
      break;
    case nvml::kValueTypeUnsignedInt:
      out = v.value.ui;
      break;
    case nvml::kValueTypeUnsignedShort:
      out = v.value.us;
      break;
    case nvml::kValueTypeSignedLongLong:
      if (v.value.sll < 0) return std::nullopt;
      out = static_cast<std::uint64_t>(v.value.sll);
      break;
    case nvml::kValueTypeSignedInt:
      if (v.value.si < 0) return std::nullopt;
      out = static_cast<std::uint64_t>(v.value.si);
      break;
    case nvml::kValueTypeDouble:
      if (!(v.value.d >= 0 && v.value.d < static_cast<double>(kMaxNvLinkKib))) return std::nullopt;
      out = static_cast<std::uint64_t>(v.value.d);
      break;
    default:
      return std::nullopt;
  }
  if (out >= kMaxNvLinkKib) return std::nullopt;
  return out;
}

// What stays the same for a GPU while the library is loaded: read once.
struct Identity {
  std::optional<std::string> uuid, name, pci_bus_id;
  std::optional<std::uint32_t> minor_number;
};

// The reading thread's own state (touched by no other thread).
class Reader {
 public:
  explicit Reader(const NvmlLibrary& lib) : lib_(lib) {}
  ~Reader() {
    if (events_ != nullptr) lib_.fn<nvml::EventSetFreeFn>(Sym::kEventSetFree)(events_);
    free_gpm();
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Every GPU into `out` (reusing its elements); failures other than "not supported" are added
  // to `failed` by call name, for one notice each.
  void read(std::vector<GpuReading>& out, std::set<std::string>& failed) {
    failed_ = &failed;
    unsigned count = 0;
    if (!ok(Sym::kDeviceCount, lib_.fn<nvml::CountFn>(Sym::kDeviceCount)(&count))) count = 0;
    count = std::min(count, 64u);  // no host has more; a broken library may say anything
    if (ids_.size() != count) {
      ids_.assign(count, std::nullopt);
      xids_.assign(count, Xids{});
      no_nvlink_.assign(count, false);
      free_gpm();
      gpm_.assign(count, Gpm{});
      util_seen_us_.assign(count, 0);
      no_process_util_.assign(count, false);
    }
    drain_events();
    out.resize(count);
    for (unsigned i = 0; i < count; ++i) device(i, out[i]);
  }

 private:
  bool ok(Sym s, nvml::Return rc) {
    if (rc == nvml::kSuccess) return true;
    if (rc == nvml::kErrorGpuIsLost) lost_ = true;
    if (rc != nvml::kErrorNotSupported)
      failed_->insert(fmt::format("{}: {}", lib_.name(s), lib_.describe(rc)));
    return false;
  }

  std::optional<std::string> text(Sym s, nvml::Device h) {
    const auto f = lib_.fn<nvml::DeviceStringFn>(s);
    std::array<char, nvml::kNameBufferSize + 1> buf{};  // one more than said: always a NUL
    if (f == nullptr || !ok(s, f(h, buf.data(), nvml::kNameBufferSize))) return std::nullopt;
    auto v = gpu::clean_string(buf.data(), nvml::kNameBufferSize);
    if (v.empty()) return std::nullopt;
    return v;
  }

  std::optional<std::string> bus_id(nvml::Device h) {
    const int v = lib_.version_index(Sym::kPciInfo);
    if (v == 0 || v == 1) {  // _v3, _v2
      nvml::PciInfoV2 info{};
      if (ok(Sym::kPciInfo, lib_.fn<nvml::DevicePciV2Fn>(Sym::kPciInfo)(h, &info)))
        return gpu::clean_string(info.bus_id, sizeof info.bus_id);
    } else if (v == 2) {
      nvml::PciInfoV1 info{};
      if (ok(Sym::kPciInfo, lib_.fn<nvml::DevicePciV1Fn>(Sym::kPciInfo)(h, &info)))
        return gpu::clean_string(info.bus_id, sizeof info.bus_id);
    }
    return std::nullopt;
  }

  std::optional<std::uint32_t> uint(Sym s, nvml::Device h) {
    const auto f = lib_.fn<nvml::DeviceUintFn>(s);
    unsigned v = 0;
    if (f == nullptr || !ok(s, f(h, &v))) return std::nullopt;
    return v;
  }

  std::optional<std::uint32_t> clock(nvml::Device h, int type) {
    const auto f = lib_.fn<nvml::DeviceClockFn>(Sym::kClockInfo);
    unsigned v = 0;
    if (f == nullptr || !ok(Sym::kClockInfo, f(h, type, &v))) return std::nullopt;
    return v;
  }

  std::optional<std::uint32_t> pcie(nvml::Device h, int counter) {
    const auto f = lib_.fn<nvml::DevicePcieThroughputFn>(Sym::kPcieThroughput);
    unsigned v = 0;
    if (f == nullptr || !ok(Sym::kPcieThroughput, f(h, counter, &v))) return std::nullopt;
    return v;
  }

  void memory(nvml::Device h, GpuReading& g) {
    g.memory_total_bytes.reset();
    g.memory_used_bytes.reset();
    g.memory_free_bytes.reset();
    const int v = lib_.version_index(Sym::kMemoryInfo);
    std::uint64_t total = 0, used = 0, free_bytes = 0;
    if (v == 0) {
      nvml::MemoryV2 m{};
      m.version = nvml::kMemoryV2Version;
      if (!ok(Sym::kMemoryInfo, lib_.fn<nvml::DeviceMemoryV2Fn>(Sym::kMemoryInfo)(h, &m))) return;
      total = m.total;
      used = m.used;
      free_bytes = m.free;
    } else if (v == 1) {
      nvml::MemoryV1 m{};
      if (!ok(Sym::kMemoryInfo, lib_.fn<nvml::DeviceMemoryV1Fn>(Sym::kMemoryInfo)(h, &m))) return;
      total = m.total;
      used = m.used;
      free_bytes = m.free;
    } else {
      return;
    }
    if (total == 0) return;
    g.memory_total_bytes = total;
    if (used <= total) g.memory_used_bytes = used;
    if (free_bytes <= total) g.memory_free_bytes = free_bytes;
  }

  // Volatile ECC counts (nvmlDeviceGetTotalEccErrors, NVML_VOLATILE_ECC: since the driver
  // loaded), read only while ECC is on: with it off NVML's counts mean nothing. A GPU without
  // ECC answers NOT_SUPPORTED, which leaves them absent.
  void ecc(nvml::Device h, GpuReading& g) {
    const auto mode = lib_.fn<nvml::DeviceEccModeFn>(Sym::kEccMode);
    const auto count = lib_.fn<nvml::DeviceEccCountFn>(Sym::kTotalEccErrors);
    if (mode == nullptr || count == nullptr) return;
    int current = -1, pending = -1;
    if (!ok(Sym::kEccMode, mode(h, &current, &pending)) || current != nvml::kFeatureEnabled) return;
    const auto read = [&](int error_type) -> std::optional<std::uint64_t> {
      unsigned long long v = 0;
      if (!ok(Sym::kTotalEccErrors, count(h, error_type, nvml::kVolatileEcc, &v)))
        return std::nullopt;
      if (v > kMaxEccCount) return std::nullopt;  // all ones: a GPU that fell off the bus
      return v;
    };
    g.ecc_corrected = read(nvml::kMemoryErrorCorrected);
    g.ecc_uncorrected = read(nvml::kMemoryErrorUncorrected);
  }

  // NVLink's data counters (NVML API Reference, nvmlDeviceGetFieldValues; nvml.h
  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX: KiB since the driver loaded), both in one call. A
  // GPU that answers NOT_SUPPORTED, for the call or for every field (no NVLink), is not asked
  // again while the library is loaded; a driver without the call leaves them absent.
  void nvlink(unsigned index, nvml::Device h, GpuReading& g) {
    const auto f = lib_.fn<nvml::DeviceFieldValuesFn>(Sym::kFieldValues);
    if (f == nullptr || no_nvlink_[index]) return;
    std::array<nvml::FieldValue, 2> v{};
    v[0].field_id = nvml::kFieldNvLinkThroughputDataTx;
    v[1].field_id = nvml::kFieldNvLinkThroughputDataRx;
    for (auto& x : v) x.scope_id = kNvLinkThroughputScope;
    const auto rc = f(h, static_cast<int>(v.size()), v.data());
    if (rc == nvml::kErrorNotSupported) {
      no_nvlink_[index] = true;
      return;
    }
    if (!ok(Sym::kFieldValues, rc)) return;
    bool supported = false;
    const auto read = [&](const nvml::FieldValue& x) -> std::optional<std::uint64_t> {
      if (x.nvml_return != nvml::kErrorNotSupported) supported = true;
      if (!ok(Sym::kFieldValues, x.nvml_return)) return std::nullopt;
      return counter_value(x);
    };
    g.nvlink_tx_kib = read(v[0]);
    g.nvlink_rx_kib = read(v[1]);
    if (!supported) no_nvlink_[index] = true;
  }

  template <class Info, class Fn>
  void processes_as(nvml::Device h, GpuReading& g, std::vector<Info>& buf) {
    const auto f = lib_.fn<Fn>(Sym::kComputeProcesses);
    if (buf.size() < 16) buf.resize(16);
    for (int attempt = 0; attempt < 2; ++attempt) {
      unsigned n = static_cast<unsigned>(buf.size());
      const auto rc = f(h, &n, buf.data());
      if (rc == nvml::kErrorInsufficientSize && attempt == 0 && n <= 65536) {
        buf.resize(n + 8);  // room for a few that start meanwhile
        continue;
      }
      if (!ok(Sym::kComputeProcesses, rc)) return;
      n = std::min<unsigned>(n, static_cast<unsigned>(buf.size()));
      g.processes.resize(n);
      for (unsigned i = 0; i < n; ++i) {
        g.processes[i].pid = static_cast<pid_t>(buf[i].pid);
        g.processes[i].used_memory_bytes.reset();
        if (buf[i].used_gpu_memory != nvml::kValueNotAvailable)
          g.processes[i].used_memory_bytes = buf[i].used_gpu_memory;
      }
      return;
    }
  }

  // Each compute process's SM utilisation since the last reading of this GPU (the driver keeps
  // a sample per process and period; lastSeenTimeStamp asks for the newer ones). A process the
  // call does not list did not use the GPU: 0. A GPU that says NOT_SUPPORTED is not asked again.
  void process_utilization(unsigned index, nvml::Device h, GpuReading& g) {
    const auto f = lib_.fn<nvml::DeviceProcessUtilizationFn>(Sym::kProcessUtilization);
    if (f == nullptr || g.processes.empty() || no_process_util_[index]) return;
    const unsigned long long since = util_seen_us_[index];
    unsigned n = 0;
    auto rc = f(h, nullptr, &n, since);
    if (rc == nvml::kErrorNotFound)
      n = 0;  // none newer: no process used the GPU
    else if (rc == nvml::kErrorNotSupported) {
      no_process_util_[index] = true;
      return;
    } else if (rc != nvml::kErrorInsufficientSize && !ok(Sym::kProcessUtilization, rc))
      return;
    n = std::min(n, 65536u);
    util_buf_.resize(n + 8);  // room for a few that start meanwhile
    if (n > 0) {
      n = static_cast<unsigned>(util_buf_.size());
      rc = f(h, util_buf_.data(), &n, since);
      if (rc == nvml::kErrorNotFound)
        n = 0;
      else if (!ok(Sym::kProcessUtilization, rc))
        return;
      n = std::min<unsigned>(n, static_cast<unsigned>(util_buf_.size()));
    }
    for (auto& p : g.processes) p.sm_util_pct = 0;
    for (unsigned i = 0; i < n; ++i) {
      const auto& s = util_buf_[i];
      util_seen_us_[index] = std::max(util_seen_us_[index], s.time_stamp);
      for (auto& p : g.processes)
        if (p.pid == static_cast<pid_t>(s.pid))
          p.sm_util_pct = std::max(*p.sm_util_pct, std::min(s.sm_util, 100u));
    }
  }

  // Xid events (NVML API Reference, "Event Handling Methods"): one event set for every GPU,
  // each registered for nvmlEventTypeXidCriticalError once; the set is drained without waiting
  // (timeout 0) at each reading. A GPU where registration is refused (vGPU guests, old boards:
  // NOT_SUPPORTED) has no Xid count, rather than a count of 0 that would mean "none happened".
  struct Xids {
    bool tried = false;
    nvml::Device handle = nullptr;  // registered: events name their GPU by handle
    std::uint64_t count = 0;
    std::optional<std::uint32_t> last;
    std::vector<XidCount> by_code;  // sorted by code
  };

  void register_xids(unsigned index, nvml::Device h) {
    auto& x = xids_[index];
    if (x.tried) return;
    x.tried = true;
    const auto create = lib_.fn<nvml::EventSetCreateFn>(Sym::kEventSetCreate);
    const auto reg = lib_.fn<nvml::RegisterEventsFn>(Sym::kRegisterEvents);
    if (create == nullptr || reg == nullptr ||
        lib_.fn<nvml::EventSetWaitFn>(Sym::kEventSetWait) == nullptr ||
        lib_.fn<nvml::EventSetFreeFn>(Sym::kEventSetFree) == nullptr)
      return;
    if (events_ == nullptr && !ok(Sym::kEventSetCreate, create(&events_))) {
      events_ = nullptr;
      return;
    }
    if (ok(Sym::kRegisterEvents, reg(h, nvml::kEventTypeXidCriticalError, events_))) x.handle = h;
  }

  void drain_events() {
    if (events_ == nullptr) return;
    const auto wait = lib_.fn<nvml::EventSetWaitFn>(Sym::kEventSetWait);
    // Bounded: a storm of events is counted over several readings, never a stuck thread.
    for (int n = 0; n < 1024; ++n) {
      nvml::EventData e{};
      const auto rc = wait(events_, &e, 0);
      if (rc == nvml::kErrorTimeout) return;  // none pending
      if (!ok(Sym::kEventSetWait, rc)) return;
      if ((e.event_type & nvml::kEventTypeXidCriticalError) == 0) continue;
      for (auto& x : xids_)
        if (x.handle != nullptr && x.handle == e.device) {
          ++x.count;
          const auto code =
              static_cast<std::uint32_t>(std::min<unsigned long long>(e.event_data, 0xFFFFFFFFu));
          x.last = code;
          auto at = std::lower_bound(x.by_code.begin(), x.by_code.end(), code,
                                     [](const XidCount& c, std::uint32_t v) { return c.code < v; });
          // At most kMaxXidCodes codes per GPU: a driver that sends garbage cannot grow it
          // without bound (the total above still counts every event).
          if (at != x.by_code.end() && at->code == code)
            ++at->count;
          else if (x.by_code.size() < kMaxXidCodes)
            x.by_code.insert(at, XidCount{code, 1});
        }
    }
  }

  void device(unsigned index, GpuReading& g) {
    g = GpuReading{};
    g.index = index;
    lost_ = false;
    nvml::Device h = nullptr;
    if (!ok(Sym::kHandleByIndex, lib_.fn<nvml::HandleByIndexFn>(Sym::kHandleByIndex)(index, &h))) {
      g.lost = true;
      return;
    }
    auto& id = ids_[index];
    // Asked again while NVML has not given the UUID (a GPU that failed at first and came back).
    if (!id || !id->uuid)
      id =
          Identity{text(Sym::kUuid, h), text(Sym::kName, h), bus_id(h), uint(Sym::kMinorNumber, h)};
    g.uuid = id->uuid;
    g.minor_number = id->minor_number;
    g.vendor = "nvidia";
    g.name = id->name;
    g.pci_bus_id = id->pci_bus_id;
    if (const auto f = lib_.fn<nvml::DeviceUtilizationFn>(Sym::kUtilizationRates)) {
      nvml::Utilization u{};
      if (ok(Sym::kUtilizationRates, f(h, &u)) && u.gpu <= 100 && u.memory <= 100) {
        g.utilization_gpu_pct = u.gpu;
        g.utilization_memory_pct = u.memory;
      }
    }
    memory(h, g);
    if (const auto mw = uint(Sym::kPowerUsage, h)) g.power_watts = *mw / 1000.0;
    if (const auto f = lib_.fn<nvml::DeviceTemperatureFn>(Sym::kTemperature)) {
      unsigned t = 0;
      if (ok(Sym::kTemperature, f(h, nvml::kTemperatureGpu, &t))) g.temperature_celsius = t;
    }
    g.sm_clock_mhz = clock(h, nvml::kClockSm);
    g.memory_clock_mhz = clock(h, nvml::kClockMem);
    if (const auto f = lib_.fn<nvml::DeviceU64Fn>(Sym::kClockEventReasons)) {
      unsigned long long r = 0;
      if (ok(Sym::kClockEventReasons, f(h, &r))) g.clock_event_reasons = r;
    }
    if (const auto r = uint(Sym::kPcieReplayCounter, h)) g.pcie_replay_count = *r;
    ecc(h, g);
    register_xids(index, h);
    if (const auto& x = xids_[index]; x.handle != nullptr) {
      g.xid_errors = x.count;
      g.last_xid = x.last;
      g.xid_codes = x.by_code;
    }
    g.pcie_tx_kib_s = pcie(h, nvml::kPcieUtilTxBytes);
    g.pcie_rx_kib_s = pcie(h, nvml::kPcieUtilRxBytes);
    nvlink(index, h, g);
    gpm(index, h, g);
    if (const auto f = lib_.fn<nvml::DeviceU64Fn>(Sym::kTotalEnergy)) {
      unsigned long long mj = 0;
      if (ok(Sym::kTotalEnergy, f(h, &mj))) g.energy_mj = mj;
    }
    const int v = lib_.version_index(Sym::kComputeProcesses);
    if (v == 0 || v == 1)
      processes_as<nvml::ProcessInfoV2, nvml::DeviceProcessesV2Fn>(h, g, procs_v2_);
    else if (v == 2)
      processes_as<nvml::ProcessInfoV1, nvml::DeviceProcessesV1Fn>(h, g, procs_v1_);
    process_utilization(index, h, g);
    g.sampled_at_ns = now_ns(CLOCK_MONOTONIC);
    g.lost = lost_;
  }

  // GPU Performance Monitoring, per GPU: whether it has it (asked once), and two samples that
  // take turns: the metrics of a reading cover the time since the last one (one interval), so
  // the first reading of a GPU has none.
  struct Gpm {
    bool asked = false, supported = false, have_previous = false;
    nvml::GpmSample previous = nullptr, current = nullptr;
  };

  void free_gpm() {
    const auto release = lib_.fn<nvml::GpmSampleFreeFn>(Sym::kGpmSampleFree);
    for (auto& m : gpm_) {
      if (release != nullptr && m.previous != nullptr) release(m.previous);
      if (release != nullptr && m.current != nullptr) release(m.current);
      m = Gpm{};
    }
  }

  void gpm(unsigned index, nvml::Device h, GpuReading& g) {
    const auto query = lib_.fn<nvml::GpmQueryDeviceSupportFn>(Sym::kGpmQueryDeviceSupport);
    const auto alloc = lib_.fn<nvml::GpmSampleAllocFn>(Sym::kGpmSampleAlloc);
    const auto release = lib_.fn<nvml::GpmSampleFreeFn>(Sym::kGpmSampleFree);
    const auto take = lib_.fn<nvml::GpmSampleGetFn>(Sym::kGpmSampleGet);
    const auto compute = lib_.fn<nvml::GpmMetricsGetFn>(Sym::kGpmMetricsGet);
    if (query == nullptr || alloc == nullptr || release == nullptr || take == nullptr ||
        compute == nullptr)
      return;
    auto& m = gpm_[index];
    if (!m.asked) {
      m.asked = true;
      nvml::GpmSupport support{nvml::kGpmSupportVersion, 0};
      if (!ok(Sym::kGpmQueryDeviceSupport, query(h, &support)) || support.is_supported_device == 0)
        return;
      if (!ok(Sym::kGpmSampleAlloc, alloc(&m.previous))) {
        m.previous = nullptr;
        return;
      }
      if (!ok(Sym::kGpmSampleAlloc, alloc(&m.current))) {
        release(m.previous);
        m.previous = m.current = nullptr;
        return;
      }
      m.supported = true;
    }
    if (!m.supported) return;
    if (!ok(Sym::kGpmSampleGet, take(h, m.current))) {
      m.have_previous = false;  // the next reading starts a new interval
      return;
    }
    if (m.have_previous) {
      if (!gpm_get_) gpm_get_ = std::make_unique<nvml::GpmMetricsGet>();
      nvml::GpmMetricsGet& q = *gpm_get_;
      constexpr unsigned kIds[] = {nvml::kGpmMetricSmUtil, nvml::kGpmMetricSmOccupancy,
                                   nvml::kGpmMetricAnyTensorUtil, nvml::kGpmMetricDramBwUtil};
      q.version = nvml::kGpmMetricsGetVersion;
      q.num_metrics = std::size(kIds);
      q.sample1 = m.previous;
      q.sample2 = m.current;
      for (std::size_t i = 0; i < std::size(kIds); ++i) {
        q.metrics[i] = nvml::GpmMetric{};
        q.metrics[i].metric_id = kIds[i];
      }
      if (ok(Sym::kGpmMetricsGet, compute(&q))) {
        // A percentage, as a ratio; a metric NVML did not compute, or a value outside 0-100
        // (a library that wrote nothing there), is left out.
        const auto ratio = [&](std::size_t i) -> std::optional<double> {
          const nvml::GpmMetric& x = q.metrics[i];
          if (x.nvml_return != nvml::kSuccess || !(x.value >= 0.0 && x.value <= 100.5))
            return std::nullopt;
          return std::min(x.value, 100.0) / 100.0;
        };
        g.sm_active_ratio = ratio(0);
        g.sm_occupancy_ratio = ratio(1);
        g.tensor_active_ratio = ratio(2);
        g.dram_active_ratio = ratio(3);
      }
    }
    std::swap(m.previous, m.current);
    m.have_previous = true;
  }

  const NvmlLibrary& lib_;
  std::set<std::string>* failed_ = nullptr;
  bool lost_ = false;  // a call on the GPU being read said NVML_ERROR_GPU_IS_LOST
  std::vector<std::optional<Identity>> ids_;
  std::vector<Xids> xids_;
  std::vector<bool> no_nvlink_;  // per GPU: NVML said NOT_SUPPORTED for its NVLink counters
  std::vector<Gpm> gpm_;
  std::unique_ptr<nvml::GpmMetricsGet> gpm_get_;  // 20 KiB: once, on the heap
  std::vector<unsigned long long> util_seen_us_;  // per GPU: the newest process sample read
  std::vector<bool> no_process_util_;             // per GPU: NOT_SUPPORTED for process utilisation
  std::vector<nvml::ProcessUtilizationSample> util_buf_;
  nvml::EventSet events_ = nullptr;
  std::vector<nvml::ProcessInfoV2> procs_v2_;
  std::vector<nvml::ProcessInfoV1> procs_v1_;
};

}  // namespace

struct NvmlSampler::Impl {
  explicit Impl(std::unique_ptr<NvmlLibrary> l) : lib(std::move(l)), reader(*lib) {}
  std::unique_ptr<NvmlLibrary> lib;
  Reader reader;
};

Result<NvmlSampler> NvmlSampler::open(const std::string& library,
                                      const std::vector<std::string>& more) {
  auto lib = NvmlLibrary::open(library, more);
  if (!lib) return tl::unexpected(lib.error());
  NvmlSampler s;
  s.impl_ = std::make_unique<Impl>(std::move(*lib));
  return s;
}

NvmlSampler::NvmlSampler() = default;
NvmlSampler::~NvmlSampler() = default;
NvmlSampler::NvmlSampler(NvmlSampler&&) noexcept = default;
NvmlSampler& NvmlSampler::operator=(NvmlSampler&&) noexcept = default;

void NvmlSampler::read(std::vector<GpuReading>& out, std::set<std::string>& failed) {
  if (impl_) impl_->reader.read(out, failed);
}

}  // namespace dltune::gpu

#pragma once
// libnvidia-ml loaded with dlopen through a table of symbols (docs/architecture.md,
// CONTRIBUTING.md, convention 7).
//
// Each symbol lists its versioned names newest first and is required or optional. The version
// that resolved is remembered, so the caller passes the struct layout of that version and no
// other (nvtop PR #108 and nvitop PR #79 show what a mismatch does). An NvmlLibrary that exists
// is loaded and initialised; its destructor calls nvmlShutdown and dlclose.
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "gpu/nvml_types.hpp"
#include "host/root.hpp"

namespace dltune::gpu {

enum class Sym : std::size_t {
  kInit,
  kShutdown,
  kErrorString,
  kDeviceCount,
  kHandleByIndex,
  kDriverVersion,
  kNvmlVersion,
  kCudaDriverVersion,
  kName,
  kUuid,
  kPciInfo,
  kMemoryInfo,
  kPersistenceMode,
  kEccMode,
  kTotalEccErrors,
  kClockInfo,
  kMaxClockInfo,
  kClockEventReasons,
  kCurrPcieLinkGeneration,
  kMaxPcieLinkGeneration,
  kCurrPcieLinkWidth,
  kMaxPcieLinkWidth,
  kTemperature,
  kPowerUsage,
  kPowerLimit,
  kNvLinkState,
  kNvLinkRemotePciInfo,
  kHandleByUuid,
  kSetPersistenceMode,
  // The sampler's (monitor::GpuCollector).
  kUtilizationRates,
  kPcieThroughput,
  kTotalEnergy,
  kComputeProcesses,
  // serve's: the PCIe replay counter and Xid events.
  kPcieReplayCounter,
  kMinorNumber,
  kEventSetCreate,
  kRegisterEvents,
  kEventSetWait,
  kEventSetFree,
  // check's and env's: memory health, power limits, application clocks, MIG.
  kRemappedRows,
  kRetiredPages,
  kRetiredPagesPending,
  kPowerManagementLimit,
  kPowerDefaultLimit,
  kPowerLimitConstraints,
  kApplicationsClock,
  kDefaultApplicationsClock,
  kMigMode,
  kMaxMigDeviceCount,
  kMigDeviceHandle,
  kGpuInstanceId,
  kComputeInstanceId,
  // NVLink's depth and the GPUs' topology.
  kNvLinkVersion,
  kNvLinkErrorCounter,
  kNvLinkRemoteDeviceType,
  kTopologyCommonAncestor,
  kP2PStatus,
  // The sampler's NVLink traffic counters (field values).
  kFieldValues,
  // The sampler's GPU Performance Monitoring (SM activity and occupancy, tensor, DRAM).
  kGpmQueryDeviceSupport,
  kGpmSampleAlloc,
  kGpmSampleFree,
  kGpmSampleGet,
  kGpmMetricsGet,
  // The sampler's per-process SM utilisation (the jobs' share of a GPU).
  kProcessUtilization,
  kCount,
};

inline constexpr std::size_t kMaxNames = 3;

struct SymbolSpec {
  Sym sym;
  // Newest first; unused slots are nullptr. Where the versions take different structs, the
  // caller picks the layout by the index that resolved (NvmlLibrary::version_index).
  std::array<const char*, kMaxNames> names;
  bool required;
};

// The table, one entry per Sym, in Sym order.
[[nodiscard]] std::span<const SymbolSpec> symbol_table();

// The library names tried when none is given: the driver's versioned soname, then the
// development link.
inline constexpr std::array<const char*, 2> kDefaultLibraryNames = {"libnvidia-ml.so.1",
                                                                    "libnvidia-ml.so"};

// Where the driver's libnvidia-ml.so.1 is in a tree that is the live host seen through a mount
// (host::Root::this_kernel, not the live root itself): the host's library files, as this
// machine's paths, for a container that has the host's / but not the NVIDIA container toolkit's
// libraries. Empty for the live host and for captures.
[[nodiscard]] std::vector<std::string> nvml_libraries_in(const host::Root& root);

// "NVML_ERROR_DRIVER_NOT_LOADED" for 9; "NVML_ERROR_UNKNOWN_CODE" for codes NVML never defined.
[[nodiscard]] std::string_view return_name(nvml::Return r);

// A string from the library made safe to keep: at most `cap` bytes up to the first NUL (the
// buffer need not hold one), bytes outside printable ASCII replaced by '?' (so a hostile library
// cannot put invalid UTF-8 into --json), surrounding spaces trimmed.
[[nodiscard]] std::string clean_string(const char* s, std::size_t cap);

class NvmlLibrary {
 public:
  // Loads `path` (or the default names when empty) with RTLD_NOW | RTLD_LOCAL, resolves the
  // table and calls nvmlInit. Errors read like
  //   "cannot load NVML: libnvidia-ml.so.1: cannot open shared object file: No such file ..."
  //   "required NVML symbol not found: nvmlDeviceGetCount_v2 (or nvmlDeviceGetCount) in PATH"
  //   "nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded"
  // `more`: files tried after the default names when `path` is empty (the host's own library
  // in a tree that is this kernel's: nvml_libraries_in).
  [[nodiscard]] static Result<std::unique_ptr<NvmlLibrary>> open(
      const std::string& path, const std::vector<std::string>& more = {});

  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary();

  // The file that was loaded (from dladdr when it can tell, else the name given to dlopen).
  [[nodiscard]] const std::string& path() const { return path_; }

  // The resolved function cast to its signature, or nullptr when the symbol is absent.
  template <class Fn>
  [[nodiscard]] Fn fn(Sym s) const {
    return reinterpret_cast<Fn>(fns_[static_cast<std::size_t>(s)]);
  }
  // Which of the symbol's names resolved (0 = newest); -1 when none did.
  [[nodiscard]] int version_index(Sym s) const { return versions_[static_cast<std::size_t>(s)]; }
  // The name that resolved ("nvmlDeviceGetPciInfo_v3"), or the newest name when none did.
  [[nodiscard]] std::string_view name(Sym s) const;

  // "NVML_ERROR_NOT_SUPPORTED (3): Not Supported": our name for the code, then the library's
  // own nvmlErrorString text when it has one and it says something more.
  [[nodiscard]] std::string describe(nvml::Return r) const;

 private:
  NvmlLibrary() = default;

  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string path_;
  std::array<void*, static_cast<std::size_t>(Sym::kCount)> fns_{};
  std::array<int, static_cast<std::size_t>(Sym::kCount)> versions_{};
};

}  // namespace dltune::gpu

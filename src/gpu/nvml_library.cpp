#include "gpu/nvml_library.hpp"

#include <dlfcn.h>

#include <cstring>

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::gpu {

namespace {

// Names and versions from the NVML API Reference (nvml.h of CUDA 12.x). The unversioned names are
// the oldest ABI of each call; nvml.h #defines the plain name to the newest version, which is why
// the library exports both.
constexpr SymbolSpec kTable[] = {
    {Sym::kInit, {"nvmlInit_v2", "nvmlInit", nullptr}, true},
    {Sym::kShutdown, {"nvmlShutdown", nullptr, nullptr}, true},
    {Sym::kErrorString, {"nvmlErrorString", nullptr, nullptr}, false},
    {Sym::kDeviceCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", nullptr}, true},
    {Sym::kHandleByIndex,
     {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", nullptr},
     true},
    {Sym::kDriverVersion, {"nvmlSystemGetDriverVersion", nullptr, nullptr}, false},
    {Sym::kNvmlVersion, {"nvmlSystemGetNVMLVersion", nullptr, nullptr}, false},
    {Sym::kCudaDriverVersion,
     {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion", nullptr},
     false},
    {Sym::kName, {"nvmlDeviceGetName", nullptr, nullptr}, false},
    {Sym::kUuid, {"nvmlDeviceGetUUID", nullptr, nullptr}, false},
    // _v3 and _v2 take nvmlPciInfo_t (PciInfoV2); the plain name takes the old layout (PciInfoV1).
    {Sym::kPciInfo,
     {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
     false},
    // _v2 takes nvmlMemory_v2_t (MemoryV2); the plain name nvmlMemory_t (MemoryV1).
    {Sym::kMemoryInfo, {"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo", nullptr}, false},
    {Sym::kPersistenceMode, {"nvmlDeviceGetPersistenceMode", nullptr, nullptr}, false},
    {Sym::kEccMode, {"nvmlDeviceGetEccMode", nullptr, nullptr}, false},
    {Sym::kTotalEccErrors, {"nvmlDeviceGetTotalEccErrors", nullptr, nullptr}, false},
    {Sym::kClockInfo, {"nvmlDeviceGetClockInfo", nullptr, nullptr}, false},
    {Sym::kMaxClockInfo, {"nvmlDeviceGetMaxClockInfo", nullptr, nullptr}, false},
    // Renamed in NVML 12.2 ("throttle" became "event"); same signature and bits.
    {Sym::kClockEventReasons,
     {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
      nullptr},
     false},
    {Sym::kCurrPcieLinkGeneration,
     {"nvmlDeviceGetCurrPcieLinkGeneration", nullptr, nullptr},
     false},
    {Sym::kMaxPcieLinkGeneration, {"nvmlDeviceGetMaxPcieLinkGeneration", nullptr, nullptr}, false},
    {Sym::kCurrPcieLinkWidth, {"nvmlDeviceGetCurrPcieLinkWidth", nullptr, nullptr}, false},
    {Sym::kMaxPcieLinkWidth, {"nvmlDeviceGetMaxPcieLinkWidth", nullptr, nullptr}, false},
    {Sym::kTemperature, {"nvmlDeviceGetTemperature", nullptr, nullptr}, false},
    {Sym::kPowerUsage, {"nvmlDeviceGetPowerUsage", nullptr, nullptr}, false},
    {Sym::kPowerLimit, {"nvmlDeviceGetEnforcedPowerLimit", nullptr, nullptr}, false},
    {Sym::kNvLinkState, {"nvmlDeviceGetNvLinkState", nullptr, nullptr}, false},
    // _v2 takes nvmlPciInfo_t (PciInfoV2); the plain name the old layout (PciInfoV1).
    {Sym::kNvLinkRemotePciInfo,
     {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo", nullptr},
     false},
    // Used by tune (src/tune/nvml_setting.cpp). nvmlDeviceGetHandleByUUID takes the ASCII UUID
    // that nvmlDeviceGetUUID writes; where it is absent, tune compares the UUIDs of every index.
    {Sym::kHandleByUuid, {"nvmlDeviceGetHandleByUUID", nullptr, nullptr}, false},
    // NVML reference, "Device Commands": Linux only, needs root (NVML_ERROR_NO_PERMISSION
    // otherwise), lasts until the next reboot.
    {Sym::kSetPersistenceMode, {"nvmlDeviceSetPersistenceMode", nullptr, nullptr}, false},
    // The sampler's (NVML API Reference, "Device Queries"): nvmlUtilization_t over the
    // driver's sample period; PCIe throughput in KB/s over 20 ms (Maxwell and newer); total
    // energy in mJ since the driver was loaded (Volta and newer).
    {Sym::kUtilizationRates, {"nvmlDeviceGetUtilizationRates", nullptr, nullptr}, false},
    {Sym::kPcieThroughput, {"nvmlDeviceGetPcieThroughput", nullptr, nullptr}, false},
    {Sym::kTotalEnergy, {"nvmlDeviceGetTotalEnergyConsumption", nullptr, nullptr}, false},
    // _v3 and _v2 take nvmlProcessInfo_t (ProcessInfoV2); the plain name nvmlProcessInfo_v1_t
    // (ProcessInfoV1).
    {Sym::kComputeProcesses,
     {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
      "nvmlDeviceGetComputeRunningProcesses"},
     false},
    // serve's (NVML API Reference, "Device Queries" and "Event Handling Methods"): the
    // PCIe replay counter (link-level retransmissions); Xid critical errors arrive as events on
    // an event set. nvmlEventSetWait_v2 fills nvmlEventData_t with the MIG instance ids at the
    // end; the plain name fills the struct without them (EventData holds both).
    {Sym::kPcieReplayCounter, {"nvmlDeviceGetPcieReplayCounter", nullptr, nullptr}, false},
    // The N of the GPU's /dev/nvidiaN (NVML API Reference, nvmlDeviceGetMinorNumber: Linux,
    // all products): dcgm-exporter's `device` label is "nvidia" and this number.
    {Sym::kMinorNumber, {"nvmlDeviceGetMinorNumber", nullptr, nullptr}, false},
    {Sym::kEventSetCreate, {"nvmlEventSetCreate", nullptr, nullptr}, false},
    {Sym::kRegisterEvents, {"nvmlDeviceRegisterEvents", nullptr, nullptr}, false},
    {Sym::kEventSetWait, {"nvmlEventSetWait_v2", "nvmlEventSetWait", nullptr}, false},
    {Sym::kEventSetFree, {"nvmlEventSetFree", nullptr, nullptr}, false},
    // check's and env's (NVML API Reference, "Device Queries" and "Multi Instance GPU
    // Management"): row remapping (Ampere and newer), retired pages (older GPUs), the power
    // limits in mW, application clocks, MIG mode and its devices.
    {Sym::kRemappedRows, {"nvmlDeviceGetRemappedRows", nullptr, nullptr}, false},
    {Sym::kRetiredPages, {"nvmlDeviceGetRetiredPages", nullptr, nullptr}, false},
    {Sym::kRetiredPagesPending,
     {"nvmlDeviceGetRetiredPagesPendingStatus", nullptr, nullptr},
     false},
    {Sym::kPowerManagementLimit, {"nvmlDeviceGetPowerManagementLimit", nullptr, nullptr}, false},
    {Sym::kPowerDefaultLimit,
     {"nvmlDeviceGetPowerManagementDefaultLimit", nullptr, nullptr},
     false},
    {Sym::kPowerLimitConstraints,
     {"nvmlDeviceGetPowerManagementLimitConstraints", nullptr, nullptr},
     false},
    {Sym::kApplicationsClock, {"nvmlDeviceGetApplicationsClock", nullptr, nullptr}, false},
    {Sym::kDefaultApplicationsClock,
     {"nvmlDeviceGetDefaultApplicationsClock", nullptr, nullptr},
     false},
    {Sym::kMigMode, {"nvmlDeviceGetMigMode", nullptr, nullptr}, false},
    {Sym::kMaxMigDeviceCount, {"nvmlDeviceGetMaxMigDeviceCount", nullptr, nullptr}, false},
    {Sym::kMigDeviceHandle, {"nvmlDeviceGetMigDeviceHandleByIndex", nullptr, nullptr}, false},
    {Sym::kGpuInstanceId, {"nvmlDeviceGetGpuInstanceId", nullptr, nullptr}, false},
    {Sym::kComputeInstanceId, {"nvmlDeviceGetComputeInstanceId", nullptr, nullptr}, false},
    // NVLink per link (NVML API Reference, "NvLink Methods") and the GPUs' topology ("Topology
    // Queries"): what nvidia-smi nvlink -s/-e and nvidia-smi topo -m show.
    {Sym::kNvLinkVersion, {"nvmlDeviceGetNvLinkVersion", nullptr, nullptr}, false},
    {Sym::kNvLinkErrorCounter, {"nvmlDeviceGetNvLinkErrorCounter", nullptr, nullptr}, false},
    {Sym::kNvLinkRemoteDeviceType,
     {"nvmlDeviceGetNvLinkRemoteDeviceType", nullptr, nullptr},
     false},
    {Sym::kTopologyCommonAncestor,
     {"nvmlDeviceGetTopologyCommonAncestor", nullptr, nullptr},
     false},
    {Sym::kP2PStatus, {"nvmlDeviceGetP2PStatus", nullptr, nullptr}, false},
    // The sampler's (NVML API Reference, "Field Value Queries"): NVLink's data counters are
    // field values, read for several fields in one call. Older drivers lack the call.
    {Sym::kFieldValues, {"nvmlDeviceGetFieldValues", nullptr, nullptr}, false},
    // GPU Performance Monitoring (NVML API Reference, "GPM Functions"; drivers from R520, GPUs
    // from Hopper): older drivers lack the calls, older GPUs say they are not supported.
    {Sym::kGpmQueryDeviceSupport, {"nvmlGpmQueryDeviceSupport", nullptr, nullptr}, false},
    {Sym::kGpmSampleAlloc, {"nvmlGpmSampleAlloc", nullptr, nullptr}, false},
    {Sym::kGpmSampleFree, {"nvmlGpmSampleFree", nullptr, nullptr}, false},
    {Sym::kGpmSampleGet, {"nvmlGpmSampleGet", nullptr, nullptr}, false},
    {Sym::kGpmMetricsGet, {"nvmlGpmMetricsGet", nullptr, nullptr}, false},
    {Sym::kProcessUtilization, {"nvmlDeviceGetProcessUtilization", nullptr, nullptr}, false},
};
static_assert(std::size(kTable) == static_cast<std::size_t>(Sym::kCount));

constexpr bool table_in_order() {
  for (std::size_t i = 0; i < std::size(kTable); ++i)
    if (static_cast<std::size_t>(kTable[i].sym) != i) return false;
  return true;
}
static_assert(table_in_order(), "kTable must list the symbols in Sym order");

std::string last_dlerror(const std::string& fallback) {
  const char* e = ::dlerror();
  return e != nullptr ? clean_string(e, 4096) : fallback;
}

// "nvmlDeviceGetCount_v2 (or nvmlDeviceGetCount)"
std::string all_names(const SymbolSpec& spec) {
  std::string out = spec.names[0];
  for (std::size_t i = 1; i < kMaxNames && spec.names[i] != nullptr; ++i)
    out += fmt::format(" (or {})", spec.names[i]);
  return out;
}

}  // namespace

std::span<const SymbolSpec> symbol_table() {
  return kTable;
}

std::string_view return_name(nvml::Return r) {
  // nvmlReturn_t values, NVML API Reference ("Return values").
  switch (r) {
    case 0:
      return "NVML_SUCCESS";
    case 1:
      return "NVML_ERROR_UNINITIALIZED";
    case 2:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case 3:
      return "NVML_ERROR_NOT_SUPPORTED";
    case 4:
      return "NVML_ERROR_NO_PERMISSION";
    case 5:
      return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6:
      return "NVML_ERROR_NOT_FOUND";
    case 7:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8:
      return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10:
      return "NVML_ERROR_TIMEOUT";
    case 11:
      return "NVML_ERROR_IRQ_ISSUE";
    case 12:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14:
      return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15:
      return "NVML_ERROR_GPU_IS_LOST";
    case 16:
      return "NVML_ERROR_RESET_REQUIRED";
    case 17:
      return "NVML_ERROR_OPERATING_SYSTEM";
    case 18:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19:
      return "NVML_ERROR_IN_USE";
    case 20:
      return "NVML_ERROR_MEMORY";
    case 21:
      return "NVML_ERROR_NO_DATA";
    case 22:
      return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23:
      return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24:
      return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case 25:
      return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26:
      return "NVML_ERROR_DEPRECATED";
    case 27:
      return "NVML_ERROR_NOT_READY";
    case 28:
      return "NVML_ERROR_GPU_NOT_FOUND";
    case 29:
      return "NVML_ERROR_INVALID_STATE";
    case 999:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "NVML_ERROR_UNKNOWN_CODE";
  }
}

std::string clean_string(const char* s, std::size_t cap) {
  if (s == nullptr) return {};
  const std::size_t n = ::strnlen(s, cap);
  std::string out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return std::string(text::trim(out));
}

std::vector<std::string> nvml_libraries_in(const host::Root& root) {
  std::vector<std::string> out;
  if (root.live() || !root.this_kernel()) return out;
  // The driver installs its soname where the distribution keeps libraries (Debian and Ubuntu's
  // multiarch directories, RHEL's lib64).
  for (const char* p :
       {"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1",
        "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1", "/usr/lib/libnvidia-ml.so.1"}) {
    // Links followed inside the tree: the soname links to the versioned file beside it.
    const auto resolved = root.resolve(p);
    if (!resolved || !*resolved) continue;
    const auto info = root.stat(**resolved);
    if (info && *info && (*info)->kind == host::Kind::kFile)
      out.push_back(root.outside(**resolved));
  }
  return out;
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::open(const std::string& path,
                                                       const std::vector<std::string>& more) {
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->versions_.fill(-1);
  ::dlerror();  // clear any earlier error
  if (!path.empty()) {
    lib->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib->handle_ == nullptr)
      return fail("cannot load NVML:", last_dlerror(path + ": dlopen failed"));
    lib->path_ = path;
  } else {
    std::string first_error;
    std::vector<std::string> names(kDefaultLibraryNames.begin(), kDefaultLibraryNames.end());
    names.insert(names.end(), more.begin(), more.end());
    for (const auto& name : names) {
      lib->handle_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib->handle_ != nullptr) {
        lib->path_ = name;
        break;
      }
      const auto e = last_dlerror(name + ": dlopen failed");
      if (first_error.empty()) first_error = e;
    }
    // The driver's soname is the one that matters; the unversioned link is a development file.
    if (lib->handle_ == nullptr) return fail("cannot load NVML:", first_error);
  }

  for (const auto& spec : kTable) {
    const auto i = static_cast<std::size_t>(spec.sym);
    for (std::size_t v = 0; v < kMaxNames && spec.names[v] != nullptr; ++v) {
      if (void* p = ::dlsym(lib->handle_, spec.names[v])) {
        lib->fns_[i] = p;
        lib->versions_[i] = static_cast<int>(v);
        break;
      }
    }
    if (spec.required && lib->fns_[i] == nullptr)
      return fail("required NVML symbol not found:",
                  fmt::format("{} in {}", all_names(spec), lib->path_));
  }

  Dl_info info{};
  if (::dladdr(lib->fns_[static_cast<std::size_t>(Sym::kInit)], &info) != 0 &&
      info.dli_fname != nullptr && info.dli_fname[0] == '/')
    lib->path_ = clean_string(info.dli_fname, 4096);

  const auto rc = lib->fn<nvml::InitFn>(Sym::kInit)();
  if (rc != nvml::kSuccess)
    return fail(fmt::format("{} failed:", lib->name(Sym::kInit)), lib->describe(rc));
  lib->initialised_ = true;
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialised_) {
    if (auto shutdown = fn<nvml::ShutdownFn>(Sym::kShutdown)) shutdown();
  }
  if (handle_ != nullptr) ::dlclose(handle_);
}

std::string_view NvmlLibrary::name(Sym s) const {
  const auto& spec = kTable[static_cast<std::size_t>(s)];
  const int v = version_index(s);
  return spec.names[v >= 0 ? static_cast<std::size_t>(v) : 0];
}

std::string NvmlLibrary::describe(nvml::Return r) const {
  std::string out = fmt::format("{} ({})", return_name(r), r);
  if (auto error_string = fn<nvml::ErrorStringFn>(Sym::kErrorString)) {
    const auto said = clean_string(error_string(r), 256);
    if (!said.empty() && said != return_name(r)) out += ": " + said;
  }
  return out;
}

}  // namespace dltune::gpu

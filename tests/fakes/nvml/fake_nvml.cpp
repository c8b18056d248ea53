// A fake libnvidia-ml.so whose GPUs a test describes in a JSON file named by FAKE_NVML_CONFIG
// (the format is in README.md beside this file). It exports the NVML symbols dltune resolves,
// with the C signatures and struct layouts of the NVML API Reference, written out here on their
// own (not shared with src/gpu/nvml_types.hpp) so that a layout mistake on either side shows.
//
// Variants, from this one source:
//   (default)             every symbol, newest versions and the old unversioned ones
//   FAKE_NVML_NOSYMS      without nvmlDeviceGetCount_v2 / nvmlDeviceGetCount (a required symbol)
//   FAKE_NVML_OLD         only the unversioned, oldest symbols and their old struct layouts
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_nvml_state.hpp"

namespace {

using json = nlohmann::json;

// nvmlReturn_t values (NVML API Reference).
constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
[[maybe_unused]] constexpr int kNotFound = 6;  // (not in the old library's build)
constexpr int kInsufficientSize = 7;
[[maybe_unused]] constexpr int kArgumentVersionMismatch = 25;
constexpr int kUnknown = 999;

struct Gpu {
  json config = json::object();
  bool xid_registered = false;
  std::size_t xids_delivered = 0;   // of config["xid_events"]
  long long field_value_calls = 0;  // nvmlDeviceGetFieldValues on this GPU: the counters' growth
  std::vector<Gpu> mig_devices;     // config["mig"]["devices"], handles of their own
};

// A GPU and its MIG devices (built once per config, so that handles stay put).
Gpu make_gpu(const json& config) {
  Gpu g;
  g.config = config;
  if (config.contains("mig") && config["mig"].is_object() && config["mig"].contains("devices") &&
      config["mig"]["devices"].is_array())
    for (const auto& m : config["mig"]["devices"]) {
      Gpu mig;
      mig.config = m;
      g.mig_devices.push_back(std::move(mig));
    }
  return g;
}

struct State {
  bool initialised = false;
  // nvmlInit and nvmlShutdown are reference counted, as in NVML ("Shutdown only occurs when the
  // reference count reaches zero", NVML API Reference, nvmlShutdown): two users in one process
  // (serve's sampler and its check, each on a thread) each init and shut down. The config is
  // read at an init from zero only.
  int references = 0;
  json config = json::object();
  std::vector<Gpu> gpus;
  Gpu blank;  // the handle for indices past the described GPUs (device_count override)
  // How often each function was called since the init from zero (fake_nvml_calls).
  std::map<std::string, unsigned long long> calls;
};

State& state() {
  static State s;
  return s;
}

// NVML is thread-safe: one lock around every call here, so that one thread's init (which reads
// the config again) cannot change what another thread's call is reading.
std::recursive_mutex& lock() {
  static std::recursive_mutex m;
  return m;
}

void log_call(const char* what) {
  if (const char* path = std::getenv("FAKE_NVML_LOG")) {
    std::ofstream out(path, std::ios::app);
    out << what << '\n';
  }
}

// The return code that the config asks `fn` to fail with, on this GPU or on every one. "fn" is
// the exported name ("nvmlDeviceGetPciInfo_v3") or the name without its version suffix.
int injected(const char* fn, const Gpu* gpu) {
  std::string base = fn;
  if (const auto v = base.rfind("_v"); v != std::string::npos) base.resize(v);
  const json* scopes[] = {gpu != nullptr ? &gpu->config : nullptr, &state().config};
  for (const json* scope : scopes) {
    if (scope == nullptr || !scope->contains("fail") || !(*scope)["fail"].is_object()) continue;
    const auto& f = (*scope)["fail"];
    for (const auto& name : {std::string(fn), base})
      if (f.contains(name) && f[name].is_number_integer()) return f[name].get<int>();
  }
  return kSuccess;
}

// Garbage in the out-parameters of a call that fails: the caller must not use them.
template <class T>
void scribble(T* p) {
  if (p != nullptr) std::memset(static_cast<void*>(p), 0xA5, sizeof(T));
}

std::optional<long long> number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  const auto& v = j[key];
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_unsigned()) return static_cast<long long>(v.get<unsigned long long>());
  if (v.is_number_integer()) return v.get<long long>();
  return std::nullopt;
}

std::optional<std::string> text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return std::nullopt;
  return j[key].get<std::string>();
}

// Copies like NVML does, or, when the config says "unterminated", fills the whole buffer with
// the text and 'X' after it and no NUL at all.
int put_string(const std::string& s, char* buf, unsigned len, bool unterminated) {
  if (buf == nullptr || len == 0) return kInvalidArgument;
  if (unterminated) {
    std::memset(buf, 'X', len);
    std::memcpy(buf, s.data(), std::min<std::size_t>(len, s.size()));
    return kSuccess;
  }
  if (s.size() + 1 > len) return kInsufficientSize;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return kSuccess;
}

Gpu* gpu_of(void* handle) {
  return static_cast<Gpu*>(handle);
}

// Runs one call: not initialised, injected failures, and any exception become return codes.
template <class F>
int call(const char* fn, void* handle, F&& body) {
  std::lock_guard guard(lock());
  try {
    ++state().calls[fn];
    if (!state().initialised) return kUninitialized;
    if (const int rc = injected(fn, handle != nullptr ? gpu_of(handle) : nullptr); rc != kSuccess)
      return rc;
    return body();
  } catch (...) {
    return kUnknown;
  }
}

template <class T>
int scalar(const json& j, const char* key, T* out) {
  const auto v = number(j, key);
  if (!v) return kNotSupported;
  if (out == nullptr) return kInvalidArgument;
  *out = static_cast<T>(*v);
  return kSuccess;
}

int load_config() {
  State& s = state();
  s.config = json::object();
  s.gpus.clear();
  s.calls.clear();
  const char* path = std::getenv("FAKE_NVML_CONFIG");
  if (path == nullptr) return kSuccess;  // no GPUs
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  auto j = json::parse(buf.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return kUnknown;
  s.config = std::move(j);
  if (s.config.contains("gpus") && s.config["gpus"].is_array())
    for (const auto& g : s.config["gpus"]) s.gpus.push_back(make_gpu(g));
  return kSuccess;
}

int init(const char* fn) {
  std::lock_guard guard(lock());
  log_call(fn);
  // Initialised already (another user in this process): the GPUs, their handles and their
  // event registrations stay as they are.
  if (state().references > 0) {
    ++state().references;
    return kSuccess;
  }
  try {
    if (const int rc = load_config(); rc != kSuccess) return rc;
  } catch (...) {
    return kUnknown;
  }
  if (const auto e = number(state().config, "init_error"); e && *e != 0)
    return static_cast<int>(*e);
  state().initialised = true;
  ++state().references;
  return kSuccess;
}

unsigned device_count() {
  if (const auto n = number(state().config, "device_count")) return static_cast<unsigned>(*n);
  return static_cast<unsigned>(state().gpus.size());
}

int handle_by_index(const char* fn, unsigned index, void** device) {
  return call(fn, nullptr, [&] {
    if (device == nullptr || index >= device_count()) return kInvalidArgument;
    // A GPU's own `fail` of the call fails its index's handle (a GPU NVML cannot reach).
    if (index < state().gpus.size())
      if (const int rc = injected(fn, &state().gpus[index]); rc != kSuccess) return rc;
    *device = index < state().gpus.size() ? &state().gpus[index] : &state().blank;
    return kSuccess;
  });
}

// The two nvmlPciInfo_t layouts (NVML API Reference, struct nvmlPciInfo_t; the legacy one is
// that of NVML before version 8).
struct PciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct PciInfoLegacy {
  char busId[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  unsigned int reserved0, reserved1, reserved2, reserved3;
};

// Fills either layout from a bus id string "00000000:17:00.0".
template <class Info>
int fill_pci(const std::string& bus_id, const json& j, Info* out) {
  if (out == nullptr) return kInvalidArgument;
  std::memset(out, 0, sizeof *out);
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn);
  out->domain = domain;
  out->bus = bus;
  out->device = dev;
  out->pciDeviceId = static_cast<unsigned>(number(j, "pci_device_id").value_or(0));
  out->pciSubSystemId = static_cast<unsigned>(number(j, "pci_subsystem_id").value_or(0));
  if constexpr (sizeof(Info) == sizeof(PciInfo)) {
    std::snprintf(out->busIdLegacy, sizeof out->busIdLegacy, "%04x:%02x:%02x.%x", domain, bus, dev,
                  fn);
    std::snprintf(out->busId, sizeof out->busId, "%s", bus_id.c_str());
  } else {
    std::snprintf(out->busId, sizeof out->busId, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  }
  return kSuccess;
}

template <class Info>
int pci_info(const char* fn, void* device, Info* out) {
  return call(fn, device, [&] {
    const auto id = text(gpu_of(device)->config, "pci_bus_id");
    if (!id) return kNotSupported;
    return fill_pci(*id, gpu_of(device)->config, out);
  });
}

const json& nvlink(void* device, unsigned link) {
  static const json kNone;
  const auto& g = gpu_of(device)->config;
  if (!g.contains("nvlinks") || !g["nvlinks"].is_array() || link >= g["nvlinks"].size())
    return kNone;
  return g["nvlinks"][link];
}

template <class Info>
int nvlink_remote(const char* fn, void* device, unsigned link, Info* out) {
  return call(fn, device, [&] {
    const auto& l = nvlink(device, link);
    const auto id = text(l, "remote_pci_bus_id");
    if (!id) return kNotSupported;
    return fill_pci(*id, l, out);
  });
}

// nvmlProcessInfo_v1_t and nvmlProcessInfo_t (= nvmlProcessInfo_v2_t, taken by the _v2 and _v3
// calls), NVML API Reference.
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct ProcessInfoV2 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};

// The GPU's "processes"; NVML's in/out count: too little room is NVML_ERROR_INSUFFICIENT_SIZE
// with the count needed. A process without "used_memory_bytes" gets NVML_VALUE_NOT_AVAILABLE.
template <class Info>
int processes(const char* fn, void* device, unsigned int* count, Info* infos) {
  return call(fn, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (count == nullptr) return kInvalidArgument;
    if (!g.contains("processes") || !g["processes"].is_array()) return kNotSupported;
    const auto& list = g["processes"];
    const auto n = static_cast<unsigned>(list.size());
    if (*count < n || (n > 0 && infos == nullptr)) {
      *count = n;
      return kInsufficientSize;
    }
    for (unsigned i = 0; i < n; ++i) {
      std::memset(&infos[i], 0, sizeof infos[i]);
      infos[i].pid = static_cast<unsigned>(number(list[i], "pid").value_or(0));
      infos[i].usedGpuMemory =
          static_cast<unsigned long long>(number(list[i], "used_memory_bytes").value_or(-1));
      if constexpr (sizeof(Info) == sizeof(ProcessInfoV2)) {
        infos[i].gpuInstanceId = 0xFFFFFFFFu;
        infos[i].computeInstanceId = 0xFFFFFFFFu;
      }
    }
    *count = n;
    return kSuccess;
  });
}

}  // namespace

// Everything below is the library's interface, with NVML's C signatures. Pointers to NVML's
// enums are int*, nvmlDevice_t is void*.
extern "C" {

// Not NVML's: how often the function `name` (its exported name) was called since the config was
// last read, for tests that a call is not repeated. Tests find it with dlsym on the fake.
unsigned long long fake_nvml_calls(const char* name) {
  std::lock_guard guard(lock());
  if (name == nullptr) return 0;
  const auto it = state().calls.find(name);
  return it == state().calls.end() ? 0 : it->second;
}

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};

int nvmlInit() {
  return init("nvmlInit");
}
int nvmlShutdown() {
  std::lock_guard guard(lock());
  log_call("nvmlShutdown");
  if (!state().initialised) return kUninitialized;
  if (--state().references <= 0) {
    state().references = 0;
    state().initialised = false;
  }
  return kSuccess;
}

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 15:
      return "GPU is lost";
    case 18:
      return "RM has detected an NVML/RM version mismatch.";
    case 25:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return call(__func__, nullptr, [&] {
    const auto v = text(state().config, "driver_version");
    if (!v) return kNotSupported;
    return put_string(*v, version, length, number(state().config, "unterminated").value_or(0));
  });
}
int nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return call(__func__, nullptr, [&] {
    const auto v = text(state().config, "nvml_version");
    if (!v) return kNotSupported;
    return put_string(*v, version, length, number(state().config, "unterminated").value_or(0));
  });
}
int nvmlSystemGetCudaDriverVersion(int* v) {
  scribble(v);
  return call(__func__, nullptr, [&] { return scalar(state().config, "cuda_driver_version", v); });
}

#ifndef FAKE_NVML_NOSYMS
int nvmlDeviceGetCount(unsigned int* count) {
  return call(__func__, nullptr, [&] {
    if (count == nullptr) return kInvalidArgument;
    *count = device_count();
    return kSuccess;
  });
}
#endif

int nvmlDeviceGetHandleByIndex(unsigned int index, void** device) {
  return handle_by_index(__func__, index, device);
}

int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    const auto v = text(g, "name");
    if (!v) return kNotSupported;
    return put_string(*v, name, length, number(g, "unterminated").value_or(0));
  });
}
int nvmlDeviceGetUUID(void* device, char* uuid, unsigned int length) {
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    const auto v = text(g, "uuid");
    if (!v) return kNotSupported;
    return put_string(*v, uuid, length, number(g, "unterminated").value_or(0));
  });
}

int nvmlDeviceGetPciInfo(void* device, PciInfoLegacy* pci) {
  scribble(pci);
  return pci_info(__func__, device, pci);
}

int nvmlDeviceGetMemoryInfo(void* device, nvmlMemory_t* memory) {
  scribble(memory);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    const auto total = number(g, "memory_total_bytes");
    if (!total || memory == nullptr) return kNotSupported;
    memory->total = static_cast<unsigned long long>(*total);
    memory->used = static_cast<unsigned long long>(number(g, "memory_used_bytes").value_or(0));
    memory->free = memory->total - memory->used;
    return kSuccess;
  });
}

// The mode is the config's, unless a set-call changed it: in FAKE_NVML_STATE when that is set
// (it outlives the process), else in the config held in memory until the next nvmlInit.
int nvmlDeviceGetPersistenceMode(void* device, int* mode) {
  scribble(mode);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (const auto uuid = text(g, "uuid"); uuid && number(g, "persistence_mode") && mode) {
      if (const auto v = fake_nvml::stored(*uuid, "persistence_mode")) {
        *mode = *v ? 1 : 0;
        return kSuccess;
      }
    }
    return scalar(g, "persistence_mode", mode);
  });
}

// mode: NVML_FEATURE_DISABLED (0) or NVML_FEATURE_ENABLED (1). A GPU without "persistence_mode"
// does not support it; one with "persistence_mode_sticky" says success and changes nothing.
int nvmlDeviceSetPersistenceMode(void* device, int mode) {
  return call(__func__, device, [&] {
    auto& g = gpu_of(device)->config;
    if (!number(g, "persistence_mode")) return kNotSupported;
    if (mode != 0 && mode != 1) return kInvalidArgument;
    if (number(g, "persistence_mode_sticky").value_or(0)) return kSuccess;
    g["persistence_mode"] = mode == 1;
    if (const auto uuid = text(g, "uuid"))
      if (!fake_nvml::store(*uuid, "persistence_mode", mode == 1)) return kUnknown;
    return kSuccess;
  });
}

int nvmlDeviceGetEccMode(void* device, int* current, int* pending) {
  scribble(current);
  scribble(pending);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    const auto c = number(g, "ecc_enabled");
    if (!c || current == nullptr || pending == nullptr) return kNotSupported;
    *current = static_cast<int>(*c);
    *pending = static_cast<int>(number(g, "ecc_pending_enabled").value_or(*c));
    return kSuccess;
  });
}

// errorType: 0 corrected, 1 uncorrected; counterType: 0 volatile, 1 aggregate.
int nvmlDeviceGetTotalEccErrors(void* device, int error_type, int counter_type,
                                unsigned long long* count) {
  scribble(count);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("ecc_errors")) return kNotSupported;
    const char* key = counter_type == 0
                          ? (error_type == 0 ? "volatile_corrected" : "volatile_uncorrected")
                          : (error_type == 0 ? "aggregate_corrected" : "aggregate_uncorrected");
    return scalar(g["ecc_errors"], key, count);
  });
}

// clockType: 0 graphics, 1 SM, 2 memory.
int nvmlDeviceGetClockInfo(void* device, int type, unsigned int* clock) {
  scribble(clock);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("clocks")) return kNotSupported;
    return scalar(g["clocks"],
                  type == 1   ? "sm_mhz"
                  : type == 2 ? "memory_mhz"
                              : "graphics_mhz",
                  clock);
  });
}
int nvmlDeviceGetMaxClockInfo(void* device, int type, unsigned int* clock) {
  scribble(clock);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("clocks")) return kNotSupported;
    return scalar(g["clocks"],
                  type == 1   ? "max_sm_mhz"
                  : type == 2 ? "max_memory_mhz"
                              : "x",
                  clock);
  });
}

int nvmlDeviceGetCurrentClocksThrottleReasons(void* device, unsigned long long* reasons) {
  scribble(reasons);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "clock_event_reasons", reasons); });
}

static int pcie(const char* fn, void* device, const char* key, unsigned int* out) {
  scribble(out);
  return call(fn, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("pcie")) return kNotSupported;
    return scalar(g["pcie"], key, out);
  });
}
int nvmlDeviceGetCurrPcieLinkGeneration(void* d, unsigned int* v) {
  return pcie(__func__, d, "generation", v);
}
int nvmlDeviceGetMaxPcieLinkGeneration(void* d, unsigned int* v) {
  return pcie(__func__, d, "max_generation", v);
}
int nvmlDeviceGetCurrPcieLinkWidth(void* d, unsigned int* v) {
  return pcie(__func__, d, "width", v);
}
int nvmlDeviceGetMaxPcieLinkWidth(void* d, unsigned int* v) {
  return pcie(__func__, d, "max_width", v);
}

int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* temp) {
  scribble(temp);
  return call(__func__, device, [&] {
    if (sensor != 0) return kInvalidArgument;
    return scalar(gpu_of(device)->config, "temperature_celsius", temp);
  });
}
int nvmlDeviceGetPowerUsage(void* device, unsigned int* mw) {
  scribble(mw);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "power_milliwatts", mw); });
}
int nvmlDeviceGetEnforcedPowerLimit(void* device, unsigned int* mw) {
  scribble(mw);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "power_limit_milliwatts", mw); });
}

// Row remapping: "row_remap": {"corrected_rows", "uncorrected_rows", "pending", "failure"}.
int nvmlDeviceGetRemappedRows(void* device, unsigned int* corr, unsigned int* unc,
                              unsigned int* pending, unsigned int* failure) {
  scribble(corr);
  scribble(unc);
  scribble(pending);
  scribble(failure);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("row_remap")) return kNotSupported;
    const auto& r = g["row_remap"];
    for (auto [key, out] : {std::pair{"corrected_rows", corr}, std::pair{"uncorrected_rows", unc},
                            std::pair{"pending", pending}, std::pair{"failure", failure}})
      if (const int rc = scalar(r, key, out); rc != kSuccess) return rc;
    return kSuccess;
  });
}

// Page retirement: "retired_pages": {"multiple_single_bit": N, "double_bit": N, "pending": b}.
// cause 0: multiple single-bit errors, 1: a double-bit error. pageCount in/out as NVML's: room
// for fewer than the pages is NVML_ERROR_INSUFFICIENT_SIZE with the count needed.
int nvmlDeviceGetRetiredPages(void* device, int cause, unsigned int* count,
                              unsigned long long* addresses) {
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (count == nullptr || (cause != 0 && cause != 1)) return kInvalidArgument;
    if (!g.contains("retired_pages")) return kNotSupported;
    const auto n = static_cast<unsigned>(
        number(g["retired_pages"], cause == 0 ? "multiple_single_bit" : "double_bit").value_or(0));
    if (*count < n || (n > 0 && addresses == nullptr)) {
      *count = n;
      return kInsufficientSize;
    }
    for (unsigned i = 0; i < n; ++i) addresses[i] = 0x100000ull * (i + 1);
    *count = n;
    return kSuccess;
  });
}
int nvmlDeviceGetRetiredPagesPendingStatus(void* device, int* pending) {
  scribble(pending);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("retired_pages")) return kNotSupported;
    return scalar(g["retired_pages"], "pending", pending);
  });
}

// Power limits in mW: "power_management_limit_milliwatts", "power_default_limit_milliwatts",
// "power_limit_constraints_milliwatts": {"min", "max"}.
int nvmlDeviceGetPowerManagementLimit(void* device, unsigned int* mw) {
  scribble(mw);
  return call(__func__, device, [&] {
    return scalar(gpu_of(device)->config, "power_management_limit_milliwatts", mw);
  });
}
int nvmlDeviceGetPowerManagementDefaultLimit(void* device, unsigned int* mw) {
  scribble(mw);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "power_default_limit_milliwatts", mw); });
}
int nvmlDeviceGetPowerManagementLimitConstraints(void* device, unsigned int* lo, unsigned int* hi) {
  scribble(lo);
  scribble(hi);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("power_limit_constraints_milliwatts")) return kNotSupported;
    const auto& c = g["power_limit_constraints_milliwatts"];
    if (const int rc = scalar(c, "min", lo); rc != kSuccess) return rc;
    return scalar(c, "max", hi);
  });
}

// Application clocks: "clocks": {"app_sm_mhz", "app_memory_mhz", "default_app_sm_mhz",
// "default_app_memory_mhz"}.
int nvmlDeviceGetApplicationsClock(void* device, int type, unsigned int* clock) {
  scribble(clock);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("clocks")) return kNotSupported;
    return scalar(g["clocks"],
                  type == 1   ? "app_sm_mhz"
                  : type == 2 ? "app_memory_mhz"
                              : "x",
                  clock);
  });
}
int nvmlDeviceGetDefaultApplicationsClock(void* device, int type, unsigned int* clock) {
  scribble(clock);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("clocks")) return kNotSupported;
    return scalar(g["clocks"],
                  type == 1   ? "default_app_sm_mhz"
                  : type == 2 ? "default_app_memory_mhz"
                              : "x",
                  clock);
  });
}

// MIG: "mig": {"enabled": b, "pending": b, "max_devices": N, "devices": [{"index": i, "name",
// "uuid", "memory_total_bytes", "gpu_instance_id", "compute_instance_id"}]}; a device's index
// defaults to its place in the list, and an index without a device is NVML_ERROR_NOT_FOUND.
int nvmlDeviceGetMigMode(void* device, unsigned int* current, unsigned int* pending) {
  scribble(current);
  scribble(pending);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("mig") || current == nullptr || pending == nullptr) return kNotSupported;
    if (const int rc = scalar(g["mig"], "enabled", current); rc != kSuccess) return rc;
    *pending = static_cast<unsigned>(number(g["mig"], "pending").value_or(*current));
    return kSuccess;
  });
}
int nvmlDeviceGetMaxMigDeviceCount(void* device, unsigned int* count) {
  scribble(count);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("mig")) return kNotSupported;
    return scalar(g["mig"], "max_devices", count);
  });
}
int nvmlDeviceGetMigDeviceHandleByIndex(void* device, unsigned int index, void** mig) {
  return call(__func__, device, [&] {
    auto& list = gpu_of(device)->mig_devices;
    if (mig == nullptr) return kInvalidArgument;
    if (!gpu_of(device)->config.contains("mig")) return kNotSupported;
    for (std::size_t i = 0; i < list.size(); ++i)
      if (static_cast<unsigned>(
              number(list[i].config, "index").value_or(static_cast<long long>(i))) == index) {
        *mig = &list[i];
        return kSuccess;
      }
    return kNotFound;
  });
}
int nvmlDeviceGetGpuInstanceId(void* device, unsigned int* id) {
  scribble(id);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "gpu_instance_id", id); });
}
int nvmlDeviceGetComputeInstanceId(void* device, unsigned int* id) {
  scribble(id);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "compute_instance_id", id); });
}

// A link that the GPU does not have is NVML_ERROR_NOT_SUPPORTED, as NVML says of links past the
// device's own; links beyond NVML_NVLINK_MAX_LINKS are NVML_ERROR_INVALID_ARGUMENT.
int nvmlDeviceGetNvLinkState(void* device, unsigned int link, int* active) {
  scribble(active);
  return call(__func__, device, [&] {
    if (link >= 18) return kInvalidArgument;
    const auto& l = nvlink(device, link);
    if (l.is_null()) return kNotSupported;
    return scalar(l, "active", active);
  });
}
// A link's "version" (NVML's value), "remote_type" (0 GPU, 1 IBM NPU, 2 NVSwitch) and "errors":
// {"replay", "recovery", "crc_flit", "crc_data"} (counter 0 to 3).
int nvmlDeviceGetNvLinkVersion(void* device, unsigned int link, unsigned int* version) {
  scribble(version);
  return call(__func__, device, [&] {
    if (link >= 18) return kInvalidArgument;
    return scalar(nvlink(device, link), "version", version);
  });
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void* device, unsigned int link, unsigned int* type) {
  scribble(type);
  return call(__func__, device, [&] {
    if (link >= 18) return kInvalidArgument;
    return scalar(nvlink(device, link), "remote_type", type);
  });
}
int nvmlDeviceGetNvLinkErrorCounter(void* device, unsigned int link, int counter,
                                    unsigned long long* value) {
  scribble(value);
  return call(__func__, device, [&] {
    if (link >= 18 || counter < 0 || counter > 4) return kInvalidArgument;
    const auto& l = nvlink(device, link);
    if (!l.contains("errors")) return kNotSupported;
    static const char* const kNames[] = {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"};
    return scalar(l["errors"], kNames[counter], value);
  });
}

// Topology: "topology": {"level": N x N matrix of nvmlGpuTopologyLevel_t, "p2p_nvlink" and
// "p2p_read": N x N matrices of nvmlGpuP2PStatus_t}, by the GPUs' places in "gpus".
int pair_value(const char* key, void* d1, void* d2, int* out) {
  const auto& t = state().config.contains("topology") ? state().config["topology"] : json();
  if (!t.is_object() || !t.contains(key) || out == nullptr) return kNotSupported;
  auto place = [](void* d) -> long {
    for (std::size_t i = 0; i < state().gpus.size(); ++i)
      if (&state().gpus[i] == d) return static_cast<long>(i);
    return -1;
  };
  const long a = place(d1), b = place(d2);
  if (a < 0 || b < 0) return kInvalidArgument;
  const auto& m = t[key];
  if (!m.is_array() || static_cast<std::size_t>(a) >= m.size() || !m[a].is_array() ||
      static_cast<std::size_t>(b) >= m[a].size())
    return kNotSupported;
  *out = m[a][b].get<int>();
  return kSuccess;
}
int nvmlDeviceGetTopologyCommonAncestor(void* d1, void* d2, int* level) {
  scribble(level);
  return call(__func__, d1, [&] { return pair_value("level", d1, d2, level); });
}
// caps: 0 read, 1 write, 2 NVLink, 3 atomics, 4 PCI.
int nvmlDeviceGetP2PStatus(void* d1, void* d2, int caps, int* status) {
  scribble(status);
  return call(__func__, d1, [&] {
    if (caps == 2) return pair_value("p2p_nvlink", d1, d2, status);
    if (caps == 0) return pair_value("p2p_read", d1, d2, status);
    return kNotSupported;
  });
}

int nvmlDeviceGetNvLinkRemotePciInfo(void* device, unsigned int link, PciInfoLegacy* pci) {
  scribble(pci);
  return nvlink_remote(__func__, device, link, pci);
}

// nvmlUtilization_t: {gpu, memory} percentages.
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
int nvmlDeviceGetUtilizationRates(void* device, nvmlUtilization_t* u) {
  scribble(u);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (!g.contains("utilization") || u == nullptr) return kNotSupported;
    if (const int rc = scalar(g["utilization"], "gpu", &u->gpu); rc != kSuccess) return rc;
    return scalar(g["utilization"], "memory", &u->memory);
  });
}

// counter: NVML_PCIE_UTIL_TX_BYTES (0) or NVML_PCIE_UTIL_RX_BYTES (1); KB/s.
int nvmlDeviceGetPcieThroughput(void* device, int counter, unsigned int* value) {
  scribble(value);
  return call(__func__, device, [&] {
    const auto& g = gpu_of(device)->config;
    if (counter != 0 && counter != 1) return kInvalidArgument;
    if (!g.contains("pcie_throughput_kbs")) return kNotSupported;
    return scalar(g["pcie_throughput_kbs"], counter == 0 ? "tx" : "rx", value);
  });
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  scribble(mj);
  return call(__func__, device, [&] { return scalar(gpu_of(device)->config, "energy_mj", mj); });
}

// The config's "minor_number", else the GPU's place in the list (as on a host whose
// /dev/nvidiaN follow NVML's order).
int nvmlDeviceGetMinorNumber(void* device, unsigned int* minor) {
  scribble(minor);
  return call(__func__, device, [&] {
    const Gpu* g = gpu_of(device);
    if (g == &state().blank) return kNotSupported;
    if (number(g->config, "minor_number")) return scalar(g->config, "minor_number", minor);
    if (minor == nullptr) return kInvalidArgument;
    *minor = static_cast<unsigned>(g - state().gpus.data());
    return kSuccess;
  });
}

int nvmlDeviceGetPcieReplayCounter(void* device, unsigned int* value) {
  scribble(value);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "pcie_replay_count", value); });
}

// Event API (NVML API Reference, "Event Handling Methods"): one set handle at a time, Xid
// critical errors only. A GPU's "xid_events" are delivered one per wait, in order, after it was
// registered; then a wait returns NVML_ERROR_TIMEOUT at once (the fake never sleeps).
constexpr unsigned long long kXidCriticalError = 0x8ULL;
constexpr int kTimeout = 10;
int event_sets_open = 0;
int nvmlEventSetCreate(void** set) {
  return call(__func__, nullptr, [&] {
    if (set == nullptr) return kInvalidArgument;
    *set = &event_sets_open;
    ++event_sets_open;
    return kSuccess;
  });
}
int nvmlDeviceRegisterEvents(void* device, unsigned long long types, void* set) {
  return call(__func__, device, [&] {
    if (set != &event_sets_open) return kInvalidArgument;
    Gpu* g = gpu_of(device);
    if (!g->config.contains("xid_events") || (types & kXidCriticalError) == 0) return kNotSupported;
    g->xid_registered = true;
    return kSuccess;
  });
}
struct nvmlEventData_t {  // the _v2 layout; the plain wait fills the first three fields
  void* device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};
int event_wait(const char* fn, void* set, nvmlEventData_t* data, bool v2) {
  return call(fn, nullptr, [&] {
    if (set != &event_sets_open || data == nullptr) return kInvalidArgument;
    for (auto& g : state().gpus) {
      if (!g.xid_registered || !g.config["xid_events"].is_array()) continue;
      const auto& list = g.config["xid_events"];
      if (g.xids_delivered >= list.size()) continue;
      data->device = &g;
      data->eventType = kXidCriticalError;
      data->eventData = list[g.xids_delivered++].get<unsigned long long>();
      if (v2) data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
      return kSuccess;
    }
    return kTimeout;
  });
}
int nvmlEventSetWait(void* set, nvmlEventData_t* data, unsigned int /*timeout_ms*/) {
  return event_wait(__func__, set, data, false);
}
int nvmlEventSetFree(void* set) {
  return call(__func__, nullptr, [&] {
    if (set != &event_sets_open) return kInvalidArgument;
    --event_sets_open;
    return kSuccess;
  });
}

int nvmlDeviceGetComputeRunningProcesses(void* device, unsigned int* count, ProcessInfoV1* p) {
  return processes(__func__, device, count, p);
}

#ifndef FAKE_NVML_OLD
int nvmlDeviceGetComputeRunningProcesses_v2(void* device, unsigned int* count, ProcessInfoV2* p) {
  return processes(__func__, device, count, p);
}
int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, ProcessInfoV2* p) {
  return processes(__func__, device, count, p);
}

int nvmlEventSetWait_v2(void* set, nvmlEventData_t* data, unsigned int /*timeout_ms*/) {
  return event_wait(__func__, set, data, true);
}

int nvmlInit_v2() {
  return init("nvmlInit_v2");
}

int nvmlSystemGetCudaDriverVersion_v2(int* v) {
  scribble(v);
  return call(__func__, nullptr, [&] { return scalar(state().config, "cuda_driver_version", v); });
}

#ifndef FAKE_NVML_NOSYMS
int nvmlDeviceGetCount_v2(unsigned int* count) {
  return call(__func__, nullptr, [&] {
    if (count == nullptr) return kInvalidArgument;
    *count = device_count();
    return kSuccess;
  });
}
#endif

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  return handle_by_index(__func__, index, device);
}

// The GPU whose "uuid" is this one; NVML_ERROR_NOT_FOUND when none is. (Left out of the old
// variant, so that tests also cover finding a GPU by comparing the UUID of every index.)
int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  return call(__func__, nullptr, [&] {
    if (uuid == nullptr || device == nullptr) return kInvalidArgument;
    for (auto& g : state().gpus)
      if (text(g.config, "uuid") == std::string(uuid)) {
        *device = &g;
        return kSuccess;
      }
    return kNotFound;
  });
}

int nvmlDeviceGetPciInfo_v2(void* device, PciInfo* pci) {
  scribble(pci);
  return pci_info(__func__, device, pci);
}
int nvmlDeviceGetPciInfo_v3(void* device, PciInfo* pci) {
  scribble(pci);
  return pci_info(__func__, device, pci);
}

// The caller must set version to nvmlMemory_v2 = sizeof(nvmlMemory_v2_t) | 2 << 24.
int nvmlDeviceGetMemoryInfo_v2(void* device, nvmlMemory_v2_t* memory) {
  return call(__func__, device, [&] {
    if (memory == nullptr) return kInvalidArgument;
    if (memory->version != (sizeof(nvmlMemory_v2_t) | (2u << 24))) return kArgumentVersionMismatch;
    const auto& g = gpu_of(device)->config;
    const auto total = number(g, "memory_total_bytes");
    if (!total) return kNotSupported;
    memory->total = static_cast<unsigned long long>(*total);
    memory->used = static_cast<unsigned long long>(number(g, "memory_used_bytes").value_or(0));
    memory->reserved =
        static_cast<unsigned long long>(number(g, "memory_reserved_bytes").value_or(0));
    memory->free = memory->total - memory->used - memory->reserved;
    return kSuccess;
  });
}

int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  scribble(reasons);
  return call(__func__, device,
              [&] { return scalar(gpu_of(device)->config, "clock_event_reasons", reasons); });
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* device, unsigned int link, PciInfo* pci) {
  scribble(pci);
  return nvlink_remote(__func__, device, link, pci);
}

// nvmlFieldValue_t (NVML API Reference): fieldId, scopeId, timestamp (us since 1970),
// latencyUsec, valueType (nvmlValueType_t), the field's own nvmlReturn, and the nvmlValue_t union
// at offset 32. (Left out of the old variant: a driver without the call.)
struct nvmlFieldValue_t {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
    unsigned short usVal;
  } value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, value) == 32);

// Fields 138 and 139 (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX, KiB) from the GPU's
// "nvlink_throughput_kib": {"tx", "rx"}, each grown by "nvlink_throughput_kib_step": {"tx", "rx"}
// at every call after the first, whatever the scopeId; any other field, or a GPU without them, is
// NVML_ERROR_NOT_SUPPORTED in that field's nvmlReturn (the call itself succeeds).
int nvmlDeviceGetFieldValues(void* device, int count, nvmlFieldValue_t* values) {
  const int rc = call(__func__, device, [&] {
    if (count < 0 || (count > 0 && values == nullptr)) return kInvalidArgument;
    Gpu* g = gpu_of(device);
    const auto& c = g->config;
    const json none;
    const json& kib = c.contains("nvlink_throughput_kib") ? c["nvlink_throughput_kib"] : none;
    const json& step =
        c.contains("nvlink_throughput_kib_step") ? c["nvlink_throughput_kib_step"] : none;
    const long long calls = g->field_value_calls++;
    const long long now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    for (int i = 0; i < count; ++i) {
      auto& v = values[i];
      v.timestamp = now_us;
      v.latencyUsec = 0;
      const char* key = v.fieldId == 138 ? "tx" : v.fieldId == 139 ? "rx" : nullptr;
      const auto base = key != nullptr ? number(kib, key) : std::nullopt;
      if (!base) {
        v.nvmlReturn = kNotSupported;
        continue;
      }
      v.valueType = 3;  // NVML_VALUE_TYPE_UNSIGNED_LONG_LONG
      v.nvmlReturn = kSuccess;
      v.value.ullVal =
          static_cast<unsigned long long>(*base + calls * number(step, key).value_or(0));
    }
    return kSuccess;
  });
  if (rc != kSuccess && values != nullptr)
    for (int i = 0; i < count; ++i) {
      scribble(&values[i].nvmlReturn);
      scribble(&values[i].value);
    }
  return rc;
}

// GPU Performance Monitoring (NVML API Reference, "GPM Functions" and "GPM Structs"), with the
// structs as nvml.h of CUDA 12.0 has them (NVML_GPM_METRIC_MAX 98). A GPU's "gpm" object holds
// the percentages its metrics give, by name ("sm_util" 2, "sm_occupancy" 3, "any_tensor_util" 5,
// "dram_bw_util" 10); a GPU without it says it has no GPM (as before Hopper), and a metric it
// does not name gets NVML_ERROR_NOT_SUPPORTED in its own nvmlReturn. A sample remembers its GPU
// and whether it was taken; metrics need two taken samples of one GPU.
struct nvmlGpmSupport_t {
  unsigned int version;
  unsigned int isSupportedDevice;
};
struct FakeGpmSample {
  const Gpu* gpu = nullptr;
  bool taken = false;
};
struct nvmlGpmMetric_t {
  unsigned int metricId;
  int nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
struct nvmlGpmMetricsGet_t {
  unsigned int version;
  unsigned int numMetrics;
  FakeGpmSample* sample1;
  FakeGpmSample* sample2;
  nvmlGpmMetric_t metrics[98];
};

int nvmlGpmQueryDeviceSupport(void* device, nvmlGpmSupport_t* support) {
  return call(__func__, device, [&] {
    if (support == nullptr) return kInvalidArgument;
    if (support->version != 1) return kArgumentVersionMismatch;
    support->isSupportedDevice = gpu_of(device)->config.contains("gpm") ? 1 : 0;
    return kSuccess;
  });
}
int nvmlGpmSampleAlloc(FakeGpmSample** sample) {
  return call(__func__, nullptr, [&] {
    if (sample == nullptr) return kInvalidArgument;
    *sample = new FakeGpmSample;
    return kSuccess;
  });
}
int nvmlGpmSampleFree(FakeGpmSample* sample) {
  return call(__func__, nullptr, [&] {
    if (sample == nullptr) return kInvalidArgument;
    delete sample;
    return kSuccess;
  });
}
int nvmlGpmSampleGet(void* device, FakeGpmSample* sample) {
  return call(__func__, device, [&] {
    if (sample == nullptr) return kInvalidArgument;
    if (!gpu_of(device)->config.contains("gpm")) return kNotSupported;
    sample->gpu = gpu_of(device);
    sample->taken = true;
    return kSuccess;
  });
}
int nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  return call(__func__, nullptr, [&] {
    if (get == nullptr) return kInvalidArgument;
    if (get->version != 1) return kArgumentVersionMismatch;
    if (get->numMetrics > 98 || get->sample1 == nullptr || get->sample2 == nullptr ||
        !get->sample1->taken || !get->sample2->taken || get->sample1->gpu != get->sample2->gpu ||
        get->sample1 == get->sample2)
      return kInvalidArgument;
    const json& values = get->sample1->gpu->config.at("gpm");
    static const std::map<unsigned, const char*> kNames = {
        {2, "sm_util"}, {3, "sm_occupancy"}, {5, "any_tensor_util"}, {10, "dram_bw_util"}};
    for (unsigned i = 0; i < get->numMetrics; ++i) {
      nvmlGpmMetric_t& m = get->metrics[i];
      const auto name = kNames.find(m.metricId);
      std::optional<double> v;
      if (name != kNames.end() && values.contains(name->second) && values[name->second].is_number())
        v = values[name->second].get<double>();
      m.nvmlReturn = v ? kSuccess : kNotSupported;
      m.value = v ? *v : 0.0;
    }
    return kSuccess;
  });
}

// nvmlDeviceGetProcessUtilization (NVML API Reference, "Device Queries"): a GPU's
// "process_utilization" list ([{"pid": 4242, "sm": 60, "mem": 20}]) as one sample per process,
// stamped with the time of the call (microseconds); an empty list is NVML_ERROR_NOT_FOUND (no
// process used the GPU), no list NOT_SUPPORTED. With samples NULL, or too few of them, the count
// needed and NVML_ERROR_INSUFFICIENT_SIZE.
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
int nvmlDeviceGetProcessUtilization(void* device, nvmlProcessUtilizationSample_t* samples,
                                    unsigned int* count, unsigned long long /*lastSeen*/) {
  return call(__func__, device, [&] {
    const json& g = gpu_of(device)->config;
    if (count == nullptr) return kInvalidArgument;
    if (!g.contains("process_utilization") || !g["process_utilization"].is_array())
      return kNotSupported;
    const json& list = g["process_utilization"];
    if (list.empty()) return kNotFound;
    if (samples == nullptr || *count < list.size()) {
      *count = static_cast<unsigned>(list.size());
      return kInsufficientSize;
    }
    const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    for (std::size_t i = 0; i < list.size(); ++i) {
      samples[i] = {};
      samples[i].pid = static_cast<unsigned>(number(list[i], "pid").value_or(0));
      samples[i].timeStamp = static_cast<unsigned long long>(now);
      samples[i].smUtil = static_cast<unsigned>(number(list[i], "sm").value_or(0));
      samples[i].memUtil = static_cast<unsigned>(number(list[i], "mem").value_or(0));
    }
    *count = static_cast<unsigned>(list.size());
    return kSuccess;
  });
}
#endif  // FAKE_NVML_OLD

}  // extern "C"

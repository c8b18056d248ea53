#include "gpu/persistence_setting.hpp"

#include <array>
#include <cstdlib>
#include <memory>

#include <fmt/core.h>

#include "gpu/nvml_backend.hpp"
#include "gpu/nvml_library.hpp"
#include "gpu/nvml_types.hpp"

namespace dltune::gpu {

namespace {

constexpr std::string_view kPrefix = "nvml:";
constexpr std::string_view kPersistenceMode = "/persistence_mode";

// "GPU-8c7d1f0e-..." out of "nvml:GPU-8c7d1f0e-.../persistence_mode". Only whole-GPU UUIDs: a
// MIG instance ("MIG-...") has no persistence mode of its own.
Result<std::string> uuid_of(const std::string& target) {
  const std::string_view t = target;
  const bool shaped = t.starts_with(kPrefix) && t.ends_with(kPersistenceMode) &&
                      t.size() > kPrefix.size() + kPersistenceMode.size();
  if (!shaped)
    return fail("not an NVML setting (expected nvml:GPU-UUID/persistence_mode):", target);
  const auto uuid = t.substr(kPrefix.size(), t.size() - kPrefix.size() - kPersistenceMode.size());
  const bool printable = uuid.size() < nvml::kUuidBufferSize &&
                         uuid.find_first_of("/ \t\n") == std::string_view::npos &&
                         clean_string(std::string(uuid).c_str(), uuid.size()) == uuid;
  if (!uuid.starts_with("GPU-") || !printable)
    return fail("not a GPU UUID (GPU-...) in the NVML setting", target);
  return std::string(uuid);
}

// The library the rest of dltune loads (default_library_path: DLTUNE_NVML_LIBRARY, else the
// driver's). The setting's interface takes only the target (the journal holds nothing else).
Result<std::unique_ptr<NvmlLibrary>> open_nvml() {
  return NvmlLibrary::open(default_library_path());
}

// "nvmlDeviceSetPersistenceMode failed on GPU GPU-...:" with NVML's error as the input.
tl::unexpected<Error> nvml_failure(const NvmlLibrary& lib, Sym s, nvml::Return rc,
                                   const std::string& uuid) {
  return fail(fmt::format("{} failed on GPU {}:", lib.name(s), uuid), lib.describe(rc));
}

std::optional<std::string> uuid_at(const NvmlLibrary& lib, nvml::Device h) {
  const auto get = lib.fn<nvml::DeviceStringFn>(Sym::kUuid);
  if (get == nullptr) return std::nullopt;
  std::array<char, nvml::kUuidBufferSize + 1> buf{};
  if (get(h, buf.data(), nvml::kUuidBufferSize) != nvml::kSuccess) return std::nullopt;
  return clean_string(buf.data(), nvml::kUuidBufferSize);
}

// The handle of the GPU with this UUID; an empty optional when no GPU has it.
Result<std::optional<nvml::Device>> find_gpu(const NvmlLibrary& lib, const std::string& uuid) {
  if (const auto by_uuid = lib.fn<nvml::HandleByUuidFn>(Sym::kHandleByUuid)) {
    nvml::Device h = nullptr;
    const auto rc = by_uuid(uuid.c_str(), &h);
    if (rc == nvml::kErrorNotFound || rc == nvml::kErrorInvalidArgument) return std::nullopt;
    if (rc != nvml::kSuccess) return nvml_failure(lib, Sym::kHandleByUuid, rc, uuid);
    if (h == nullptr)
      return fail(fmt::format("{} gave a null handle for GPU", lib.name(Sym::kHandleByUuid)), uuid);
    return h;
  }
  // No lookup by UUID in this library: compare the UUID of every index.
  if (lib.fn<nvml::DeviceStringFn>(Sym::kUuid) == nullptr)
    return fail(
        "this NVML has neither nvmlDeviceGetHandleByUUID nor nvmlDeviceGetUUID: cannot find GPU",
        uuid);
  unsigned int count = 0;
  if (const auto rc = lib.fn<nvml::CountFn>(Sym::kDeviceCount)(&count); rc != nvml::kSuccess)
    return nvml_failure(lib, Sym::kDeviceCount, rc, uuid);
  const auto by_index = lib.fn<nvml::HandleByIndexFn>(Sym::kHandleByIndex);
  for (unsigned i = 0; i < std::min(count, kMaxDevices); ++i) {
    nvml::Device h = nullptr;
    if (by_index(i, &h) != nvml::kSuccess || h == nullptr) continue;
    if (uuid_at(lib, h) == uuid) return h;
  }
  return std::nullopt;
}

Result<std::string> persistence_mode(const NvmlLibrary& lib, nvml::Device h,
                                     const std::string& uuid) {
  const auto get = lib.fn<nvml::DeviceEnableFn>(Sym::kPersistenceMode);
  if (get == nullptr)
    return fail("this NVML has no nvmlDeviceGetPersistenceMode: cannot read GPU", uuid);
  int mode = -1;
  if (const auto rc = get(h, &mode); rc != nvml::kSuccess)
    return nvml_failure(lib, Sym::kPersistenceMode, rc, uuid);
  if (mode == nvml::kFeatureEnabled) return std::string("on");
  if (mode == nvml::kFeatureDisabled) return std::string("off");
  return fail(
      fmt::format("{} gave an unknown mode {} for GPU", lib.name(Sym::kPersistenceMode), mode),
      uuid);
}

}  // namespace

std::string default_library_path() {
  const char* lib = std::getenv("DLTUNE_NVML_LIBRARY");
  return lib != nullptr ? lib : "";
}

Result<std::optional<std::string>> read_nvml_setting(const std::string& target) {
  auto uuid = uuid_of(target);
  if (!uuid) return tl::unexpected(uuid.error());
  auto lib = open_nvml();  // initialised here; shut down when `lib` goes
  if (!lib) return tl::unexpected(lib.error());
  auto h = find_gpu(**lib, *uuid);
  if (!h) return tl::unexpected(h.error());
  if (!*h) return std::nullopt;
  auto mode = persistence_mode(**lib, **h, *uuid);
  if (!mode) return tl::unexpected(mode.error());
  return std::optional<std::string>(std::move(*mode));
}

Result<std::string> write_nvml_setting(const std::string& target, const std::string& value) {
  auto uuid = uuid_of(target);
  if (!uuid) return tl::unexpected(uuid.error());
  if (value != "on" && value != "off")
    return fail(fmt::format("persistence mode is on or off, not '{}', for", value), target);
  auto lib = open_nvml();
  if (!lib) return tl::unexpected(lib.error());
  auto h = find_gpu(**lib, *uuid);
  if (!h) return tl::unexpected(h.error());
  if (!*h) return fail("no GPU with this UUID:", *uuid);
  const auto set = (*lib)->fn<nvml::DeviceSetEnableFn>(Sym::kSetPersistenceMode);
  if (set == nullptr)
    return fail("this NVML has no nvmlDeviceSetPersistenceMode: cannot change GPU", *uuid);
  const int mode = value == "on" ? nvml::kFeatureEnabled : nvml::kFeatureDisabled;
  if (const auto rc = set(**h, mode); rc != nvml::kSuccess)
    return nvml_failure(**lib, Sym::kSetPersistenceMode, rc, *uuid);
  // NVML reference, nvmlDeviceSetPersistenceMode: disabling it on a GPU with its own NUMA memory
  // invalidates the handle, so the value is read back through a new one.
  auto again = find_gpu(**lib, *uuid);
  if (!again) return tl::unexpected(again.error());
  if (!*again) return fail("the GPU is gone after its persistence mode was set:", *uuid);
  return persistence_mode(**lib, **again, *uuid);
}

}  // namespace dltune::gpu

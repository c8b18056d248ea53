#pragma once
// GPU settings that tune changes through NVML: persistence mode. The target names the
// GPU by UUID, so that a rollback after a reboot or a re-enumeration reaches the same GPU:
// "nvml:GPU-8c7d1f0e-.../persistence_mode". Values are "on" and "off".
#include <optional>
#include <string>

#include "core/error.hpp"

namespace dltune::gpu {

// The NVML library dltune loads: DLTUNE_NVML_LIBRARY when it is set (tests point it at a fake),
// else empty for the driver's own names.
[[nodiscard]] std::string default_library_path();

// The setting now; an empty optional when no GPU has that UUID. Errors: NVML cannot be loaded,
// the query fails (naming the NVML function and its error).
[[nodiscard]] Result<std::optional<std::string>> read_nvml_setting(const std::string& target);
// Sets it and returns the value NVML reports afterwards.
[[nodiscard]] Result<std::string> write_nvml_setting(const std::string& target,
                                                     const std::string& value);

}  // namespace dltune::gpu

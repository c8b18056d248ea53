#pragma once
// The fake's memory across processes: when FAKE_NVML_STATE names a JSON file, what the set-calls
// changed is kept there per GPU UUID, {"GPU-...": {"persistence_mode": true}}, and the get-calls
// read it before the config. `dltune tune apply` and `dltune tune rollback` are separate
// processes, each with its own nvmlInit; this is how the second sees what the first did.
#include <optional>
#include <string>

namespace fake_nvml {

// The value stored for this GPU and field; empty when FAKE_NVML_STATE is unset, the file does
// not exist (yet) or holds nothing for it.
[[nodiscard]] std::optional<bool> stored(const std::string& uuid, const char* field);
// Stores it (temporary file and rename); false when the file cannot be written. Does nothing
// and returns true when FAKE_NVML_STATE is unset.
[[nodiscard]] bool store(const std::string& uuid, const char* field, bool value);

}  // namespace fake_nvml

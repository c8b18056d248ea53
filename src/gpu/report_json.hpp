#pragma once
// A backend's Report as JSON, both ways: `env --json` prints it under gpu.nvml, `capture` writes
// the same object to /run/dltune/capture/nvml.json, and `env --root` reads it back from there.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gpu/backend.hpp"

namespace dltune::gpu {

using Json = nlohmann::ordered_json;

[[nodiscard]] Json to_json(const Report& r);
[[nodiscard]] Json to_json(const Device& d);

struct ReportFromJson {
  Report report;
  // What could not be used: "not JSON", "devices[1].memory_total_bytes: expected an unsigned
  // integer". The items that were fine are kept in `report`.
  std::vector<std::string> issues;
};

// Never throws: garbage gives an empty Report (loaded = false) and an issue.
[[nodiscard]] ReportFromJson report_from_json(std::string_view text);

}  // namespace dltune::gpu

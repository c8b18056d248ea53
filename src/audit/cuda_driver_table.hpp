#pragma once
// The oldest NVIDIA driver that runs each CUDA version (knowledge/cuda-driver.toml, compiled into
// the binary): NVIDIA's CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and Corresponding
// Driver Versions", and the CUDA Compatibility guide's minor version compatibility minimums.
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::audit {

// A CUDA version, "12.1".
struct CudaVersion {
  int major = 0;
  int minor = 0;
  auto operator<=>(const CudaVersion&) const = default;
};

// "12.1", "12.1.105" (the patch is ignored); nullopt for anything else.
[[nodiscard]] std::optional<CudaVersion> parse_cuda_version(std::string_view text);

// Compares two NVIDIA driver versions ("535.161.07", "455.23", "580") number by number, a missing
// number counting as 0; nullopt when either is not a dotted list of decimal numbers.
[[nodiscard]] std::optional<std::strong_ordering> compare_driver_versions(std::string_view a,
                                                                          std::string_view b);

struct ToolkitDriver {
  CudaVersion cuda;
  std::string release;  // "CUDA 12.1 GA": the Table 3 row
  std::string driver;   // its Linux x86_64 "Toolkit Driver Version"
  std::string updates;  // what the release's updates ask for ("Update 1: 530.30.02")
  std::string source;
};

struct MinorCompatDriver {
  int major = 0;
  std::string driver;  // runs every CUDA <major>.x by minor version compatibility
  std::string source;
};

struct CudaDriverTable {
  std::vector<ToolkitDriver> toolkits;  // by CUDA version, oldest first
  std::vector<MinorCompatDriver> minor_compat;

  [[nodiscard]] const ToolkitDriver* toolkit(CudaVersion v) const;
  [[nodiscard]] const MinorCompatDriver* compat(int major) const;
};

// Parses and checks the table: every row complete (with a source), CUDA versions strictly
// increasing, drivers never decreasing. Errors name the row.
[[nodiscard]] Result<CudaDriverTable> parse_cuda_driver_table(std::string_view toml_text);

// knowledge/cuda-driver.toml as compiled into the binary.
[[nodiscard]] std::string_view builtin_cuda_driver_toml();
// It parsed once (an error here is a bug in the file, which the unit tests catch).
[[nodiscard]] const Result<CudaDriverTable>& builtin_cuda_driver_table();

}  // namespace dltune::audit

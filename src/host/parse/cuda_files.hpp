#pragma once
// The files that say which CUDA, cuDNN and NCCL are installed: the toolkit's version.json or
// version.txt, the version macros of cuda.h, cudnn_version.h (cudnn.h before cuDNN 8) and nccl.h,
// and the versions in shared library file names (libcudnn.so.8.9.7, libnccl.so.2.21.5).
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune::host::parse {

// Each parser: the version; empty optional when the file does not say (the macro or key is not
// there); an error naming the line and item when it says something that is not a version.

// version.json of CUDA >= 11.1: {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, ...}
[[nodiscard]] Result<std::optional<std::string>> cuda_version_json(std::string_view text);
// version.txt of CUDA <= 11.0 (and some later): "CUDA Version 11.8.89"
[[nodiscard]] Result<std::optional<std::string>> cuda_version_txt(std::string_view text);
// cuda.h: `#define CUDA_VERSION 13000` -> "13.0" (1000 * major + 10 * minor).
[[nodiscard]] Result<std::optional<std::string>> cuda_h_version(std::string_view text);
// cudnn_version.h (cuDNN >= 8) or cudnn.h (cuDNN <= 7): CUDNN_MAJOR, CUDNN_MINOR,
// CUDNN_PATCHLEVEL -> "9.19.0".
[[nodiscard]] Result<std::optional<std::string>> cudnn_h_version(std::string_view text);
// nccl.h: NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH and NCCL_SUFFIX -> "2.28.9" (suffix appended), or
// NCCL_VERSION_CODE when the parts are missing.
[[nodiscard]] Result<std::optional<std::string>> nccl_h_version(std::string_view text);

// The version in a shared library's file name: ("libcudnn.so.8.9.7", "libcudnn") -> "8.9.7",
// ("libcudnn.so", "libcudnn") -> "", ("libcudnn_ops.so.9", "libcudnn") -> nullopt (another
// library). Only dot-separated numbers are a version.
[[nodiscard]] std::optional<std::string> library_version(std::string_view file_name,
                                                         std::string_view stem);
// OpenBLAS names its library after its build: libopenblasp-r0.3.21.so (pthread),
// libopenblaso-r0.3.21.so (OpenMP), libopenblas.so.0, libopenblas64_.so.0,
// libopenblas64_p-r0-0cf96a72.3.23.dev.so (numpy wheels). nullopt when the name is not an
// OpenBLAS library; otherwise the release ("0.3.21") when the name has one, else "".
[[nodiscard]] std::optional<std::string> openblas_version(std::string_view file_name);

// How many dot-separated parts a version has ("9.1.0" -> 3, "" -> 0): more parts, more precise.
[[nodiscard]] int version_precision(std::string_view version);

}  // namespace dltune::host::parse

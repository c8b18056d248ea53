#pragma once
// The CUDA stack: toolkits (/usr/local/cuda*, CUDA_HOME, CUDA_PATH, nvcc on PATH), cuDNN and NCCL
// (headers, library file names, dist-info), the nvidia-* wheels inside each Python's package
// directories, and BLAS (MKL, OpenBLAS, the reference BLAS).
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "inventory/context.hpp"
#include "inventory/python.hpp"

namespace dltune::inventory {

struct FoundVia {
  std::string how;   // "directory" (/usr/local/cuda-X.Y), "link" (/usr/local/cuda), "CUDA_HOME",
                     // "CUDA_PATH", "PATH" (an nvcc on PATH)
  std::string path;  // the directory, link, variable's value or nvcc that led to it
};

struct Toolkit {
  std::string path;                           // the real directory, links followed
  std::optional<std::string> version;         // "12.4.1", or "13.0" from cuda.h
  std::optional<std::string> version_source;  // "version.json", "version.txt", "cuda.h"
  std::vector<FoundVia> found_via;
  std::optional<std::string> nvcc;     // <path>/bin/nvcc when present
  std::vector<Distribution> packages;  // <path>/dist-info (toolkits assembled from wheels)
};

// One place that says which cuDNN or NCCL is installed.
struct VersionFinding {
  std::optional<std::string> version;  // absent when the file name carries none (libnccl.so)
  std::string path;                    // the header, library or dist-info directory
  std::string source;                  // "header", "library", "dist-info"
};

struct PythonPackage {
  std::string interpreter;  // the interpreter's path (as in python.interpreters[].path)
  std::string name;         // "nvidia-cudnn-cu12"
  std::string version;      // "9.1.0.70"
  std::string path;         // the dist-info directory
};

struct BlasFinding {
  std::string name;  // "OpenBLAS", "MKL", "BLIS", "ATLAS", "reference BLAS"
  std::string path;
  std::optional<std::string> version;  // "0.3.21", "2023.1.0"
  std::string source;                  // "library", "dist-info"
  // The system's libblas.so.3 (Debian's alternatives) that leads to this library: the BLAS that
  // programs linked against -lblas use.
  std::optional<std::string> selected_as;
};

struct CudaFacts {
  std::vector<Toolkit> toolkits;
  std::vector<VersionFinding> cudnn;
  std::vector<VersionFinding> nccl;
  std::vector<PythonPackage> python_packages;
  std::vector<BlasFinding> blas;
};

[[nodiscard]] CudaFacts collect_cuda(Context& ctx, const PythonFacts& python);
[[nodiscard]] Json to_json(const CudaFacts& f);
[[nodiscard]] std::vector<text::Section> render_cuda(const CudaFacts& f);

}  // namespace dltune::inventory

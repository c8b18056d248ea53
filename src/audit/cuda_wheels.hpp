#pragma once
// gpu.driver_cuda's other half: the CUDA libraries that a CUDA build of torch loads from NVIDIA's
// wheels (nvidia-cudnn-cu12, nvidia-cublas-cu12, nvidia-nccl-cu12, ...), judged from the files
// alone: a wheel built for another CUDA major than torch's in the same interpreter, and a cuDNN
// or NCCL wheel other than the version torch's metadata pins (Requires-Dist).
#include <string>
#include <vector>

#include "audit/finding.hpp"
#include "inventory/python.hpp"
#include "settings/profile.hpp"

namespace dltune::audit {

// The findings for the torch that `py` imports, from the wheels in torch's own package directory
// (where torch loads them from); none when they agree with it, when it is not a CUDA build, or
// when it loads no NVIDIA wheels (torch before 1.13 and Debian's keep cuDNN inside torch/lib or
// use the system's). Each fix runs `py`'s pip. A problem's severity is the profile's for a
// library torch cannot load or must not load, a warning at most otherwise.
[[nodiscard]] std::vector<Finding> judge_cuda_wheels(const settings::ProfileEntry& e,
                                                     const inventory::Interpreter& py);

}  // namespace dltune::audit

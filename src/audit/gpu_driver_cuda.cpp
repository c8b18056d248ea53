// gpu.driver_cuda: the NVIDIA driver new enough for the CUDA that each torch install was built
// for, by the table in knowledge/cuda-driver.toml (CUDA Toolkit Release Notes, Table 3, and the
// CUDA Compatibility guide) and by NVML's own word (nvmlSystemGetCudaDriverVersion); and the
// nvidia-* wheels each torch loads built for its CUDA, at the versions it pins (cuda_wheels.cpp).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "audit/cuda_driver_table.hpp"
#include "audit/cuda_wheels.hpp"
#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;

namespace {

constexpr const char* kDriverExpected = "a driver that runs torch's CUDA";
constexpr const char* kTableFile = "knowledge/cuda-driver.toml";

struct Driver {
  std::string version;
  std::string path;   // evidence
  std::string which;  // "NVML", "the kernel module", "the user library"
};

// NVML's answer first (what the running driver says), then the kernel module (what runs), then
// the user library's file name (what is installed).
std::optional<Driver> driver_of(const inventory::GpuFacts& g) {
  if (g.nvml.loaded && g.nvml.driver_version)
    return Driver{*g.nvml.driver_version, nvml_path(g), "NVML"};
  if (g.driver.kernel_module_version)
    return Driver{*g.driver.kernel_module_version, "/proc/driver/nvidia/version",
                  "the kernel module"};
  if (g.driver.user_library_version)
    return Driver{*g.driver.user_library_version,
                  g.driver.user_library_source.value_or("libnvidia-ml.so.1"), "the user library"};
  return std::nullopt;
}

bool at_least(const std::string& have, const std::string& need) {
  const auto c = compare_driver_versions(have, need);
  return c && *c != std::strong_ordering::less;
}

// The newest CUDA in the table whose own driver `driver` meets: the torch build to pick instead
// of upgrading the driver.
const ToolkitDriver* newest_runnable(const CudaDriverTable& t, const std::string& driver) {
  const ToolkitDriver* best = nullptr;
  for (const auto& k : t.toolkits)
    if (at_least(driver, k.driver)) best = &k;
  return best;
}

std::string cuda_text(CudaVersion v) {
  return fmt::format("{}.{}", v.major, v.minor);
}

Finding judge_torch(const AuditInput& in, const settings::ProfileEntry& e,
                    const inventory::Interpreter& py, const inventory::TorchFacts& torch,
                    const std::optional<Driver>& driver, const Result<CudaDriverTable>& table) {
  const auto& g = in.facts.gpu;
  Finding f = frame(e, kDriverExpected);
  const std::string who = fmt::format("torch {} in {}", torch.version.value_or("?"), py.path);
  const bool has_version_py =
      std::find(torch.sources.begin(), torch.sources.end(), "version.py") != torch.sources.end();
  const std::string torch_path =
      has_version_py ? torch.location + "/version.py" : torch.metadata.value_or(torch.location);

  if (torch.hip) {
    f.severity = Severity::kInfo;
    f.summary = fmt::format("{} is a ROCm build (HIP {}): the NVIDIA driver does not matter to it",
                            who, *torch.hip);
    f.evidence.push_back({torch_path, fmt::format("hip = '{}'", *torch.hip)});
    return f;
  }
  if (torch.cuda_build == false) {
    f.severity = Severity::kInfo;
    f.summary = fmt::format("{}: torch is a CPU build, nothing to check", who);
    f.evidence.push_back({torch_path, "cuda = None"});
    return f;
  }
  const auto cuda = torch.cuda ? parse_cuda_version(*torch.cuda) : std::nullopt;
  if (!cuda) {
    f.severity = Severity::kInfo;
    f.summary = fmt::format("{}: the CUDA it was built for is unknown", who);
    f.evidence.push_back({torch_path, torch.cuda.value_or("no cuda version")});
    return f;
  }
  const std::string cv = cuda_text(*cuda);
  f.evidence.push_back({torch_path, fmt::format("cuda = '{}'", *torch.cuda)});
  if (!driver) {
    f.severity = Severity::kInfo;
    f.summary = fmt::format("{} (CUDA {}): the NVIDIA driver version is unknown", who, cv);
    f.evidence.push_back({"/proc/driver/nvidia/version", "absent"});
    return f;
  }
  f.actual = fmt::format("{} ({})", driver->version, driver->which);
  f.evidence.push_back({driver->path, driver->version});

  // The table's verdict.
  std::optional<Severity> by_table;
  const ToolkitDriver* row = nullptr;
  const MinorCompatDriver* compat = nullptr;
  if (table) {
    row = table->toolkit(*cuda);
    compat = table->compat(cuda->major);
    std::vector<std::string> said;
    if (row) said.push_back(fmt::format("CUDA {}: >= {} ({})", cv, row->driver, row->release));
    if (compat)
      said.push_back(
          fmt::format("CUDA {}.x minor version compatibility: >= {}", cuda->major, compat->driver));
    f.evidence.push_back({kTableFile, said.empty() ? fmt::format("CUDA {} not listed", cv)
                                                   : fmt::format("{}", fmt::join(said, "; "))});
    if (row && at_least(driver->version, row->driver))
      by_table = Severity::kOk;
    else if (compat && at_least(driver->version, compat->driver))
      by_table = row ? std::optional(std::min(Severity::kWarn, not_met(e))) : std::nullopt;
    else if (compat)
      by_table = not_met(e);
    if (row)
      f.expected = fmt::format(">= {} ({})", row->driver, row->release);
    else if (compat)
      f.expected =
          fmt::format(">= {} (CUDA {}.x minor version compatibility)", compat->driver, cuda->major);
  } else {
    f.notes.push_back(fmt::format("The built-in table is broken: {}", table.error().message()));
  }

  // The driver's own word: the newest CUDA it runs in full.
  std::optional<Severity> by_nvml;
  const auto nvml_parsed = g.nvml.loaded && g.nvml.cuda_driver_version
                               ? parse_cuda_version(*g.nvml.cuda_driver_version)
                               : std::nullopt;
  // A plain value and a flag, not an optional: g++ 12 at -O2 warns (-Wmaybe-uninitialized) on
  // the optional's payload in the branches below.
  const bool have_nvml_cuda = nvml_parsed.has_value();
  const CudaVersion nvml_cuda = nvml_parsed.value_or(CudaVersion{});
  if (have_nvml_cuda) {
    f.evidence.push_back(
        {nvml_path(g), fmt::format("the driver supports CUDA {}", cuda_text(nvml_cuda))});
    if (nvml_cuda >= *cuda)
      by_nvml = Severity::kOk;
    else if (nvml_cuda.major == cuda->major)
      by_nvml = std::min(Severity::kWarn, not_met(e));
    else
      by_nvml = not_met(e);
  }

  const std::string need = row ? fmt::format("{} ({})", row->driver, row->release) : "";
  if (!by_table && !by_nvml) {
    f.severity = Severity::kInfo;
    f.summary = compat
                    ? fmt::format(
                          "{} (CUDA {}): CUDA {} is not in dltune's table; driver {} meets the "
                          "{}.x minimum {}",
                          who, cv, cv, driver->version, cuda->major, compat->driver)
                    : fmt::format("{} (CUDA {}): dltune's table does not know CUDA {}.x; driver {}",
                                  who, cv, cuda->major, driver->version);
    return f;
  }
  f.severity = std::max(by_table.value_or(Severity::kOk), by_nvml.value_or(Severity::kOk));
  if (f.severity == Severity::kOk) {
    f.summary = row ? fmt::format("{} (CUDA {}): driver {} ({}) >= {}", who, cv, driver->version,
                                  driver->which, need)
                    : fmt::format("{} (CUDA {}): driver {} supports CUDA {}", who, cv,
                                  driver->version, cuda_text(nvml_cuda));
    if (row) f.notes.push_back(fmt::format("Source: {}", row->source));
    return f;
  }
  const bool below_compat = (compat && !at_least(driver->version, compat->driver)) ||
                            (have_nvml_cuda && nvml_cuda.major < cuda->major);
  if (below_compat) {
    f.summary =
        fmt::format("{} (CUDA {}): driver {} is too old for CUDA {}.x{}: torch cannot use the GPU",
                    who, cv, driver->version, cuda->major,
                    compat ? fmt::format(" (it needs >= {})", compat->driver) : "");
    f.notes.push_back(
        "torch.cuda.is_available() is False, with the warning \"The NVIDIA driver "
        "on your system is too old\".");
  } else {
    f.summary = fmt::format(
        "{} (CUDA {}): driver {} runs CUDA {} only by minor version compatibility{}", who, cv,
        driver->version, cv, row ? fmt::format(" (its own driver is {})", need) : "");
    f.notes.push_back(fmt::format(
        "Minor version compatibility runs CUDA {} on an older {}.x driver with a limited feature "
        "set: PTX newer than the driver cannot be JIT-compiled (cudaErrorUnsupportedPtxVersion), "
        "and APIs that need the newer driver fail (cudaErrorCallRequiresNewerDriver). torch's "
        "prebuilt kernels run; code compiled at run time (Triton, torch.compile, a GPU newer "
        "than the build) may not.",
        cv, cuda->major));
  }
  // Without a row, the major's minimum is a target only when the driver is below it.
  const std::string target = row ? row->driver : below_compat && compat ? compat->driver : "";
  f.fix = Fix{target.empty()
                  ? fmt::format("install an NVIDIA driver that supports CUDA {}, then reboot", cv)
                  : fmt::format("install an NVIDIA driver >= {} (the data center driver from "
                                "nvidia.com/drivers, or your distribution's package), then reboot",
                                target),
              false};
  if (table)
    if (const auto* alt = newest_runnable(*table, driver->version); alt && alt->cuda < *cuda)
      f.notes.push_back(fmt::format(
          "Or keep the driver and install a torch build for CUDA {} or older, which driver {} "
          "runs in full (https://download.pytorch.org/whl/cu{}{}).",
          cuda_text(alt->cuda), driver->version, alt->cuda.major, alt->cuda.minor));
  if (row) f.notes.push_back(fmt::format("Source: {}", row->source));
  host_only(f, in, "the NVIDIA driver");
  return f;
}

// Of the interpreters that import `first`'s torch, the one whose installation holds it: its pip
// changes the wheels beside torch, where a venv that sees the system's packages refuses to.
const inventory::Interpreter& owner_of(const std::vector<inventory::Interpreter>& all,
                                       const inventory::Interpreter& first) {
  for (const auto& py : all)
    if (py.torch && py.torch->location == first.torch->location &&
        py.torch->location.starts_with(py.prefix + "/"))
      return py;
  return first;
}

}  // namespace

std::vector<Finding> gpu_driver_cuda(const AuditInput& in, const settings::ProfileEntry& e) {
  const auto& g = in.facts.gpu;
  if (expected_bool(e) == false) return not_asked(e);
  if (!has_nvidia_gpu(g)) return no_gpu(e, kDriverExpected);
  const auto driver = driver_of(g);
  const auto& table = builtin_cuda_driver_table();
  std::vector<Finding> out;
  std::set<std::string> seen;  // torch directories: two interpreters may share one
  for (const auto& py : in.facts.python.interpreters) {
    if (!py.torch || !seen.insert(py.torch->location).second) continue;
    out.push_back(judge_torch(in, e, py, *py.torch, driver, table));
    for (auto& f : judge_cuda_wheels(e, owner_of(in.facts.python.interpreters, py)))
      out.push_back(std::move(f));
  }
  if (out.empty()) {
    Finding f = frame(e, kDriverExpected);
    f.applicable = false;
    f.summary = "no Python interpreter has torch: nothing to check";
    if (driver) {
      f.actual = fmt::format("{} ({})", driver->version, driver->which);
      f.evidence.push_back({driver->path, driver->version});
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::audit

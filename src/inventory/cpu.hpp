#pragma once
// CPU facts: model, sockets, cores, threads, the flags that matter for training kernels, the
// frequency governor, and NUMA nodes with their CPUs, memory and distances (from hwloc, which
// reads the same sysfs tree; for a host tree through HWLOC_FSROOT).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "inventory/context.hpp"

namespace dltune::inventory {

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
  std::optional<std::uint64_t> memory_bytes;
  std::vector<int> distances;  // to every node, in node order (the SLIT row)
};

struct CpuFacts {
  std::optional<std::string> model;
  std::optional<std::string> vendor;
  std::optional<int> sockets;
  std::optional<int> cores;    // physical cores
  std::optional<int> threads;  // logical CPUs (hardware threads)
  std::vector<int> online;
  std::optional<std::vector<int>> allowed;  // the cpuset this process may use, when narrower
  std::vector<std::string> flags;           // the ones that matter, those present
  std::map<std::string, std::vector<int>> governors;  // governor -> CPUs
  std::vector<std::string> available_governors;       // the ones cpufreq offers, in its order
  std::optional<std::string> scaling_driver;
  // The energy-performance preference of intel_pstate and amd-pstate (active mode, with HWP or
  // CPPC): preference -> CPUs, and the ones offered, in the driver's order. Empty without it.
  std::map<std::string, std::vector<int>> epp;
  std::vector<std::string> available_epp;
  // Intel's energy-performance bias (cpuN/power/energy_perf_bias, 0 performance to 15 power
  // saving: Documentation/admin-guide/pm/intel_epb.rst) -> CPUs. Empty without it.
  std::map<int, std::vector<int>> epb;
  std::vector<NumaNode> numa_nodes;
  std::optional<std::string> topology_error;  // why hwloc could not load, when it could not
};

// The CPU flags env reports (when present): vector widths and matrix units that PyTorch's CPU
// kernels (oneDNN, FBGEMM) pick at run time.
[[nodiscard]] const std::vector<std::string>& interesting_cpu_flags();

[[nodiscard]] CpuFacts collect_cpu(Context& ctx);
[[nodiscard]] Json to_json(const CpuFacts& f);
[[nodiscard]] std::vector<text::Section> render_cpu(const CpuFacts& f);

}  // namespace dltune::inventory

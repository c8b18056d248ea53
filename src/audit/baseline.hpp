#pragma once
// A hardware baseline: what a host should have (its GPUs with their PCIe links and memory, its
// RDMA ports and fast NICs with their rates, its CPUs and memory), written once from the host by
// `dltune baseline`, reviewed by hand, and checked against by `check --baseline FILE` (and
// `check --npd`, `slurm health`, a profile's `baseline = "..."`): every drift is a finding, so
// that a GPU that left the bus, a link that trained at x8 or an InfiniBand port at a quarter of
// its rate drains the node before a job lands on it. NHC's nhc-genconf does this for CPUs,
// memory and InfiniBand; this covers GPUs too.
//
// The file is TOML (docs/baseline.md):
//   schema = "dltune.baseline/1"
//   host = "gpu-node-07"                       # for people: where it was written
//   [cpu]    logical = 224, sockets = 2
//   [memory] total_gib = 2015.6
//   [gpus]   count = 8
//   [[gpus.device]] pci_bus_id = "0000:18:00.0", pci_id = "10de:2330", model = "...",
//                   memory_gib = 79.6, pcie_width = 16, pcie_generation = 5
//   [rdma]   count = 8
//   [[rdma.port]]   device = "mlx5_0", port = 1, rate_gbps = 400, link_layer = "InfiniBand"
//   [nics]   [[nics.interface]] name = "eth0", speed_gbps = 100
// A key left out is not checked; a table left out is not checked at all.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/finding.hpp"
#include "core/error.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::audit {

inline constexpr std::string_view kBaselineSchema = "dltune.baseline/1";

struct BaselineGpu {
  std::string pci_bus_id;              // sysfs's form, "0000:18:00.0"
  std::optional<std::string> pci_id;   // "10de:2330": vendor and device
  std::optional<std::string> model;    // for people; not compared
  std::optional<double> memory_gib;    // NVML's (amdgpu's) total
  std::optional<int> pcie_width;       // lanes now (current_link_width)
  std::optional<int> pcie_generation;  // the device's maximum (max_link_speed)
};

struct BaselineRdmaPort {
  std::string device;  // "mlx5_0"
  int port = 1;
  std::optional<double> rate_gbps;  // "400 Gb/sec (4X NDR)" -> 400
  std::optional<std::string> link_layer;
};

struct BaselineNic {
  std::string name;  // "eth0"
  std::optional<double> speed_gbps;
};

struct Baseline {
  std::string origin;  // the file it was read from ("" when made from facts)
  std::optional<std::string> host;
  std::optional<int> cpus, sockets;
  std::optional<double> memory_gib;
  std::optional<int> gpu_count;
  std::optional<std::vector<BaselineGpu>> gpus;  // absent: not checked
  std::optional<int> rdma_count;                 // RDMA devices
  std::optional<std::vector<BaselineRdmaPort>> rdma;
  std::optional<std::vector<BaselineNic>> nics;
};

// What this host has now: every compute GPU on PCI (its link at its maximum width), every
// ACTIVE RDMA port, every physical interface of at least 25 Gb/s that is up, the online CPUs,
// sockets and memory.
[[nodiscard]] Baseline baseline_of(const inventory::HostFacts& facts);

// What the person writing a baseline should know: a GPU link already narrower than it can be
// (the baseline expects its maximum), an RDMA port that is not ACTIVE (left out).
[[nodiscard]] std::vector<std::string> baseline_notes(const inventory::HostFacts& facts);

// The file `dltune baseline` writes: commented, one value a line, for review by hand.
// `written` says when ("2026-12-06").
[[nodiscard]] std::string to_toml(const Baseline& b, std::string_view written);
[[nodiscard]] inventory::Json to_json(const Baseline& b);

// `dltune baseline`: this host's baseline (from `facts`) written to `output` ("-": standard
// output) as the commented TOML dated today (UTC), or as JSON; an existing file is replaced only
// when `force`. The baseline written, or an error naming the output.
[[nodiscard]] Result<Baseline> write_baseline(const inventory::HostFacts& facts,
                                              const std::string& output, bool force, bool json);
// What was written, for the person who will review it: "wrote F: 8 GPUs, ...; review it, then
// check with `dltune check --baseline F`".
[[nodiscard]] std::string written_text(const Baseline& b, const std::string& output);

// Refuses what it does not know (a key, a type, a schema), naming the file, line and key.
[[nodiscard]] Result<Baseline> parse_baseline(std::string_view toml_text, std::string_view origin);
// A file on this machine (a baseline belongs to the admin, as a profile file does).
[[nodiscard]] Result<Baseline> load_baseline(const std::string& path);

// The ids of its findings, all at critical stakes: a drift is what a node is drained for.
inline constexpr std::string_view kBaselineIds[] = {"baseline.gpu", "baseline.rdma", "baseline.nic",
                                                    "baseline.cpu", "baseline.memory"};

// Each drift from `b` as a finding (critical: something is missing, slower or smaller; warn:
// something the baseline does not have appeared), and one ok finding for each part that
// matches.
[[nodiscard]] std::vector<Finding> judge_baseline(const Baseline& b,
                                                  const inventory::HostFacts& facts);

}  // namespace dltune::audit

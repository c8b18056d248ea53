#pragma once
// Everything `dltune env` knows about a host, collected through one Root.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "inventory/context.hpp"
#include "inventory/cpu.hpp"
#include "inventory/cuda.hpp"
#include "inventory/gpu.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "inventory/memory.hpp"
#include "inventory/network.hpp"
#include "inventory/os.hpp"
#include "inventory/python.hpp"
#include "inventory/storage.hpp"

namespace dltune::inventory {

struct HostFacts {
  std::string root;               // "/" or the --root directory
  std::int64_t collected_at = 0;  // unix seconds
  OsFacts os;
  CpuFacts cpu;
  MemoryFacts memory;
  StorageFacts storage;
  NetworkFacts network;
  GpuFacts gpu;
  PythonFacts python;
  CudaFacts cuda;
  std::vector<Problem> problems;  // facts reported unknown, with path and reason
};

// The environment variables env consults: this process's own on the live host, the captured
// ones (capture_files::kEnviron) for a capture.
[[nodiscard]] std::map<std::string, std::string> environment_for(const host::Root& root);

[[nodiscard]] HostFacts collect(const host::Root& root, const CollectOptions& options);
[[nodiscard]] Json to_json(const HostFacts& f);
[[nodiscard]] std::string render_text(const HostFacts& f);

}  // namespace dltune::inventory

#pragma once
// HostFacts declared only, and how it is collected: a header that holds or passes a
// `const HostFacts&` or a CollectOptions includes this, and the file that reads the facts includes
// inventory/host_facts.hpp (all of inventory's headers).
#include <string>

namespace dltune::inventory {

struct HostFacts;

struct CollectOptions {
  std::string nvml_library;  // DLTUNE_NVML_LIBRARY or empty
  // What `run` needs before it starts a job, quickly: the OS (cgroups), CPUs and memory, and the
  // GPUs when `gpus`; storage, network, Python and CUDA are left empty.
  bool launch_only = false;
  bool gpus = true;
  // With launch_only: the network too (interfaces, RDMA), to judge a job's NCCL variables.
  bool network = false;
};

}  // namespace dltune::inventory

#pragma once
// `dltune run --nproc N -- COMMAND`: the ranks dltune starts itself, as torchrun does, each with
// torchrun's environment protocol (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), its own CPUs nearest its GPU and thread counts sized to them. Pure: the job's
// CPUs, NUMA layout and GPUs in, each rank's share out.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace dltune::launch {

struct RankPlan {
  int rank = 0;
  std::vector<int> cpus;        // its CPUs: affinity and its group's cpuset.cpus
  std::vector<int> numa_nodes;  // their nodes: its group's cpuset.mems, on a host with several
  std::optional<int> gpu;       // the GPU it drives (cuda:LOCAL_RANK of CUDA_VISIBLE_DEVICES)
  std::map<std::string, std::string> env;  // its own variables, over the job's
};

// Whether `argv` starts a launcher that makes its own ranks (torchrun, python -m
// torch.distributed.run or .launch, deepspeed, accelerate launch, mpirun, mpiexec, srun,
// horovodrun): dltune then starts it once, and --nproc only says how many ranks share the CPUs.
[[nodiscard]] bool is_launcher(const std::vector<std::string>& argv);

struct RankRequest {
  int ranks = 1;
  std::vector<int> cpus;                      // the job's, sorted
  std::map<int, int> node_of_cpu;             // empty when the host reports no NUMA node
  std::vector<int> gpus;                      // --gpus (or the Slurm step's), in order
  std::vector<std::optional<int>> gpu_nodes;  // each one's NUMA node
  std::optional<int> workers;                 // DataLoader workers per rank
  // Set OMP_NUM_THREADS and MKL_NUM_THREADS per rank (false: the user set them).
  bool set_threads = true;
};
struct RankLayout {
  std::vector<RankPlan> ranks;
  std::vector<std::string> notes;  // how they were placed, and what they share
};
// Rank r drives GPU gpus[r % G] and runs on a contiguous share of the job's CPUs on that GPU's
// NUMA node (all the job's CPUs where the node is unknown or holds none of them); without GPUs,
// on a contiguous share of the job's CPUs in node order. Shares differ by at most one CPU; with
// more ranks than CPUs, ranks share one CPU each (said in a note). Error: no CPUs, ranks < 1.
[[nodiscard]] Result<RankLayout> plan_ranks(const RankRequest& request);

}  // namespace dltune::launch

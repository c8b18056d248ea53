#include "launch/rank_plan.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text.hpp"

namespace dltune::launch {

namespace {

// `count` contiguous shares of `pool`, sizes differing by at most one; with fewer CPUs than
// shares, share i is the one CPU pool[i % size].
std::vector<std::vector<int>> shares(const std::vector<int>& pool, std::size_t count) {
  std::vector<std::vector<int>> out(count);
  if (pool.empty() || count == 0) return out;
  if (pool.size() < count) {
    for (std::size_t i = 0; i < count; ++i) out[i] = {pool[i % pool.size()]};
    return out;
  }
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t size = pool.size() / count + (i < pool.size() % count ? 1 : 0);
    out[i].assign(pool.begin() + static_cast<std::ptrdiff_t>(at),
                  pool.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += size;
  }
  return out;
}

}  // namespace

bool is_launcher(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  static const std::set<std::string> kLaunchers = {"torchrun",
                                                   "deepspeed",
                                                   "mpirun",
                                                   "mpiexec",
                                                   "srun",
                                                   "horovodrun",
                                                   "accelerate",
                                                   "torch.distributed.run",
                                                   "torch.distributed.launch"};
  if (kLaunchers.count(std::string(text::base_name(argv[0])))) return true;
  // python -m torch.distributed.run ..., python3.11 -m accelerate.commands.launch ...
  // The interpreter's own options come before the script or module (python(1)); -W and -X take
  // a value.
  if (text::base_name(argv[0]).starts_with("python"))
    for (std::size_t i = 1; i < argv.size() && argv[i].starts_with('-'); ++i) {
      if (argv[i] == "-W" || argv[i] == "-X") {
        ++i;
        continue;
      }
      if (argv[i] != "-m" || i + 1 == argv.size()) continue;
      const auto& module = argv[i + 1];
      return module == "torch.distributed.run" || module == "torch.distributed.launch" ||
             module.starts_with("accelerate.commands.launch") ||
             module.starts_with("deepspeed.launcher");
    }
  return false;
}

Result<RankLayout> plan_ranks(const RankRequest& request) {
  if (request.ranks < 1)
    return fail("--nproc: expected at least one rank, got", std::to_string(request.ranks));
  if (request.cpus.empty()) return fail("no CPUs for the ranks");
  const auto n = static_cast<std::size_t>(request.ranks);
  RankLayout out;
  out.ranks.resize(n);
  const auto node_of = [&](int cpu) -> std::optional<int> {
    const auto it = request.node_of_cpu.find(cpu);
    if (it == request.node_of_cpu.end()) return std::nullopt;
    return it->second;
  };
  // The job's CPUs in node order, then by number.
  std::vector<int> ordered = request.cpus;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](int a, int b) { return node_of(a).value_or(-1) < node_of(b).value_or(-1); });
  if (request.gpus.empty()) {
    const auto parts = shares(ordered, n);
    for (std::size_t r = 0; r < n; ++r) out.ranks[r].cpus = parts[r];
  } else {
    // Ranks by the node of their GPU; the CPUs of that node go to them.
    std::map<int, std::vector<std::size_t>> by_node;  // -1: node unknown or without job CPUs
    for (std::size_t r = 0; r < n; ++r) {
      const auto g = r % request.gpus.size();
      out.ranks[r].gpu = request.gpus[g];
      auto node = g < request.gpu_nodes.size() ? request.gpu_nodes[g] : std::nullopt;
      const bool has_cpus = node && std::any_of(ordered.begin(), ordered.end(),
                                                [&](int c) { return node_of(c) == node; });
      by_node[has_cpus ? *node : -1].push_back(r);
    }
    for (const auto& [node, ranks] : by_node) {
      std::vector<int> pool;
      for (int c : ordered)
        if (node < 0 || node_of(c) == node) pool.push_back(c);
      const auto parts = shares(pool, ranks.size());
      for (std::size_t i = 0; i < ranks.size(); ++i) out.ranks[ranks[i]].cpus = parts[i];
      if (node < 0 && by_node.size() > 1)
        out.notes.push_back(fmt::format(
            "ranks {}: their GPUs' NUMA node is unknown or holds none of the job's CPUs: placed "
            "on all of them",
            fmt::join(ranks, ",")));
    }
    if (n > request.gpus.size())
      out.notes.push_back(
          fmt::format("{} ranks on {} GPU(s): ranks share GPUs", n, request.gpus.size()));
  }
  if (n > request.cpus.size())
    out.notes.push_back(
        fmt::format("{} ranks on {} CPU(s): ranks share CPUs", n, request.cpus.size()));
  std::set<int> host_nodes;
  for (const auto& [cpu, node] : request.node_of_cpu) host_nodes.insert(node);
  for (std::size_t r = 0; r < n; ++r) {
    auto& rank = out.ranks[r];
    rank.rank = static_cast<int>(r);
    std::set<int> nodes;
    for (int c : rank.cpus)
      if (auto node = node_of(c)) nodes.insert(*node);
    if (host_nodes.size() > 1) rank.numa_nodes.assign(nodes.begin(), nodes.end());
    // torchrun's environment for a single node (torch/distributed/run.py, elastic agent's
    // _set_worker_envs): the same names, so that init_process_group("env://") and scripts that
    // read LOCAL_RANK work unchanged.
    const auto s = [](auto v) { return std::to_string(v); };
    rank.env["RANK"] = s(r);
    rank.env["LOCAL_RANK"] = s(r);
    rank.env["GROUP_RANK"] = "0";
    rank.env["ROLE_RANK"] = s(r);
    rank.env["ROLE_NAME"] = "default";
    rank.env["WORLD_SIZE"] = s(n);
    rank.env["LOCAL_WORLD_SIZE"] = s(n);
    rank.env["GROUP_WORLD_SIZE"] = "1";
    rank.env["ROLE_WORLD_SIZE"] = s(n);
    if (request.set_threads) {
      const int threads =
          std::max(1, static_cast<int>(rank.cpus.size()) - request.workers.value_or(0));
      rank.env["OMP_NUM_THREADS"] = s(threads);
      rank.env["MKL_NUM_THREADS"] = s(threads);
    }
  }
  return out;
}

}  // namespace dltune::launch

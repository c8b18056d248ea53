// `run --nproc N`: what each rank gets on a host (its CPUs near its GPU, its NUMA node, its
// thread counts, torchrun's environment), when --nproc only sizes threads (a launcher), and the
// refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inventory/host_facts.hpp"
#include "launch/job_plan.hpp"
#include "launch/rank_plan.hpp"
#include "support/build_paths.hpp"

namespace rank_plan_test {

using namespace dltune;
using launch::RunOptions;
using ::testing::HasSubstr;

namespace {

host::Root fixture(const std::string& name) {
  return *host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + name);
}

Result<launch::JobPlan> plan(const std::string& tree, RunOptions o,
                             std::map<std::string, std::string> env = {}) {
  const auto root = fixture(tree);
  const auto facts = inventory::collect(root, {});
  if (o.command.empty()) o.command = {"python3", "train.py"};
  return launch::plan_job(root, facts, o, std::move(env), nullptr, "42");
}

std::vector<int> range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i <= to; ++i) v.push_back(i);
  return v;
}

std::vector<int> join(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// The 8-GPU, 2-node tree: GPUs 0-3 on node 0 (CPUs 0-7,16-23), 4-7 on node 1 (8-15,24-31).
TEST(RankPlan, EachRankGetsCpusOfItsGpusNodeAndTheEnvironmentTorchrunSets) {
  RunOptions o;
  o.nproc = 8;
  o.gpus = "0-7";
  o.numa = "auto";
  o.workers = 2;
  const auto p = plan("gpu8-numa2-cgv2", o);
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->ranks.size(), 8u);
  const std::vector<std::vector<int>> want = {range(0, 3),   range(4, 7),  range(16, 19),
                                              range(20, 23), range(8, 11), range(12, 15),
                                              range(24, 27), range(28, 31)};
  for (int r = 0; r < 8; ++r) {
    const auto& rank = p->ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(rank.rank, r);
    EXPECT_EQ(rank.cpus, want[static_cast<std::size_t>(r)]) << "rank " << r;
    EXPECT_EQ(rank.gpu, r);
    EXPECT_EQ(rank.numa_nodes, std::vector<int>{r < 4 ? 0 : 1}) << "rank " << r;
    EXPECT_EQ(rank.env.at("RANK"), std::to_string(r));
    EXPECT_EQ(rank.env.at("LOCAL_RANK"), std::to_string(r));
    EXPECT_EQ(rank.env.at("WORLD_SIZE"), "8");
    EXPECT_EQ(rank.env.at("LOCAL_WORLD_SIZE"), "8");
    EXPECT_EQ(rank.env.at("GROUP_RANK"), "0");
    // 4 CPUs less its 2 DataLoader workers.
    EXPECT_EQ(rank.env.at("OMP_NUM_THREADS"), "2");
    EXPECT_EQ(rank.env.at("MKL_NUM_THREADS"), "2");
  }
  // Every GPU visible to every rank: each drives cuda:LOCAL_RANK, as under torchrun.
  EXPECT_EQ(p->env.at("CUDA_VISIBLE_DEVICES"), "0,1,2,3,4,5,6,7");
  EXPECT_EQ(p->env.at("MASTER_ADDR"), "127.0.0.1");
  EXPECT_FALSE(p->env.count("MASTER_PORT")) << "a free port, chosen when the ranks start";
  EXPECT_EQ(p->limits.cpus, "0-31") << "the job is bound to its CPUs, each rank to its share";
}

TEST(RankPlan, RanksOnFewerGpusShareTheirNodeAndRanksWithoutGpusSplitTheJobsCpus) {
  RunOptions o;
  o.nproc = 2;
  o.gpus = "5";  // one GPU on node 1: both ranks there
  const auto one_gpu = plan("gpu8-numa2-cgv2", o);
  ASSERT_TRUE(one_gpu) << one_gpu.error().message();
  EXPECT_EQ(one_gpu->ranks[0].cpus, range(8, 15));
  EXPECT_EQ(one_gpu->ranks[1].cpus, range(24, 31));
  EXPECT_EQ(one_gpu->ranks[1].gpu, 5);
  bool said = false;
  for (const auto& n : one_gpu->notes)
    said = said || n.find("ranks share GPUs") != std::string::npos;
  EXPECT_TRUE(said);
  // No GPUs: the job's CPUs in node order, in equal shares.
  RunOptions cpu_only;
  cpu_only.nproc = 4;
  const auto cpu = plan("gpu8-numa2-cgv2", cpu_only);
  ASSERT_TRUE(cpu) << cpu.error().message();
  EXPECT_EQ(cpu->ranks[0].cpus, range(0, 7));
  EXPECT_EQ(cpu->ranks[1].cpus, range(16, 23));
  EXPECT_EQ(cpu->ranks[2].cpus, range(8, 15));
  EXPECT_EQ(cpu->ranks[3].cpus, range(24, 31));
  EXPECT_EQ(cpu->ranks[3].numa_nodes, std::vector<int>{1});
  EXPECT_FALSE(cpu->ranks[0].gpu);
  EXPECT_EQ(cpu->ranks[0].env.at("OMP_NUM_THREADS"), "8");
}

TEST(RankPlan, SharesDifferByOneCpuAndMoreRanksThanCpusShareOne) {
  launch::RankRequest r;
  r.ranks = 3;
  r.cpus = range(0, 6);
  const auto three = launch::plan_ranks(r);
  ASSERT_TRUE(three);
  EXPECT_EQ(three->ranks[0].cpus, range(0, 2));
  EXPECT_EQ(three->ranks[1].cpus, range(3, 4));
  EXPECT_EQ(three->ranks[2].cpus, range(5, 6));
  EXPECT_TRUE(three->ranks[0].numa_nodes.empty()) << "no NUMA layout: memory is not bound";
  r.ranks = 3;
  r.cpus = {4, 9};
  const auto crowded = launch::plan_ranks(r);
  ASSERT_TRUE(crowded);
  EXPECT_EQ(crowded->ranks[0].cpus, std::vector<int>{4});
  EXPECT_EQ(crowded->ranks[1].cpus, std::vector<int>{9});
  EXPECT_EQ(crowded->ranks[2].cpus, std::vector<int>{4});
  EXPECT_EQ(crowded->ranks[2].env.at("OMP_NUM_THREADS"), "1");
  ASSERT_FALSE(crowded->notes.empty());
  EXPECT_THAT(crowded->notes.back(), HasSubstr("3 ranks on 2 CPU(s): ranks share CPUs"));
  // A GPU whose node has none of the job's CPUs: its rank gets all of them, said so.
  r.ranks = 2;
  r.cpus = join(range(0, 3), range(8, 11));
  r.node_of_cpu = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {8, 1}, {9, 1}, {10, 1}, {11, 1}};
  r.gpus = {0, 1};
  r.gpu_nodes = {0, 2};
  const auto far = launch::plan_ranks(r);
  ASSERT_TRUE(far);
  EXPECT_EQ(far->ranks[0].cpus, range(0, 3));
  EXPECT_EQ(far->ranks[1].cpus, join(range(0, 3), range(8, 11)));
  EXPECT_EQ(far->ranks[1].numa_nodes, (std::vector<int>{0, 1}));
  EXPECT_THAT(far->notes.front(), HasSubstr("ranks 1: their GPUs' NUMA node is unknown"));
  r.ranks = 0;
  EXPECT_FALSE(launch::plan_ranks(r));
}

TEST(RankPlan, WhatTheUserSetIsKeptAndALauncherStartsItsOwnRanks) {
  RunOptions o;
  o.nproc = 2;
  o.env = {"OMP_NUM_THREADS=3", "MASTER_PORT=29511"};
  const auto kept = plan("gpu8-numa2-cgv2", o);
  ASSERT_TRUE(kept) << kept.error().message();
  EXPECT_FALSE(kept->ranks[0].env.count("OMP_NUM_THREADS")) << "the user's 3 stands";
  EXPECT_EQ(kept->env.at("OMP_NUM_THREADS"), "3");
  EXPECT_EQ(kept->env.at("MASTER_PORT"), "29511");
  const auto from_shell = plan("gpu8-numa2-cgv2", {.nproc = 2}, {{"OMP_NUM_THREADS", "5"}});
  ASSERT_TRUE(from_shell) << from_shell.error().message();
  EXPECT_FALSE(from_shell->ranks[1].env.count("OMP_NUM_THREADS"));

  for (const std::vector<std::string>& launcher :
       {std::vector<std::string>{"torchrun", "--nproc-per-node=2", "train.py"},
        {"/usr/local/bin/torchrun", "train.py"},
        {"python3", "-m", "torch.distributed.run", "--nproc-per-node", "2", "train.py"},
        {"/usr/bin/python3.11", "-u", "-m", "torch.distributed.launch", "train.py"},
        {"deepspeed", "train.py"},
        {"accelerate", "launch", "train.py"},
        {"mpirun", "-np", "2", "python", "train.py"},
        {"srun", "python", "train.py"}}) {
    EXPECT_TRUE(launch::is_launcher(launcher)) << launcher.front();
    RunOptions l;
    l.nproc = 2;
    l.command = launcher;
    const auto p =
        launch::plan_job(fixture("gpu8-numa2-cgv2"),
                         inventory::collect(fixture("gpu8-numa2-cgv2"), {}), l, {}, nullptr, "42");
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_TRUE(p->ranks.empty()) << launcher.front();
    EXPECT_EQ(p->env.at("OMP_NUM_THREADS"), "16") << "32 CPUs / 2 ranks";
  }
  for (const std::vector<std::string>& not_one :
       {std::vector<std::string>{"python3", "train.py"},
        {"python3", "-m", "mypackage.train"},
        {"./torchrun_notes.sh"},
        {"python3", "train.py", "-m", "torch.distributed.run"}}) {
    EXPECT_FALSE(launch::is_launcher(not_one)) << not_one.back();
  }
}

TEST(RankPlan, AProcessThatIsARankAlreadyIsRefused) {
  const auto p = plan("gpu8-numa2-cgv2", {.nproc = 2}, {{"RANK", "3"}});
  ASSERT_FALSE(p);
  EXPECT_THAT(p.error().message(), HasSubstr("--nproc 2: RANK=3 is set already"));
  // Without --nproc the job is one process, whatever its environment.
  EXPECT_TRUE(plan("gpu8-numa2-cgv2", {}, {{"RANK", "3"}}));
}

}  // namespace rank_plan_test

// A Slurm job's efficiency judged from what was measured: the CPUs it uses against those it
// has, its memory peak against its limit, OOM kills; the reason from its busiest process and
// one action, the worst first.
#include "slurm/efficiency.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "monitor/sample.hpp"
#include "support/temp_tree.hpp"

namespace efficiency_test {

using dltune::slurm::JobUse;
using dltune::slurm::judge_efficiency;
using ::testing::HasSubstr;

namespace {

JobUse use(int cpus, double used) {
  JobUse u;
  u.job_id = "7";
  u.path = "/slurm/uid_0/job_7";
  u.cpus = cpus;
  u.cpus_used = used;
  u.seconds = 5;
  u.memory_bytes = 100u << 20;
  u.memory_peak_bytes = 200u << 20;
  u.memory_limit_bytes = 300u << 20;
  u.oom_kills = 0;
  return u;
}

}  // namespace

TEST(SlurmEfficiency, TwoCpusAndOneBusyThreadIsHalfWithTheReasonAndAskForOne) {
  auto u = use(2, 0.98);
  u.busiest_pid = 42;
  u.busiest_command = "python3";
  u.busiest_cpus = 0.97;
  u.busiest_threads = 1;
  const auto e = judge_efficiency(u);
  ASSERT_TRUE(e.cpu_pct);
  EXPECT_NEAR(*e.cpu_pct, 49, 0.1);
  ASSERT_EQ(e.findings.size(), 1u);
  EXPECT_THAT(e.findings[0], HasSubstr("asked for 2 CPUs and used 1.0 (49%)"));
  EXPECT_THAT(e.findings[0], HasSubstr("one process does the work (python3 on one thread"));
  EXPECT_THAT(e.action, HasSubstr("ask for 1 CPU (--cpus-per-task=1)"));
  const auto text = render_text(e);
  EXPECT_THAT(text, HasSubstr("0.98 of 2 CPU(s) (49%)"));
  EXPECT_THAT(text, HasSubstr("Action: ask for 1 CPU"));
  EXPECT_EQ(to_json(e)["schema"], "dltune.slurm-efficiency/1");
  EXPECT_EQ(to_json(e)["cpus"], 2);
}

TEST(SlurmEfficiency, AJobThatUsesWhatItHasHasNoFindingAndNoAction) {
  for (auto [cpus, used] : {std::pair{1, 0.2}, std::pair{2, 1.9}, std::pair{4, 2.9}}) {
    const auto e = judge_efficiency(use(cpus, used));
    EXPECT_TRUE(e.findings.empty()) << cpus << " " << used << ": " << e.findings.front();
    EXPECT_EQ(e.action, "");
    EXPECT_THAT(render_text(e), HasSubstr("It uses what it was given."));
  }
  // 8 CPUs and 2.3 used: ask for 3.
  const auto e = judge_efficiency(use(8, 2.3));
  EXPECT_THAT(e.action, HasSubstr("ask for 3 CPUs (--cpus-per-task=3)"));
}

TEST(SlurmEfficiency, OomKillsComeFirstThenCpusThenMemory) {
  auto u = use(4, 0.5);
  u.oom_kills = 2;
  u.memory_peak_bytes = 300u << 20;
  auto e = judge_efficiency(u);
  ASSERT_EQ(e.findings.size(), 2u);
  EXPECT_THAT(e.findings[0], HasSubstr("2 process(es) of the job were killed for memory"));
  EXPECT_THAT(e.action, HasSubstr("ask for more memory: --mem=450M"));
  // A limit of 8 GiB and a peak of 1 GiB: ask for less, unless the CPUs come first.
  u = use(1, 0.9);
  u.memory_limit_bytes = 8ull << 30;
  u.memory_peak_bytes = 1ull << 30;
  e = judge_efficiency(u);
  ASSERT_EQ(e.findings.size(), 1u);
  EXPECT_THAT(e.findings[0], HasSubstr("asked for 8 GiB of memory and used at most 1 GiB"));
  EXPECT_THAT(e.action, HasSubstr("--mem=1536M"));
}

// GPUs its processes used: one busy under half the time is a finding, and its action comes
// after OOM kills and before the CPUs (the GPUs are the node's costliest part).
TEST(Efficiency, GpusLeftWaitingComeAfterOomKillsAndBeforeTheCpus) {
  auto u = use(4, 1.0);
  dltune::slurm::JobGpu idle;
  idle.index = 0;
  idle.name = "NVIDIA H100 80GB HBM3";
  idle.utilization_pct = 23;
  idle.memory_bytes = 10ull << 30;
  idle.memory_total_bytes = 80ull << 30;
  idle.readings = 20;
  auto busy = idle;
  busy.index = 1;
  busy.utilization_pct = 91;
  u.gpus = {idle, busy};
  const auto e = judge_efficiency(u);
  ASSERT_GE(e.findings.size(), 2u);
  EXPECT_THAT(e.findings[0], HasSubstr("busy under half the time (GPU 0 23%)"));
  EXPECT_THAT(e.findings[1], HasSubstr("asked for 4 CPUs"));
  EXPECT_THAT(e.action, HasSubstr("dltune profile --slurm-job 7"));
  const auto text = dltune::slurm::render_text(e);
  EXPECT_THAT(
      text,
      HasSubstr("GPU 0    NVIDIA H100 80GB HBM3: 23% busy, 10 GiB of 80 GiB held by the job"));
  EXPECT_THAT(text, HasSubstr("GPU 1    NVIDIA H100 80GB HBM3: 91% busy"));
  const auto j = dltune::slurm::to_json(e);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["utilization_pct"], 23.0);
  EXPECT_EQ(j["gpus"][0]["memory_bytes"], 10ull << 30);
  // Busy GPUs say nothing; an OOM kill still leads.
  u.gpus = {busy};
  EXPECT_THAT(judge_efficiency(u).action, HasSubstr("--cpus-per-task"));
  u.gpus = {idle};
  u.oom_kills = 1;
  EXPECT_THAT(judge_efficiency(u).action, HasSubstr("ask for more memory"));
  // No GPU reading (NVML without utilisation): no judgement of it.
  u.oom_kills = 0;
  idle.utilization_pct.reset();
  u.gpus = {idle};
  EXPECT_THAT(judge_efficiency(u).action, HasSubstr("--cpus-per-task"));
  EXPECT_THAT(dltune::slurm::render_text(judge_efficiency(u)), HasSubstr("busy unknown"));
}

// GPUs Slurm gave the job that none of its processes used: the finding after OOM kills and
// before the GPUs left waiting (an unused one is not also "busy under half the time"), with the
// number to ask for; none used at all asks for none.
TEST(Efficiency, GpusGivenAndNeverUsedAreNamedWithTheNumberToAskFor) {
  auto u = use(2, 1.9);
  dltune::slurm::JobGpu used;
  used.index = 0;
  used.utilization_pct = 30;
  used.memory_bytes = 4ull << 30;
  used.allocated = true;
  auto unused = used;
  unused.index = 3;
  unused.utilization_pct = 0;
  unused.memory_bytes = 0;
  unused.used = false;
  u.gpus = {used, unused};
  auto e = judge_efficiency(u);
  ASSERT_EQ(e.findings.size(), 2u) << ::testing::PrintToString(e.findings);
  EXPECT_THAT(
      e.findings[0],
      HasSubstr("Slurm gave the job 2 GPU(s) and none of its processes used GPU 3 (1 of 2"));
  EXPECT_THAT(e.findings[1], HasSubstr("busy under half the time (GPU 0 30%)"));
  EXPECT_THAT(e.action, HasSubstr("ask for 1 GPU (--gres=gpu:1)"));
  EXPECT_THAT(e.action, HasSubstr("--nproc-per-node=2"));
  EXPECT_THAT(dltune::slurm::render_text(e),
              HasSubstr("GPU 3    given by Slurm, not used by the job"));
  const auto j = dltune::slurm::to_json(e);
  EXPECT_EQ(j["gpus"][1]["allocated"], true);
  EXPECT_EQ(j["gpus"][1]["used"], false);
  // None of them used: ask for none, or find why the job cannot see them.
  used.used = false;
  used.memory_bytes = 0;
  u.gpus = {used, unused};
  e = judge_efficiency(u);
  ASSERT_EQ(e.findings.size(), 1u) << ::testing::PrintToString(e.findings);
  EXPECT_THAT(e.findings[0], HasSubstr("used GPUs 0, 3 (2 of 2 unused)"));
  EXPECT_THAT(e.action, HasSubstr("ask for no GPUs"));
  // An OOM kill still comes first.
  u.oom_kills = 2;
  EXPECT_THAT(judge_efficiency(u).action, HasSubstr("ask for more memory"));
}

// Slurm's GPUs from the job's processes' environment (SLURM_JOB_GPUS in the batch step,
// SLURM_STEP_GPUS in an srun step), each process read once; a list that does not parse is none.
TEST(Efficiency, TheGpusSlurmGaveAreReadFromTheJobsProcessesEnvironment) {
  dltune::testing::TempTree t;
  using namespace std::string_literals;
  t.write("proc/100/environ", "PATH=/usr/bin\0SLURM_JOB_GPUS=0,2\0HOME=/root\0"s);
  t.write("proc/101/environ", "SLURM_STEP_GPUS=2,5\0CUDA_VISIBLE_DEVICES=0,1\0"s);
  t.write("proc/102/environ", "SLURM_JOB_GPUS=x\0"s);
  std::vector<pid_t> tried;
  const auto root = t.root();
  EXPECT_EQ(dltune::slurm::slurm_gpus_of(root, {100, 101, 102, 103}, tried),
            (std::vector<unsigned>{0, 2, 5}));
  EXPECT_EQ(tried, (std::vector<pid_t>{100, 101, 102, 103}));
  EXPECT_TRUE(dltune::slurm::slurm_gpus_of(root, {100, 101}, tried).empty()) << "read once";
  std::vector<pid_t> few;
  EXPECT_EQ(dltune::slurm::slurm_gpus_of(root, {102, 101, 100}, few, 2),
            (std::vector<unsigned>{2, 5}))
      << "at most 2 processes read";
  // add_gpu_use: a GPU given and not used is kept with the GPU's own utilisation.
  dltune::monitor::Sample s;
  dltune::monitor::Process p;
  p.pid = 100;
  s.processes = {p};
  dltune::monitor::Gpu g0, g2, g7;
  g0.index = 0;
  g0.utilization_gpu_pct = 40;
  g0.processes = {{100, 1ull << 30}};
  g2.index = 2;
  g2.utilization_gpu_pct = 0;
  g7.index = 7;
  g7.processes = {{999, 1}};
  s.gpus = {g0, g2, g7};
  std::vector<dltune::slurm::JobGpu> gpus;
  dltune::slurm::add_gpu_use(s, gpus, {0, 2});
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_TRUE(gpus[0].allocated && gpus[0].used);
  EXPECT_EQ(gpus[0].memory_bytes, 1ull << 30);
  EXPECT_TRUE(gpus[1].allocated);
  EXPECT_FALSE(gpus[1].used);
  EXPECT_DOUBLE_EQ(gpus[1].utilization_pct.value_or(-1), 0.0);
}

}  // namespace efficiency_test

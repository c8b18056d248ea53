// A Slurm job's efficiency judged from what was measured: the CPUs it uses against those it
// has, its memory peak against its limit, OOM kills; the reason from its busiest process and
// one action, the worst first.
#include "slurm/efficiency.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

// What `dltune run` decides before it creates anything: limits, placement near the GPUs, the
// job's environment; and the bad options it refuses.
#include <filesystem>

#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "inventory/host_facts.hpp"
#include "launch/job_plan.hpp"
#include "settings/catalog.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"

namespace job_plan_test {

using namespace dltune;
using launch::RunOptions;

namespace {

host::Root fixture(const std::string& name) {
  return *host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + name);
}

struct Host {
  host::Root root;
  inventory::HostFacts facts;
  explicit Host(const host::Root& r) : root(r), facts(inventory::collect(r, {})) {}
  Result<launch::JobPlan> plan(RunOptions o, std::map<std::string, std::string> env = {},
                               const settings::Profile* profile = nullptr) {
    if (o.command.empty()) o.command = {"python3", "train.py"};
    return launch::plan_job(root, facts, o, std::move(env), profile, "42");
  }
};

std::string error_of(const Result<launch::JobPlan>& r) {
  return r ? std::string("(no error)") : r.error().message();
}

}  // namespace

TEST(CpuQuota, ShareOfTheMachineOrCpus) {
  EXPECT_DOUBLE_EQ(*launch::parse_cpu_quota("80%", 32), 25.6);
  EXPECT_DOUBLE_EQ(*launch::parse_cpu_quota("2.5", 32), 2.5);
  EXPECT_DOUBLE_EQ(*launch::parse_cpu_quota("50%", 1), 0.5);
  for (const char* bad : {"", "abc", "0", "-1", "150%", "33", "0%", "nan", "inf", "0.001"}) {
    const auto r = launch::parse_cpu_quota(bad, 32);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("--cpu-quota"), std::string::npos);
  }
}

TEST(MemorySize, UnitsAndShares) {
  const std::uint64_t total = 64ull << 30;
  EXPECT_EQ(*launch::parse_memory("64G", total), 64ull << 30);
  EXPECT_EQ(*launch::parse_memory("512M", total), 512ull << 20);
  EXPECT_EQ(*launch::parse_memory("512MiB", total), 512ull << 20);
  EXPECT_EQ(*launch::parse_memory("100m", total), 100ull << 20);
  EXPECT_EQ(*launch::parse_memory("1.5g", total), 3ull << 29);
  EXPECT_EQ(*launch::parse_memory("4096", total), 4096u);
  EXPECT_EQ(*launch::parse_memory("50%", total), 32ull << 30);
  EXPECT_EQ(*launch::parse_memory("0", total, true), 0u);
  for (const char* bad : {"0", "", "G", "12X", "-5M", "101%", "65G", "1e30"}) {
    EXPECT_FALSE(launch::parse_memory(bad, total)) << bad;
  }
}

TEST(JobPlan, GpusBindToTheirNumaNodeAndSetTheVisibleDevices) {
  Host h(fixture("gpu8-numa2-cgv2"));  // GPUs 0-3 on node 0 (CPUs 0-7,16-23), 4-7 on node 1
  RunOptions o;
  o.gpus = "4,5";
  o.numa = "auto";
  const auto p = h.plan(o);
  ASSERT_TRUE(p) << error_of(p);
  EXPECT_EQ(p->env.at("CUDA_VISIBLE_DEVICES"), "4,5");
  EXPECT_EQ(p->env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_EQ(p->numa_nodes, std::vector<int>{1});
  EXPECT_EQ(p->limits.cpus, "8-15,24-31");
  EXPECT_EQ(p->limits.mems, "1");
  ASSERT_TRUE(p->cpus);
  EXPECT_EQ(p->cpus->size(), 16u);
  EXPECT_EQ(p->env.at("OMP_NUM_THREADS"), "16");
  EXPECT_EQ(p->env.at("MKL_NUM_THREADS"), "16");
  // GPUs on both nodes: both nodes.
  o.gpus = "3,4";
  const auto both = h.plan(o);
  EXPECT_EQ(both->numa_nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(both->limits.mems, "0-1");
  // --cpus narrows the node's CPUs; ranks share them.
  o.gpus = "0";
  o.cpus = "0-3,8-11";
  o.nproc = 2;
  const auto narrow = h.plan(o);
  EXPECT_EQ(narrow->limits.cpus, "0-3");
  EXPECT_EQ(narrow->env.at("OMP_NUM_THREADS"), "2");
}

TEST(JobPlan, AnExplicitNodeAndNoBindingWithoutOne) {
  Host h(fixture("gpu8-numa2-cgv2"));
  RunOptions o;
  o.numa = "0";
  const auto p = h.plan(o);
  ASSERT_TRUE(p) << error_of(p);
  EXPECT_EQ(p->limits.cpus, "0-7,16-23");
  EXPECT_EQ(p->limits.mems, "0");
  const auto free = h.plan(RunOptions{});
  ASSERT_TRUE(free);
  EXPECT_FALSE(free->cpus);
  EXPECT_FALSE(free->limits.cpus);
  // Unbound, nothing said about ranks or workers: torch's own default stands.
  EXPECT_EQ(free->env.count("OMP_NUM_THREADS"), 0u);
  RunOptions q;
  q.cpu_quota = "2.5";
  EXPECT_EQ(h.plan(q)->env.at("OMP_NUM_THREADS"), "3");
  // Workers take their CPUs from the pool: 32 CPUs / 2 ranks - 4 workers.
  RunOptions w;
  w.nproc = 2;
  w.workers = 4;
  EXPECT_EQ(h.plan(w)->env.at("OMP_NUM_THREADS"), "12");
  w.workers = 40;
  EXPECT_EQ(h.plan(w)->env.at("MKL_NUM_THREADS"), "1");  // never below one
}

TEST(JobPlan, NeverOverridesWhatTheUserSet) {
  Host h(fixture("gpu8-numa2-cgv2"));
  RunOptions o;
  const auto p = h.plan(o, {{"OMP_NUM_THREADS", "4"}, {"MALLOC_ARENA_MAX", "2"}});
  ASSERT_TRUE(p) << error_of(p);
  EXPECT_EQ(p->env.at("OMP_NUM_THREADS"), "4");
  EXPECT_EQ(p->env.count("MKL_NUM_THREADS"), 0u);         // unbound: left to torch
  EXPECT_EQ(p->env.count("MALLOC_MMAP_THRESHOLD_"), 0u);  // the user tunes malloc: hands off
  EXPECT_EQ(p->allocator, launch::Allocator::kDefault);
  bool kept = false;
  for (const auto& n : p->notes)
    kept |= n.find("kept your MALLOC_ARENA_MAX=2") != std::string::npos;
  EXPECT_TRUE(kept) << ::testing::PrintToString(p->notes);
  // --gpus against the user's own CUDA_VISIBLE_DEVICES: refused, not overridden.
  o.gpus = "0";
  const auto clash = h.plan(o, {{"CUDA_VISIBLE_DEVICES", "1"}});
  EXPECT_NE(error_of(clash).find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  // --env wins over what dltune would set.
  RunOptions e;
  e.env = {"OMP_NUM_THREADS=7"};
  EXPECT_EQ(h.plan(e)->env.at("OMP_NUM_THREADS"), "7");
}

TEST(JobPlan, TheDefaultAllocatorIsGlibcTunedAndTheOthersNeedTheirLibrary) {
  Host h(fixture("gpu8-numa2-cgv2"));
  const auto p = h.plan(RunOptions{});
  EXPECT_EQ(p->allocator, launch::Allocator::kGlibcTuned);
  EXPECT_EQ(p->env.at("MALLOC_MMAP_THRESHOLD_"), "33554432");
  EXPECT_EQ(p->env.at("MALLOC_TRIM_THRESHOLD_"), "1073741824");
  EXPECT_EQ(p->env.at("MALLOC_TOP_PAD_"), "67108864");
  RunOptions t;
  t.allocator = "tcmalloc";
  EXPECT_NE(error_of(h.plan(t)).find("libtcmalloc-minimal4"), std::string::npos);
  dltune::testing::TempTree tree;
  tree.write("usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", "")
      .write("usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "")
      .write("sys/devices/system/cpu/online", "0-1\n");
  Host with(tree.root());
  const auto tc = with.plan(t);
  ASSERT_TRUE(tc) << error_of(tc);
  EXPECT_EQ(tc->env.at("LD_PRELOAD"), "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4");
  EXPECT_EQ(tc->env.count("MALLOC_MMAP_THRESHOLD_"), 0u);
  RunOptions j;
  j.allocator = "jemalloc";
  const auto je = with.plan(j);
  EXPECT_EQ(je->env.at("LD_PRELOAD"), "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
  EXPECT_EQ(je->env.at("MALLOC_CONF"), "dirty_decay_ms:-1,muzzy_decay_ms:-1");
  // The user's LD_PRELOAD stays.
  const auto kept = with.plan(t, {{"LD_PRELOAD", "/opt/mine.so"}});
  EXPECT_EQ(kept->env.at("LD_PRELOAD"), "/opt/mine.so");
  RunOptions d;
  d.allocator = "default";
  EXPECT_EQ(h.plan(d)->env.count("MALLOC_MMAP_THRESHOLD_"), 0u);
}

TEST(JobPlan, ProfileLimitsBecomeResourceLimits) {
  Host h(fixture("gpu8-numa2-cgv2"));
  auto profile = settings::load_profile("distributed", h.root, settings::validate_key);  // memlock
  ASSERT_TRUE(profile);
  const auto p = h.plan(RunOptions{}, {}, &*profile);
  ASSERT_TRUE(p);
  bool nofile = false, memlock = false;
  for (const auto& l : p->rlimits) {
    nofile |= l.name == "nofile" && l.soft == 65536;
    memlock |= l.name == "memlock";
  }
  EXPECT_TRUE(nofile);
  EXPECT_TRUE(memlock);
}

// cpu.latency_us: a profile that asks for it has run hold it (said in the plan's notes); the
// built-in profiles do not ask.
TEST(JobPlan, AProfilesCpuLatencyIsHeldWhileTheJobRuns) {
  Host h(fixture("gpu8-numa2-cgv2"));
  auto training = settings::load_profile("training", h.root, settings::validate_key);
  ASSERT_TRUE(training);
  EXPECT_FALSE(h.plan(RunOptions{}, {}, &*training)->cpu_latency_us);
  auto own = settings::parse_profile(
      "[profile]\nname = \"low-latency\"\n[settings.\"cpu.latency_us\"]\nvalue = 10\n",
      "low-latency.toml", settings::validate_key);
  ASSERT_TRUE(own) << own.error().message();
  const auto p = h.plan(RunOptions{}, {}, &*own);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->cpu_latency_us, 10);
  bool said = false;
  for (const auto& n : p->notes)
    said |= n ==
            "CPU wake-up latency: at most 10 µs while the job runs (cpu.latency_us, held on "
            "/dev/cpu_dma_latency)";
  EXPECT_TRUE(said) << ::testing::PrintToString(p->notes);
  // A value the type refuses never reaches the plan.
  EXPECT_FALSE(settings::parse_profile(
      "[profile]\nname = \"x\"\n[settings.\"cpu.latency_us\"]\nvalue = -1\n", "x.toml",
      settings::validate_key));
}

TEST(JobPlan, BadOptionsAreRefusedWithTheOptionNamed) {
  Host h(fixture("gpu8-numa2-cgv2"));
  const auto expect_error = [&](RunOptions o, const std::string& needle) {
    const auto r = h.plan(o);
    EXPECT_NE(error_of(r).find(needle), std::string::npos) << error_of(r);
  };
  RunOptions o;
  o.gpus = "8";
  expect_error(o, "8 GPU(s)");
  o = {};
  o.gpus = "x";
  expect_error(o, "--gpus");
  o = {};
  o.cpus = "0-40";
  expect_error(o, "no CPU");
  o = {};
  o.numa = "5";
  expect_error(o, "--numa");
  o = {};
  o.memory = "0";
  expect_error(o, "--memory");
  o = {};
  o.memory_swap = "1G";
  expect_error(o, "--memory-swap needs --memory");
  o = {};
  o.cpu_quota = "200%";
  expect_error(o, "--cpu-quota");
  o = {};
  o.cpu_weight = "0";
  expect_error(o, "--cpu-weight");
  o = {};
  o.name = "../etc";
  expect_error(o, "--name");
  o = {};
  o.env = {"=x"};
  expect_error(o, "--env");
  o = {};
  o.allocator = "mimalloc";
  expect_error(o, "--allocator");
  o = {};
  o.cpus = "8-15";
  o.numa = "0";
  expect_error(o, "no CPU of NUMA node");
  const auto none = launch::plan_job(h.root, h.facts, RunOptions{}, {}, nullptr, "1");
  EXPECT_NE(error_of(none).find("no command"), std::string::npos);
  Host vm(fixture("this-vm"));  // no GPU
  RunOptions g;
  g.gpus = "0";
  EXPECT_NE(error_of(vm.plan(g)).find("no NVIDIA GPU"), std::string::npos);
}

TEST(JobPlan, ACommandThatDoesNotExistIsRefusedOnTheLiveHost) {
  Host live{host::Root()};
  RunOptions o;
  o.command = {"surely-not-a-command-dltune"};
  EXPECT_NE(error_of(live.plan(o, {{"PATH", "/usr/bin:/bin"}})).find("command not found"),
            std::string::npos);
  o.command = {"true"};
  EXPECT_TRUE(live.plan(o, {{"PATH", "/usr/bin:/bin"}}));
  o.command = {"/nonexistent/train"};
  EXPECT_NE(error_of(live.plan(o)).find("/nonexistent/train"), std::string::npos);
}

// Inside a Slurm job the machine is the allocation: this process's cpuset (the step's) for
// --cpu-quota N% and the thread counts, the job's GPUs (SLURM_STEP_GPUS) for --numa auto.
TEST(JobPlan, InsideASlurmJobTheAllocationIsTheMachine) {
  dltune::testing::TempTree t;
  const std::filesystem::path from = std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2";
  std::filesystem::copy(from, t.dir(),
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks |
                            std::filesystem::copy_options::overwrite_existing);
  const std::string task = "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0";
  t.write("proc/self/cpuset", task + "\n");
  t.write("sys/fs/cgroup" + task + "/cpuset.cpus.effective", "8-11\n");  // on node 1
  t.write("sys/fs/cgroup" + task + "/cpuset.mems.effective", "1\n");
  Host h(t.root());
  ASSERT_TRUE(h.facts.cpu.allowed);
  const std::map<std::string, std::string> slurm = {
      {"SLURM_JOB_ID", "7"}, {"SLURM_STEP_GPUS", "4,5"}, {"CUDA_VISIBLE_DEVICES", "0,1"}};
  RunOptions o;
  o.numa = "auto";
  const auto p = h.plan(o, slurm);
  ASSERT_TRUE(p) << error_of(p);
  EXPECT_EQ(p->gpus, (std::vector<int>{4, 5}));
  EXPECT_EQ(p->numa_nodes, std::vector<int>{1});
  EXPECT_EQ(p->limits.cpus, "8-11") << "the node's CPUs that the allocation has";
  EXPECT_EQ(p->env.at("CUDA_VISIBLE_DEVICES"), "0,1") << "as Slurm set it";
  EXPECT_EQ(p->env.at("OMP_NUM_THREADS"), "4");
  const auto has = [&](const std::string& what) {
    return std::any_of(p->notes.begin(), p->notes.end(),
                       [&](const std::string& n) { return n.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(has("Slurm job 7's on this node, 8-11 (4 of the host's 32)"))
      << ::testing::PrintToString(p->notes);
  EXPECT_TRUE(has("SLURM_STEP_GPUS=4,5")) << ::testing::PrintToString(p->notes);
  // A share of the machine is of the allocation's 4 CPUs; unbound, the threads still fit them.
  RunOptions q;
  q.cpu_quota = "50%";
  const auto quota = h.plan(q, slurm);
  ASSERT_TRUE(quota) << error_of(quota);
  EXPECT_DOUBLE_EQ(*quota->limits.cpu_quota_cpus, 2.0);
  const auto plain = h.plan(RunOptions{}, slurm);
  EXPECT_EQ(plain->env.at("OMP_NUM_THREADS"), "4") << "torch would size its pool from 32";
  EXPECT_FALSE(plain->limits.cpus);
  // --cpus outside the allocation is refused; GPUs the host does not have are a note.
  RunOptions outside;
  outside.cpus = "0-1";
  EXPECT_NE(error_of(h.plan(outside, slurm))
                .find("--cpus: Slurm job 7's CPUs on this node are "
                      "8-11; no CPU 0"),
            std::string::npos)
      << error_of(h.plan(outside, slurm));
  auto odd = slurm;
  odd["SLURM_STEP_GPUS"] = "12";
  const auto none = h.plan(o, odd);
  ASSERT_TRUE(none) << error_of(none);
  EXPECT_TRUE(none->gpus.empty());
  EXPECT_FALSE(none->limits.mems);
  // Under sudo (no SLURM_* variables) the job is the one of the cpuset's group.
  const auto sudo = h.plan(RunOptions{});
  ASSERT_TRUE(sudo);
  EXPECT_EQ(sudo->env.at("OMP_NUM_THREADS"), "4");
  // Outside Slurm a cpuset narrower than the host leaves the threads to torch, as before.
  t.write("proc/self/cpuset", "/user.slice\n");
  t.write("sys/fs/cgroup/user.slice/cpuset.cpus.effective", "8-11\n");
  Host other(t.root());
  ASSERT_TRUE(other.facts.cpu.allowed);
  const auto bare = other.plan(RunOptions{});
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->env.count("OMP_NUM_THREADS"), 0u);
}

}  // namespace job_plan_test

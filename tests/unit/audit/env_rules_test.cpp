// The training environment's variables judged against a host (audit/env_rules.hpp), and
// env.training in `dltune check` on this machine with the variables set in its child.
#include "audit/env_rules.hpp"
#include "support/build_paths.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inventory/host_facts.hpp"
#include "support/run.hpp"

namespace env_rules_test {

using dltune::audit::EnvProblem;
using dltune::audit::judge_environment;
using dltune::inventory::HostFacts;
using ::testing::HasSubstr;

namespace {

// A host with 8 CPUs, two GPUs, eth0 up and ib0 down, and one active and one down HCA.
HostFacts host() {
  HostFacts f;
  for (int c = 0; c < 8; ++c) f.cpu.online.push_back(c);
  f.gpu.nvml.loaded = true;
  for (unsigned i = 0; i < 2; ++i) {
    dltune::gpu::Device d;
    d.index = i;
    d.uuid = "GPU-8c7d1f0" + std::to_string(i) + "-aaaa-bbbb-cccc-000000000000";
    f.gpu.nvml.devices.push_back(d);
  }
  dltune::inventory::NetInterface eth0, ib0;
  eth0.name = "eth0";
  eth0.operstate = "up";
  ib0.name = "ib0";
  ib0.operstate = "down";
  f.network.interfaces = {eth0, ib0};
  dltune::inventory::RdmaDevice up, down;
  up.name = "mlx5_0";
  up.ports.push_back({1, std::string("4: ACTIVE"), std::nullopt, std::nullopt});
  down.name = "mlx5_1";
  down.ports.push_back({1, std::string("1: DOWN"), std::nullopt, std::nullopt});
  f.network.rdma = {up, down};
  return f;
}

const EnvProblem* about(const std::vector<EnvProblem>& v, const std::string& var) {
  for (const auto& p : v)
    if (p.variable == var) return &p;
  return nullptr;
}

}  // namespace

TEST(EnvRules, AnEnvironmentThatFitsTheHostHasNoProblem) {
  const auto out = judge_environment({{"NCCL_DEBUG", "WARN"},
                                      {"NCCL_SOCKET_IFNAME", "eth"},
                                      {"NCCL_IB_HCA", "mlx5_0:1"},
                                      {"CUDA_VISIBLE_DEVICES", "1,GPU-8c7d1f00"},
                                      {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
                                      {"OMP_NUM_THREADS", "4"},
                                      {"LOCAL_WORLD_SIZE", "2"}},
                                     host());
  EXPECT_TRUE(out.empty()) << out.front().summary;
}

TEST(EnvRules, DebuggingVariablesLeftOnAndTransportsTurnedOff) {
  const auto out = judge_environment({{"NCCL_DEBUG", "info"},
                                      {"CUDA_LAUNCH_BLOCKING", "1"},
                                      {"NCCL_P2P_DISABLE", "1"},
                                      {"NCCL_SHM_DISABLE", "0"},
                                      {"NCCL_IB_DISABLE", "1"},
                                      {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}},
                                     host());
  ASSERT_NE(about(out, "NCCL_DEBUG"), nullptr);
  EXPECT_EQ(about(out, "NCCL_DEBUG")->summary, "NCCL_DEBUG=info is left on");
  EXPECT_THAT(about(out, "NCCL_DEBUG")->fix, HasSubstr("unset NCCL_DEBUG"));
  ASSERT_NE(about(out, "CUDA_LAUNCH_BLOCKING"), nullptr);
  EXPECT_THAT(about(out, "CUDA_LAUNCH_BLOCKING")->why, HasSubstr("waits for the kernel"));
  ASSERT_NE(about(out, "NCCL_P2P_DISABLE"), nullptr);
  EXPECT_EQ(about(out, "NCCL_SHM_DISABLE"), nullptr);  // 0: not disabled
  ASSERT_NE(about(out, "NCCL_IB_DISABLE"), nullptr);
  EXPECT_THAT(about(out, "NCCL_IB_DISABLE")->summary, HasSubstr("active InfiniBand/RoCE ports "
                                                                "(mlx5_0:1)"));
  // Without an active port, turning IB off changes nothing.
  auto no_ib = host();
  no_ib.network.rdma.clear();
  EXPECT_EQ(about(judge_environment({{"NCCL_IB_DISABLE", "1"}}, no_ib), "NCCL_IB_DISABLE"),
            nullptr);
}

TEST(EnvRules, InterfacesHcasAndGpusThatAreNotThere) {
  const auto out = judge_environment({{"NCCL_SOCKET_IFNAME", "=ens1f0"},
                                      {"NCCL_IB_HCA", "mlx5_1,mlx5_7"},
                                      {"CUDA_VISIBLE_DEVICES", "0,2,GPU-ffffffff"}},
                                     host());
  const auto* ifname = about(out, "NCCL_SOCKET_IFNAME");
  ASSERT_NE(ifname, nullptr);
  EXPECT_EQ(ifname->severity, dltune::audit::Severity::kCritical);  // none of them exists
  EXPECT_EQ(ifname->summary,
            "NCCL_SOCKET_IFNAME==ens1f0 names no interface of this host (ens1f0 missing)");
  EXPECT_THAT(ifname->why, HasSubstr("This host has: eth0, ib0."));
  std::vector<std::string> hca;
  for (const auto& p : out)
    if (p.variable == "NCCL_IB_HCA") hca.push_back(p.summary);
  EXPECT_THAT(hca, ::testing::ElementsAre(
                       "NCCL_IB_HCA=mlx5_1,mlx5_7 names HCAs this host does not have: mlx5_7",
                       "NCCL_IB_HCA=mlx5_1,mlx5_7 names HCAs with no active port: mlx5_1"));
  const auto* cvd = about(out, "CUDA_VISIBLE_DEVICES");
  ASSERT_NE(cvd, nullptr);
  EXPECT_EQ(cvd->severity, dltune::audit::Severity::kCritical);
  EXPECT_EQ(cvd->summary,
            "CUDA_VISIBLE_DEVICES=0,2,GPU-ffffffff names GPUs this host does not have: 2, "
            "GPU-ffffffff");
  // An interface that is down, and an exclusion list (never judged: it names what not to use).
  const auto down = judge_environment({{"NCCL_SOCKET_IFNAME", "ib0"}}, host());
  ASSERT_NE(about(down, "NCCL_SOCKET_IFNAME"), nullptr);
  EXPECT_EQ(about(down, "NCCL_SOCKET_IFNAME")->summary,
            "NCCL_SOCKET_IFNAME=ib0 names interfaces that are down: ib0 (down)");
  EXPECT_TRUE(judge_environment({{"NCCL_SOCKET_IFNAME", "^docker,lo"},
                                 {"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"}},
                                host())
                  .empty());
}

TEST(EnvRules, AllocatorConfigAndThreadsTimesRanks) {
  auto out = judge_environment({{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segment:True"},
                                {"OMP_NUM_THREADS", "4"},
                                {"LOCAL_WORLD_SIZE", "4"}},
                               host());
  ASSERT_NE(about(out, "PYTORCH_CUDA_ALLOC_CONF"), nullptr);
  EXPECT_EQ(about(out, "PYTORCH_CUDA_ALLOC_CONF")->summary,
            "PYTORCH_CUDA_ALLOC_CONF has keys PyTorch does not know: expandable_segment");
  ASSERT_NE(about(out, "OMP_NUM_THREADS"), nullptr);
  EXPECT_EQ(about(out, "OMP_NUM_THREADS")->summary,
            "OMP_NUM_THREADS=4 times 4 ranks is 16 threads for 8 CPUs");
  EXPECT_THAT(about(out, "OMP_NUM_THREADS")->fix, HasSubstr("OMP_NUM_THREADS=2"));
  // A job's own ranks and CPUs (profile, run) win over LOCAL_WORLD_SIZE and the host's CPUs.
  dltune::audit::EnvJob two_ranks;
  two_ranks.ranks = 2u;
  two_ranks.cpus = 16u;
  out = judge_environment({{"OMP_NUM_THREADS", "4"}}, host(), two_ranks);
  EXPECT_EQ(about(out, "OMP_NUM_THREADS"), nullptr);
  // Unset on a GPU host: an info with what expandable_segments is for.
  out = judge_environment({}, host());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, dltune::audit::Severity::kInfo);
  EXPECT_THAT(out[0].why, HasSubstr("reserved by PyTorch but unallocated"));
  EXPECT_TRUE(judge_environment({}, HostFacts{}).empty());  // no GPU: nothing to say
}

TEST(EnvRules, CheckJudgesItsOwnShellsVariables) {
  const auto r = dltune::testing::run(
      {DLTUNE_BINARY, "check", "--json", "--only", "env.training"},
      {{"NCCL_DEBUG", "INFO"}, {"CUDA_LAUNCH_BLOCKING", "1"}, {"OMP_NUM_THREADS", "64"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // warnings only
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out.substr(0, 400);
  std::vector<std::string> summaries;
  for (const auto& f : j["findings"]) {
    EXPECT_EQ(f["id"], "env.training");
    EXPECT_EQ(f["area"], "environment");
    summaries.push_back(f["summary"]);
  }
  EXPECT_THAT(summaries, ::testing::Contains("NCCL_DEBUG=INFO is left on"));
  EXPECT_THAT(summaries, ::testing::Contains("CUDA_LAUNCH_BLOCKING=1 is left on"));
  EXPECT_THAT(summaries, ::testing::Contains(HasSubstr("OMP_NUM_THREADS=64 times 1 rank is 64 "
                                                       "threads for")));
  // The same shell without them: one ok finding.
  std::map<std::string, std::string> none;  // every variable it judges, set empty
  for (const char* v : {"NCCL_DEBUG", "CUDA_LAUNCH_BLOCKING", "OMP_NUM_THREADS", "NCCL_P2P_DISABLE",
                        "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA",
                        "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF"})
    none[v] = "";
  const auto clean =
      dltune::testing::run({DLTUNE_BINARY, "check", "--json", "--only", "env.training"}, none);
  const auto c = nlohmann::json::parse(clean.out, nullptr, false);
  ASSERT_TRUE(c.is_object());
  ASSERT_EQ(c["findings"].size(), 1u);
  EXPECT_EQ(c["findings"][0]["severity"], "ok");
}

TEST(EnvRules, SystemLibrariesInLdLibraryPathAheadOfTorchsWheels) {
  auto f = host();
  dltune::inventory::Toolkit cuda;
  cuda.path = "/usr/local/cuda-11.8";
  cuda.version = "11.8.89";
  f.cuda.toolkits.push_back(cuda);
  f.cuda.cudnn.push_back(
      {std::string("8.6.0"), "/usr/local/cuda-11.8/lib64/libcudnn.so.8.6.0", "library"});
  f.cuda.nccl.push_back(
      {std::string("2.20.5"), "/usr/lib/x86_64-linux-gnu/libnccl.so.2.20.5", "library"});
  for (const auto& [name, version] :
       {std::pair{"nvidia-cudnn-cu12", "9.1.0.70"}, std::pair{"nvidia-nccl-cu12", "2.20.5"},
        std::pair{"nvidia-cuda-runtime-cu12", "12.4.127"}})
    f.cuda.python_packages.push_back(
        {"/usr/bin/python3", name, version, "/usr/lib/python3/dist-packages/x.dist-info"});
  // /usr/local/cuda is a link to the 11.8 toolkit: the resolver follows it, as check's does.
  dltune::audit::EnvJob job;
  job.resolve = [](const std::string& d) -> std::optional<std::string> {
    if (d.starts_with("/usr/local/cuda/")) return "/usr/local/cuda-11.8/" + d.substr(16);
    return d;
  };
  const auto out = judge_environment(
      {{"LD_LIBRARY_PATH", "/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu:/opt/x"},
       {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}},
      f, job);
  std::vector<std::string> summaries;
  for (const auto& p : out) {
    EXPECT_EQ(p.variable, "LD_LIBRARY_PATH");
    summaries.push_back(p.summary);
  }
  // cuDNN 8.6 and the CUDA 11.8 runtime shadow the wheels; the system NCCL is the wheel's own
  // version, which is no problem.
  EXPECT_THAT(summaries,
              ::testing::ElementsAre(
                  "LD_LIBRARY_PATH puts cuDNN 8.6.0 (/usr/local/cuda/lib64) ahead of the "
                  "nvidia-cudnn-cu12 9.1.0.70 wheel",
                  "LD_LIBRARY_PATH puts the CUDA runtime 11.8.89 (/usr/local/cuda/lib64) ahead "
                  "of the nvidia-cuda-runtime-cu12 12.4.127 wheel"));
  EXPECT_THAT(out[0].fix, HasSubstr("export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/opt/x"));
  EXPECT_THAT(out[0].why, HasSubstr("cuDNN version incompatibility"));
  // Without the wheels (Debian's python3-torch uses the system's libraries): nothing to say.
  f.cuda.python_packages.clear();
  EXPECT_TRUE(judge_environment({{"LD_LIBRARY_PATH", "/usr/local/cuda/lib64"},
                                 {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}},
                                f, job)
                  .empty());
}

}  // namespace env_rules_test

// `dltune top --once` and `dltune record` with GPUs, through the fake libnvidia-ml.so loaded as
// the real one is (DLTUNE_NVML_LIBRARY).
#include <unistd.h>

#include <algorithm>

#include <filesystem>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "../gpu/fake_nvml_config.hpp"
#include "core/json.hpp"
#include "gpu/pci_gpus.hpp"
#include "store/recording.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace top_record_gpu_cli_test {

using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using dltune::testing::run;
namespace fs = std::filesystem;

namespace {

nlohmann::json busy_gpus(unsigned n) {
  auto config = fake_hgx(n);
  for (unsigned i = 0; i < n; ++i) {
    config["gpus"][i]["utilization"] = {{"gpu", 87 - i}, {"memory", 40}};
    config["gpus"][i]["pcie_throughput_kbs"] = {{"tx", 1024}, {"rx", 2048}};
  }
  return config;
}

}  // namespace

TEST(TopGpuCli, OnceShowsEachGpuFromNvml) {
  FakeNvmlConfig fake(busy_gpus(2));
  const auto r = run(
      {DLTUNE_BINARY, "top", "--once", "--interval", "300ms", "--pid", std::to_string(::getpid())},
      {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}, {"COLUMNS", "160"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU0 NVIDIA H100 80GB HBM3 util 87.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU1 NVIDIA H100 80GB HBM3 util 86.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pcie tx 1.0MB/s rx 2.0MB/s"), std::string::npos) << r.out;
  // The test process itself is the tree's main process.
  EXPECT_NE(r.out.find(fmt::format("{:>7} main", ::getpid())), std::string::npos) << r.out;
}

// Without NVML the view goes on; it says so where an NVIDIA GPU is on this host's PCI bus (its
// figures are missing), and says nothing where there is none (no NVML there is no news).
TEST(TopGpuCli, WithoutTheLibraryTheViewGoesOnAndSaysSoWhereAGpuIs) {
  const auto r = run({DLTUNE_BINARY, "top", "--once", "--interval", "100ms"},
                     {{"DLTUNE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pci = dltune::gpu::find_pci_gpus(dltune::host::Root());
  const bool nvidia =
      std::any_of(pci.begin(), pci.end(), [](const auto& g) { return g.vendor == "nvidia"; });
  const bool said = r.out.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos;
  EXPECT_EQ(said, nvidia) << r.out;
  EXPECT_EQ(r.out.find("GPU0"), std::string::npos);
}

TEST(RecordGpuCli, AGpuReadingIsStoredWithTheSamples) {
  FakeNvmlConfig fake(busy_gpus(1));
  const auto db = (fs::path(::testing::TempDir()) / fmt::format("gpu_{}.db", ::getpid())).string();
  fs::remove(db);
  const auto r =
      run({DLTUNE_BINARY, "record", "-o", db, "--interval", "100ms", "--", "/bin/sleep", "1.2"},
          {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = dltune::store::Recording::open(db);
  ASSERT_TRUE(rec) << rec.error().message();
  auto last = (*rec)->at((*rec)->size() - 1);
  ASSERT_TRUE(last);
  ASSERT_EQ(last->gpus.size(), 1u);
  EXPECT_EQ(last->gpus[0].utilization_gpu_pct, 87u);
  EXPECT_EQ(last->gpus[0].name, "NVIDIA H100 80GB HBM3");
  fs::remove(db);
}

}  // namespace top_record_gpu_cli_test

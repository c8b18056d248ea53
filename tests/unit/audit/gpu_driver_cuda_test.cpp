// gpu.driver_cuda: each torch install's CUDA against the driver, on the fixture hosts and with
// the fake NVML reporting old drivers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "gpu_hosts.hpp"
#include "inventory/host_facts.hpp"

namespace gpu_driver_cuda_test {

using namespace dltune::audit;
using dltune::inventory::HostFacts;
using dltune::testing::entry;
using dltune::testing::fixture_host;
using dltune::testing::has_note;
using dltune::testing::run;
using dltune::testing::with_nvml;
using ::testing::HasSubstr;

namespace {

constexpr const char* kGpu8 = "gpu8-numa2-cgv2";
constexpr const char* kTorchPy =
    "/opt/conda/lib/python3.11/site-packages/torch/version.py";  // 2.3.1+cu121

std::vector<Finding> judge(const HostFacts& facts, bool container = false) {
  return run(gpu_driver_cuda, facts, *fixture_host(kGpu8).root,
             entry("gpu.driver_cuda", "true", "critical"), container);
}

// The 8-GPU host with NVML reporting `driver` and `cuda` (1000 * major + 10 * minor), and its
// conda torch built for `torch_cuda`.
HostFacts host_with(const char* driver, int cuda, const char* torch_cuda = "12.1") {
  auto config = dltune::testing::fake_hgx(2);
  config["driver_version"] = driver;
  config["cuda_driver_version"] = cuda;
  auto facts = with_nvml(kGpu8, config);
  for (auto& py : facts.python.interpreters)
    if (py.torch) py.torch->cuda = torch_cuda;
  return facts;
}

}  // namespace

TEST(GpuDriverCuda, FixtureKernelModuleRunsCuda121) {
  const auto out = judge(fixture_host(kGpu8).facts);
  ASSERT_EQ(out.size(), 1u);  // /usr/bin/python3 has no torch
  const auto& f = out[0];
  EXPECT_EQ(f.id, "gpu.driver_cuda");
  EXPECT_EQ(f.area, "gpu");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_EQ(f.expected, ">= 530.30.02 (CUDA 12.1 GA)");
  EXPECT_EQ(f.actual, "535.161.07 (the kernel module)");  // no NVML: the module, not the library
  EXPECT_EQ(f.summary,
            "torch 2.3.1+cu121 in /opt/conda/bin/python (CUDA 12.1): driver 535.161.07 (the "
            "kernel module) >= 530.30.02 (CUDA 12.1 GA)");
  ASSERT_EQ(f.evidence.size(), 3u);
  EXPECT_EQ(f.evidence[0].path, kTorchPy);
  EXPECT_EQ(f.evidence[0].value, "cuda = '12.1'");
  EXPECT_EQ(f.evidence[1].path, "/proc/driver/nvidia/version");
  EXPECT_EQ(f.evidence[2].path, "knowledge/cuda-driver.toml");
  EXPECT_THAT(f.evidence[2].value, HasSubstr("CUDA 12.1: >= 530.30.02"));
  EXPECT_TRUE(has_note(f, "Table 3"));
  EXPECT_FALSE(f.fix);
}

TEST(GpuDriverCuda, NewDriverFromNvml) {
  const auto out = judge(host_with("550.54.15", 12040));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_EQ(out[0].actual, "550.54.15 (NVML)");
  EXPECT_EQ(out[0].evidence[1].path, "nvml");
  EXPECT_EQ(out[0].evidence.back().value, "the driver supports CUDA 12.4");
}

TEST(GpuDriverCuda, Driver470CannotRunCuda121) {
  const auto out = judge(host_with("470.82.01", 11040));
  ASSERT_EQ(out.size(), 1u);
  const auto& f = out[0];
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.summary,
            "torch 2.3.1+cu121 in /opt/conda/bin/python (CUDA 12.1): driver 470.82.01 is too old "
            "for CUDA 12.x (it needs >= 525.60.13): torch cannot use the GPU");
  ASSERT_TRUE(f.fix);
  EXPECT_FALSE(f.fix->by_dltune);
  EXPECT_THAT(f.fix->command, HasSubstr("install an NVIDIA driver >= 530.30.02"));
  EXPECT_TRUE(has_note(f, "The NVIDIA driver on your system is too old"));
  // 470.82.01 runs CUDA 11.4 in full: the torch build to use instead.
  EXPECT_TRUE(has_note(f, "torch build for CUDA 11.4 or older"));
  EXPECT_TRUE(has_note(f, "https://download.pytorch.org/whl/cu114"));
}

TEST(GpuDriverCuda, Driver530RunsCuda124ByMinorVersionCompatibility) {
  const auto out = judge(host_with("530.30.02", 12010, "12.4"));
  ASSERT_EQ(out.size(), 1u);
  const auto& f = out[0];
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.expected, ">= 550.54.14 (CUDA 12.4 GA)");
  EXPECT_THAT(f.summary, HasSubstr("runs CUDA 12.4 only by minor version compatibility"));
  EXPECT_TRUE(has_note(f, "PTX"));
  ASSERT_TRUE(f.fix);
  EXPECT_THAT(f.fix->command, HasSubstr(">= 550.54.14"));
}

TEST(GpuDriverCuda, Cuda13NeedsDriver580) {
  const auto out = judge(host_with("575.57.08", 12090, "13.0"));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].severity, Severity::kCritical);
  EXPECT_THAT(out[0].summary, HasSubstr("too old for CUDA 13.x (it needs >= 580)"));
  // The fixture's cu12 wheels beside a torch now said to be for CUDA 13 (cuda_wheels_test.cpp
  // has the wheel findings in detail).
  EXPECT_EQ(out[1].severity, Severity::kCritical);
  EXPECT_EQ(out[1].summary,
            "torch 2.3.1+cu121 in /opt/conda/bin/python (CUDA 13.0) has wheels built for CUDA 12: "
            "nvidia-cudnn-cu12 8.9.2.26 (no nvidia-cudnn-cu13), nvidia-nccl-cu12 2.20.5 (no "
            "nvidia-nccl-cu13)");
}

TEST(GpuDriverCuda, ACudaNotInTheTableIsDecidedByNvml) {
  // No CUDA 12.7 ever shipped, so the table has no row; NVML says the driver runs 12.8.
  auto out = judge(host_with("570.124.06", 12080, "12.7"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kOk);
  EXPECT_THAT(out[0].summary, HasSubstr("supports CUDA 12.8"));
  // NVML says the driver runs 12.6 only: minor version compatibility, and no known target.
  out = judge(host_with("560.35.03", 12060, "12.7"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kWarn);
  ASSERT_TRUE(out[0].fix);
  EXPECT_EQ(out[0].fix->command, "install an NVIDIA driver that supports CUDA 12.7, then reboot");
  // Without NVML, the table alone cannot tell.
  auto facts = fixture_host(kGpu8).facts;
  for (auto& py : facts.python.interpreters)
    if (py.torch) py.torch->cuda = "12.7";
  out = judge(facts);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_THAT(out[0].summary, HasSubstr("not in dltune's table"));
}

TEST(GpuDriverCuda, CpuBuildHasNothingToCheck) {
  auto facts = fixture_host(kGpu8).facts;
  for (auto& py : facts.python.interpreters)
    if (py.torch) {
      py.torch->cuda_build = false;
      py.torch->cuda.reset();
    }
  const auto out = judge(facts);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_TRUE(out[0].applicable);
  EXPECT_THAT(out[0].summary, HasSubstr("torch is a CPU build"));
}

TEST(GpuDriverCuda, NoTorchIsNotApplicable) {
  const auto& h = fixture_host("container-cgv2");
  const auto out =
      run(gpu_driver_cuda, h.facts, *h.root, entry("gpu.driver_cuda", "true", "critical"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].applicable);
  EXPECT_THAT(out[0].summary, HasSubstr("no Python interpreter has torch"));
}

TEST(GpuDriverCuda, InAContainerTheHostInstallsTheDriver) {
  const auto out = judge(host_with("470.82.01", 11040), /*container=*/true);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(has_note(out[0], "the host must"));
}

}  // namespace gpu_driver_cuda_test

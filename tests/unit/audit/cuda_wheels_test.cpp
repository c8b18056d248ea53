// gpu.driver_cuda's wheel half (audit/cuda_wheels.hpp): a Python install made by hand in a
// temporary tree (torch's version.py and METADATA, nvidia-* dist-info directories), read by the
// inventory as on a host, on the 8-GPU fixture's GPUs and driver.
#include "audit/cuda_wheels.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "gpu_hosts.hpp"
#include "inventory/host_facts.hpp"
#include "inventory/python.hpp"
#include "support/temp_tree.hpp"

namespace cuda_wheels_test {

using namespace dltune::audit;
using dltune::testing::entry;
using dltune::testing::fixture_host;
using dltune::testing::has_note;
using ::testing::HasSubstr;

namespace {

constexpr const char* kSite = "opt/py/lib/python3.11/site-packages/";
constexpr const char* kSiteAbs = "/opt/py/lib/python3.11/site-packages/";

class CudaWheels : public ::testing::Test {
 protected:
  CudaWheels() { tree_.write("opt/py/bin/python", ""); }

  // torch's version.py (cuda = None for `cuda` null) and its METADATA with `requires`.
  void torch(const std::string& version, const char* cuda, const std::string& requires_dist) {
    tree_.write(std::string(kSite) + "torch/version.py",
                "__version__ = '" + version + "'\ncuda: Optional[str] = " +
                    (cuda ? "'" + std::string(cuda) + "'" : std::string("None")) + "\n");
    tree_.write(std::string(kSite) + "torch-" + version + ".dist-info/METADATA",
                "Metadata-Version: 2.1\nName: torch\nVersion: " + version + "\n" + requires_dist);
  }
  // torch 2.3.1 for CUDA 12.1 as PyPI ships it: cuDNN 8.9.2.26 and NCCL 2.20.5 pinned.
  void torch_cu121() {
    torch("2.3.1+cu121", "12.1",
          "Requires-Dist: nvidia-cublas-cu12 (==12.1.3.1) ; platform_system == \"Linux\"\n"
          "Requires-Dist: nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == \"Linux\"\n"
          "Requires-Dist: nvidia-nccl-cu12 (==2.20.5) ; platform_system == \"Linux\"\n");
  }
  // A wheel's dist-info directory: "nvidia_cudnn_cu12-8.9.2.26".
  void wheel(const std::string& dir_name) {
    tree_.write(std::string(kSite) + dir_name + ".dist-info/METADATA", "");
  }
  void torch_wheels() {
    wheel("nvidia_cublas_cu12-12.1.3.1");
    wheel("nvidia_cudnn_cu12-8.9.2.26");
    wheel("nvidia_nccl_cu12-2.20.5");
  }

  // gpu.driver_cuda's findings after the driver's (which says `driver_says`: 535.161.07 runs
  // CUDA 12.1): the wheels'.
  std::vector<Finding> check(const std::string& driver_says = "driver 535.161.07") {
    const auto root = tree_.root();
    dltune::inventory::Context ctx(root, {{"PATH", "/opt/py/bin"}});
    auto facts = fixture_host("gpu8-numa2-cgv2").facts;
    facts.python = dltune::inventory::collect_python(ctx);
    EXPECT_EQ(facts.python.interpreters.size(), 1u);
    auto out = dltune::testing::run(gpu_driver_cuda, facts, root,
                                    entry("gpu.driver_cuda", "true", "critical"));
    EXPECT_GE(out.size(), 1u);
    if (!out.empty()) {
      EXPECT_THAT(out[0].summary, HasSubstr(driver_says));
      out.erase(out.begin());
    }
    return out;
  }

  dltune::testing::TempTree tree_;
};

}  // namespace

TEST_F(CudaWheels, WheelsForTorchsCudaAtItsPinsSayNothing) {
  torch_cu121();
  torch_wheels();
  wheel("nvidia_cuda_runtime_cu12-12.1.105");  // not pinned: any version
  wheel("nvidia_dali_cuda120-1.38.0");         // not an nvidia-<lib>-cu<major> name
  wheel("nvidia_cuda_runtime-13.0.48");        // CUDA 13's names carry no major
  EXPECT_TRUE(check().empty());
}

TEST_F(CudaWheels, Cu11WheelBesideTorchsCu12OneIsCritical) {
  torch_cu121();
  torch_wheels();
  wheel("nvidia_cudnn_cu11-8.7.0.84");
  const auto out = check();
  ASSERT_EQ(out.size(), 1u);
  const auto& f = out[0];
  EXPECT_EQ(f.id, "gpu.driver_cuda");
  EXPECT_EQ(f.area, "gpu");
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.summary,
            "torch 2.3.1+cu121 in /opt/py/bin/python (CUDA 12.1) has a wheel built for CUDA 11: "
            "nvidia-cudnn-cu11 8.7.0.84 (beside nvidia-cudnn-cu12 8.9.2.26)");
  EXPECT_EQ(f.expected, "nvidia-*-cu12 wheels only (torch's CUDA 12.1)");
  EXPECT_EQ(f.actual, "nvidia-cudnn-cu11 8.7.0.84");
  ASSERT_EQ(f.evidence.size(), 3u);
  EXPECT_EQ(f.evidence[0].path, std::string(kSiteAbs) + "torch/version.py");
  EXPECT_EQ(f.evidence[0].value, "cuda = '12.1'");
  EXPECT_EQ(f.evidence[1].path, std::string(kSiteAbs) + "nvidia_cudnn_cu11-8.7.0.84.dist-info");
  EXPECT_EQ(f.evidence[2].value, "nvidia-cudnn-cu12 8.9.2.26");
  EXPECT_TRUE(has_note(f, "libcudnn.so.8 in both"));
  EXPECT_TRUE(has_note(f, "/opt/py/bin/python -m pip show nvidia-cudnn-cu11"));
  EXPECT_TRUE(has_note(f, "Uninstall first"));
  ASSERT_TRUE(f.fix);
  EXPECT_FALSE(f.fix->by_dltune);
  EXPECT_EQ(f.fix->command,
            "/opt/py/bin/python -m pip uninstall -y nvidia-cudnn-cu11 && /opt/py/bin/python -m "
            "pip install --force-reinstall --no-deps nvidia-cudnn-cu12==8.9.2.26");
}

TEST_F(CudaWheels, Cu11WheelsWithoutTorchsOwnReinstallTorchFromItsIndex) {
  // A torch for CUDA 11.8 replaced by one for 12.1 whose wheels did not all install.
  torch_cu121();
  wheel("nvidia_cublas_cu12-12.1.3.1");
  wheel("nvidia_nccl_cu12-2.20.5");
  wheel("nvidia_cublas_cu11-11.11.3.6");
  wheel("nvidia_cudnn_cu11-8.7.0.84");
  const auto out = check();
  ASSERT_EQ(out.size(), 1u);
  const auto& f = out[0];
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.summary,
            "torch 2.3.1+cu121 in /opt/py/bin/python (CUDA 12.1) has wheels built for CUDA 11: "
            "nvidia-cublas-cu11 11.11.3.6 (beside nvidia-cublas-cu12 12.1.3.1), "
            "nvidia-cudnn-cu11 8.7.0.84 (no nvidia-cudnn-cu12)");
  EXPECT_EQ(f.actual, "nvidia-cublas-cu11 11.11.3.6, nvidia-cudnn-cu11 8.7.0.84");
  ASSERT_TRUE(f.fix);
  EXPECT_EQ(f.fix->command,
            "/opt/py/bin/python -m pip uninstall -y nvidia-cublas-cu11 nvidia-cudnn-cu11 && "
            "/opt/py/bin/python -m pip install --force-reinstall torch==2.3.1 --index-url "
            "https://download.pytorch.org/whl/cu121");
  EXPECT_TRUE(has_note(f, "cannot open shared object file"));
}

TEST_F(CudaWheels, AWheelTorchDoesNotLoadIsAWarning) {
  torch_cu121();
  torch_wheels();
  wheel("nvidia_nvimgcodec_cu11-0.2.0.7");
  const auto out = check();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kWarn);
  EXPECT_THAT(out[0].summary,
              HasSubstr("nvidia-nvimgcodec-cu11 0.2.0.7 (no nvidia-nvimgcodec-cu12)"));
  EXPECT_TRUE(has_note(out[0], "torch does not load these libraries itself"));
  ASSERT_TRUE(out[0].fix);
  EXPECT_EQ(out[0].fix->command, "/opt/py/bin/python -m pip uninstall -y nvidia-nvimgcodec-cu11");
}

TEST_F(CudaWheels, CudnnOtherThanThePinIsAWarning) {
  torch_cu121();
  wheel("nvidia_cublas_cu12-12.1.3.1");
  wheel("nvidia_cudnn_cu12-8.9.7.29");
  wheel("nvidia_nccl_cu12-2.20.5");
  const auto out = check();
  ASSERT_EQ(out.size(), 1u);
  const auto& f = out[0];
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.summary,
            "torch 2.3.1+cu121 in /opt/py/bin/python pins nvidia-cudnn-cu12 8.9.2.26, and "
            "8.9.7.29 is installed");
  EXPECT_EQ(f.expected, "nvidia-cudnn-cu12 8.9.2.26 (torch's Requires-Dist)");
  EXPECT_EQ(f.actual, "nvidia-cudnn-cu12 8.9.7.29");
  ASSERT_EQ(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[0].path, std::string(kSiteAbs) + "torch-2.3.1+cu121.dist-info/METADATA");
  EXPECT_EQ(f.evidence[0].value, "Requires-Dist: nvidia-cudnn-cu12==8.9.2.26");
  EXPECT_TRUE(has_note(f, "pip check"));
  ASSERT_TRUE(f.fix);
  EXPECT_EQ(f.fix->command, "/opt/py/bin/python -m pip install nvidia-cudnn-cu12==8.9.2.26");
}

TEST_F(CudaWheels, CudnnOlderOrOfAnotherMajorThanThePinIsCritical) {
  torch_cu121();
  wheel("nvidia_cudnn_cu12-8.7.0.84");
  wheel("nvidia_nccl_cu12-2.20.5");
  auto out = check();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kCritical);
  EXPECT_TRUE(has_note(
      out[0], "PyTorch was compiled against (8, 9, 2) but found runtime version (8, 7, 0)"));

  std::filesystem::remove_all(tree_.dir() / kSite / "nvidia_cudnn_cu12-8.7.0.84.dist-info");
  wheel("nvidia_cudnn_cu12-9.1.0.70");
  out = check();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kCritical);
  EXPECT_THAT(out[0].summary, HasSubstr("pins nvidia-cudnn-cu12 8.9.2.26, and 9.1.0.70"));
  EXPECT_TRUE(has_note(out[0], "\"libcudnn.so.8: cannot open shared object file\""));
}

TEST_F(CudaWheels, NcclOtherThanThePinIsAWarning) {
  torch_cu121();
  wheel("nvidia_cudnn_cu12-8.9.2.26");
  wheel("nvidia_nccl_cu12-2.18.1");
  const auto out = check();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kWarn);
  EXPECT_EQ(out[0].summary,
            "torch 2.3.1+cu121 in /opt/py/bin/python pins nvidia-nccl-cu12 2.20.5, and 2.18.1 is "
            "installed");
  EXPECT_TRUE(has_note(out[0], "libnccl.so.2"));
}

TEST_F(CudaWheels, ATorchWarningNeverExceedsTheProfilesSeverity) {
  torch_cu121();
  torch_wheels();
  wheel("nvidia_cudnn_cu11-8.7.0.84");
  const auto root = tree_.root();
  dltune::inventory::Context ctx(root, {{"PATH", "/opt/py/bin"}});
  const auto python = dltune::inventory::collect_python(ctx);
  ASSERT_EQ(python.interpreters.size(), 1u);
  const auto out =
      judge_cuda_wheels(entry("gpu.driver_cuda", "true", "info"), python.interpreters[0]);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
}

TEST_F(CudaWheels, CpuTorchHasNothingToSay) {
  torch("2.3.1+cpu", nullptr, "Requires-Dist: filelock\n");
  wheel("nvidia_cudnn_cu11-8.7.0.84");
  wheel("nvidia_cudnn_cu12-8.9.2.26");
  EXPECT_TRUE(check("torch is a CPU build").empty());
}

TEST_F(CudaWheels, TorchWithoutNvidiaWheelsHasNothingToSay) {
  // A torch built from source (or one that keeps cuDNN in torch/lib): no nvidia-* requirement,
  // and the cu11 wheel beside it is another package's.
  torch("2.3.0a0+git1234", "12.1", "Requires-Dist: filelock\n");
  wheel("nvidia_cudnn_cu11-8.7.0.84");
  EXPECT_TRUE(check().empty());
}

TEST_F(CudaWheels, AVenvSharingTorchIsJudgedOnceWithTheBasesPip) {
  torch_cu121();
  torch_wheels();
  wheel("nvidia_cudnn_cu11-8.7.0.84");
  tree_.link("home/u/env/bin/python", "/opt/py/bin/python");
  tree_.write("home/u/env/pyvenv.cfg",
              "home = /opt/py/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n");
  // Not beside torch: torch does not load it, and it shares no directory with torch's NCCL.
  tree_.write("home/u/env/lib/python3.11/site-packages/nvidia_nccl_cu11-2.19.3.dist-info/RECORD",
              "");
  const auto root = tree_.root();
  dltune::inventory::Context ctx(
      root, {{"PATH", "/home/u/env/bin:/opt/py/bin"}, {"VIRTUAL_ENV", "/home/u/env"}});
  auto facts = fixture_host("gpu8-numa2-cgv2").facts;
  facts.python = dltune::inventory::collect_python(ctx);
  ASSERT_EQ(facts.python.interpreters.size(), 2u);
  EXPECT_EQ(facts.python.interpreters[0].path, "/home/u/env/bin/python");
  const auto out = dltune::testing::run(gpu_driver_cuda, facts, root,
                                        entry("gpu.driver_cuda", "true", "critical"));
  ASSERT_EQ(out.size(), 2u);  // the driver's, and the stray beside torch once
  EXPECT_EQ(out[1].severity, Severity::kCritical);
  EXPECT_EQ(out[1].actual, "nvidia-cudnn-cu11 8.7.0.84");
  // The venv's pip refuses to uninstall what is outside it: the fix uses the base's.
  ASSERT_TRUE(out[1].fix);
  EXPECT_THAT(out[1].fix->command,
              ::testing::StartsWith("/opt/py/bin/python -m pip uninstall -y nvidia-cudnn-cu11"));
}

}  // namespace cuda_wheels_test

#include "inventory/cuda.hpp"
#include "support/build_paths.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "support/temp_tree.hpp"

namespace cuda_test {

namespace fs = std::filesystem;
using dltune::host::Root;
using dltune::inventory::BlasFinding;
using dltune::inventory::collect_cuda;
using dltune::inventory::collect_python;
using dltune::inventory::Context;
using dltune::inventory::CudaFacts;
using dltune::inventory::VersionFinding;
using Env = std::map<std::string, std::string>;

namespace {

class CudaTree : public ::testing::Test {
 protected:
  void write(const std::string& rel, const std::string& content = "") { tree_.write(rel, content); }
  void link(const std::string& rel, const std::string& target) { tree_.link(rel, target); }
  CudaFacts collect(const Env& env) {
    auto r = Root::at(tree_.dir());
    EXPECT_TRUE(r.has_value()) << r.error().message();
    root_ = *r;
    ctx_ = std::make_unique<Context>(root_, env);
    return collect_cuda(*ctx_, collect_python(*ctx_));
  }
  dltune::testing::TempTree tree_;
  Root root_;
  std::unique_ptr<Context> ctx_;
};

std::vector<std::string> describe(const std::vector<VersionFinding>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.version.value_or("-") + " " + x.path + " " + x.source);
  return out;
}

std::vector<std::string> describe(const std::vector<BlasFinding>& v) {
  std::vector<std::string> out;
  for (const auto& b : v)
    out.push_back(b.name + " " + b.version.value_or("-") + " " + b.path + " " + b.source + " " +
                  b.selected_as.value_or("-"));
  return out;
}

}  // namespace

TEST_F(CudaTree, CudaHOnlyToolkitAndAnNvccWrapperScript) {
  // A toolkit assembled from wheels, as on the dev VM: no version file, cuda.h says 12.2.
  write("usr/local/cuda-12.2/include/cuda.h",
        "/* header */\n#define __cuda_cuda_h__\n\n#define CUDA_VERSION 12020\n");
  write("usr/local/cuda-12.2/bin/nvcc");
  write("usr/local/bin/nvcc", "#!/bin/sh\nexec /usr/local/cuda-12.2/bin/nvcc \"$@\"\n");
  write("usr/local/cuda-10.1/version.json", "{\"cuda\": ");  // garbled: a problem, no version
  write("usr/local/cuda-10.1/include/cuda.h", "#define CUDA_VERSION 10010\n");
  fs::create_directories(tree_.dir() / "usr/local/cuda-docs");  // not a toolkit
  const auto f =
      collect({{"PATH", "/usr/local/bin:/usr/bin"}, {"CUDA_PATH", "/usr/local/cuda-12.2/"}});
  ASSERT_EQ(f.toolkits.size(), 2u);
  const auto& old = f.toolkits[0];
  EXPECT_EQ(old.path, "/usr/local/cuda-10.1");
  EXPECT_EQ(old.version, "10.1");  // cuda.h after the garbled version.json
  EXPECT_EQ(old.version_source, "cuda.h");
  const auto& t = f.toolkits[1];
  EXPECT_EQ(t.path, "/usr/local/cuda-12.2");
  EXPECT_EQ(t.version, "12.2");
  EXPECT_EQ(t.version_source, "cuda.h");
  EXPECT_EQ(t.nvcc, "/usr/local/cuda-12.2/bin/nvcc");
  ASSERT_EQ(t.found_via.size(), 3u);
  EXPECT_EQ(t.found_via[0].how, "directory");
  EXPECT_EQ(t.found_via[1].how, "CUDA_PATH");
  EXPECT_EQ(t.found_via[1].path, "/usr/local/cuda-12.2");
  EXPECT_EQ(t.found_via[2].how, "PATH");
  EXPECT_EQ(t.found_via[2].path, "/usr/local/bin/nvcc");
  ASSERT_EQ(ctx_->problems().size(), 1u);
  EXPECT_EQ(ctx_->problems()[0].path, "/usr/local/cuda-10.1/version.json");
  EXPECT_EQ(ctx_->problems()[0].fact, "cuda.toolkit");
}

TEST_F(CudaTree, CudnnNcclAndBlasFromHeadersAndLibraryNames) {
  // cuDNN 7 kept its version in cudnn.h; NCCL from the distribution's packages.
  write("usr/include/cudnn.h",
        "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n");
  write("usr/include/nccl.h",
        "#define NCCL_MAJOR 2\n#define NCCL_MINOR 18\n#define NCCL_PATCH 1\n"
        "#define NCCL_SUFFIX \"\"\n");
  write("usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7");
  link("usr/lib/x86_64-linux-gnu/libcudnn.so.8", "libcudnn.so.8.9.7");
  link("usr/lib/x86_64-linux-gnu/libcudnn.so", "libcudnn.so.8");
  write("usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8.9.7");
  write("usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0");
  link("usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "libblas.so.3.11.0");
  link("etc/alternatives/libblas.so.3-x86_64-linux-gnu",
       "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3");
  link("usr/lib/x86_64-linux-gnu/libblas.so.3", "/etc/alternatives/libblas.so.3-x86_64-linux-gnu");
  write("opt/nccl/lib/libnccl.so.2.21.5");  // only through LD_LIBRARY_PATH
  // A venv-less Python whose numpy bundles OpenBLAS and which has NVIDIA's wheels.
  write("usr/bin/python3.11");
  write("usr/lib/python3.11/site-packages/numpy.libs/libopenblas64_p-r0.3.23.so");
  write("usr/lib/python3.11/site-packages/nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA");
  write("usr/lib/python3.11/site-packages/nvidia_cuda_runtime_cu12-12.1.105.dist-info/METADATA");
  write("usr/lib/python3.11/site-packages/mkl-2024.0.0.dist-info/METADATA");
  const auto f = collect({{"PATH", "/usr/bin"}, {"LD_LIBRARY_PATH", "/opt/nccl/lib:/nonexistent"}});
  EXPECT_TRUE(f.toolkits.empty());
  EXPECT_EQ(describe(f.cudnn), (std::vector<std::string>{
                                   "7.6.5 /usr/include/cudnn.h header",
                                   "8.9.7 /usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7 library"}));
  EXPECT_EQ(describe(f.nccl),
            (std::vector<std::string>{"2.18.1 /usr/include/nccl.h header",
                                      "2.21.5 /opt/nccl/lib/libnccl.so.2.21.5 library"}));
  ASSERT_EQ(f.python_packages.size(), 2u);
  EXPECT_EQ(f.python_packages[0].interpreter, "/usr/bin/python3.11");
  EXPECT_EQ(f.python_packages[0].name, "nvidia-cuda-runtime-cu12");
  EXPECT_EQ(f.python_packages[0].version, "12.1.105");
  EXPECT_EQ(f.python_packages[1].name, "nvidia-cudnn-cu12");
  EXPECT_EQ(f.python_packages[1].path,
            "/usr/lib/python3.11/site-packages/nvidia_cudnn_cu12-9.1.0.70.dist-info");
  EXPECT_EQ(
      describe(f.blas),
      (std::vector<std::string>{
          "MKL 2024.0.0 /usr/lib/python3.11/site-packages/mkl-2024.0.0.dist-info dist-info -",
          "OpenBLAS 0.3.23 /usr/lib/python3.11/site-packages/numpy.libs/libopenblas64_p-r0.3.23.so "
          "library -",
          "reference BLAS 3.11.0 /usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0 library "
          "/usr/lib/x86_64-linux-gnu/libblas.so.3"}));
  EXPECT_TRUE(ctx_->problems().empty());
}

TEST_F(CudaTree, NothingThereIsNothingReported) {
  const auto f = collect({{"PATH", "/usr/bin"}, {"CUDA_HOME", "/tmp/cuda"}});
  EXPECT_TRUE(f.toolkits.empty() && f.cudnn.empty() && f.nccl.empty() && f.blas.empty());
  EXPECT_TRUE(ctx_->problems().empty());
  EXPECT_EQ(to_json(f).dump(),
            R"({"toolkits":[],"cudnn":[],"nccl":[],"python_packages":[],"blas":[]})");
  EXPECT_TRUE(dltune::text::render_sections(render_cuda(f)).empty());
}

// The hand-made 8-GPU host: CUDA 12.4 (the default) and 11.8, cuDNN 9.1.0, NCCL 2.21.5, Debian's
// OpenBLAS as the system BLAS, a conda env with MKL and torch's NVIDIA wheels.
TEST(CudaFixture, Gpu8Numa2) {
  auto root = Root::at(std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2");
  ASSERT_TRUE(root.has_value()) << root.error().message();
  Context ctx(*root, {{"PATH",
                       "/opt/conda/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/"
                       "bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                      {"CONDA_PREFIX", "/opt/conda"},
                      {"CUDA_HOME", "/usr/local/cuda"}});
  const auto f = collect_cuda(ctx, collect_python(ctx));
  ASSERT_EQ(f.toolkits.size(), 2u);
  const auto& t = f.toolkits[0];
  EXPECT_EQ(t.path, "/usr/local/cuda-12.4");
  EXPECT_EQ(t.version, "12.4.1");
  EXPECT_EQ(t.version_source, "version.json");
  std::vector<std::string> via;
  for (const auto& v : t.found_via) via.push_back(v.how + " " + v.path);
  EXPECT_EQ(via, (std::vector<std::string>{"link /usr/local/cuda", "directory /usr/local/cuda-12.4",
                                           "CUDA_HOME /usr/local/cuda",
                                           "PATH /usr/local/cuda/bin/nvcc"}));
  EXPECT_EQ(f.toolkits[1].path, "/usr/local/cuda-11.8");
  EXPECT_EQ(f.toolkits[1].version, "11.8.89");
  EXPECT_EQ(f.toolkits[1].version_source, "version.txt");
  EXPECT_EQ(f.toolkits[1].nvcc, std::nullopt);
  EXPECT_EQ(describe(f.cudnn), (std::vector<std::string>{
                                   "9.1.0 /usr/local/cuda-12.4/include/cudnn_version.h header",
                                   "9.1.0 /usr/local/cuda-12.4/lib64/libcudnn.so.9.1.0 library"}));
  EXPECT_EQ(describe(f.nccl),
            std::vector<std::string>{"2.21.5 /usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5 library"});
  ASSERT_EQ(f.python_packages.size(), 2u);
  EXPECT_EQ(f.python_packages[0].interpreter, "/opt/conda/bin/python");
  EXPECT_EQ(f.python_packages[0].name, "nvidia-cudnn-cu12");
  EXPECT_EQ(f.python_packages[0].version, "8.9.2.26");
  EXPECT_EQ(f.python_packages[1].name, "nvidia-nccl-cu12");
  EXPECT_EQ(f.python_packages[1].version, "2.20.5");
  EXPECT_EQ(
      describe(f.blas),
      (std::vector<std::string>{
          "OpenBLAS 0.3.21 /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so "
          "library /usr/lib/x86_64-linux-gnu/libblas.so.3",
          "MKL 2 /opt/conda/lib/libmkl_rt.so.2 library -",
          "MKL 2023.1.0 /opt/conda/lib/python3.11/site-packages/mkl-2023.1.0.dist-info "
          "dist-info -"}));
  EXPECT_TRUE(ctx.problems().empty());

  const auto j = to_json(f);
  EXPECT_EQ(j["toolkits"][0]["found_via"][0]["how"], "link");
  EXPECT_EQ(j["cudnn"][0]["version"], "9.1.0");
  EXPECT_EQ(j["python_packages"][0]["interpreter"], "/opt/conda/bin/python");
  EXPECT_EQ(j["blas"][0]["selected_as"], "/usr/lib/x86_64-linux-gnu/libblas.so.3");
  EXPECT_FALSE(j["blas"][1].contains("selected_as"));
  const auto text = dltune::text::render_sections(render_cuda(f));
  for (const char* line :
       {"toolkit  12.4.1   /usr/local/cuda-12.4 (from version.json; via /usr/local/cuda, "
        "CUDA_HOME, nvcc on PATH)",
        "toolkit  11.8.89  /usr/local/cuda-11.8 (from version.txt)",
        "cuDNN    9.1.0    /usr/local/cuda-12.4/include/cudnn_version.h (header)",
        "BLAS     OpenBLAS 0.3.21  /usr/lib/x86_64-linux-gnu/openblas-pthread/",
        "         MKL 2            /opt/conda/lib/libmkl_rt.so.2\n",
        "wheels   /opt/conda/bin/python: nvidia-cudnn-cu12 8.9.2.26, nvidia-nccl-cu12 2.20.5"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

}  // namespace cuda_test

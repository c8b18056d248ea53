#include "host/parse/cuda_files.hpp"
#include "core/json.hpp"

#include <gtest/gtest.h>

namespace cuda_files_test {

namespace p = dltune::host::parse;

namespace {
template <class R>
std::string value(const R& r) {
  EXPECT_TRUE(r.has_value()) << r.error().message();
  if (!r || !*r) return "<none>";
  return **r;
}
}  // namespace

TEST(CudaVersionJson, ReadsTheSdkVersion) {
  // /usr/local/cuda-12.4/version.json (CUDA 12.4 update 1), shortened.
  const char* text = R"({
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "12.4.1"
   },
   "cuda_cccl" : {
      "name" : "CUDA C++ Core Compute Libraries",
      "version" : "12.4.127"
   }
})";
  EXPECT_EQ(value(p::cuda_version_json(text)), "12.4.1");
  EXPECT_EQ(value(p::cuda_version_json(R"({"cuda_cudart": {"version": "12.4.127"}})")), "<none>");
  EXPECT_FALSE(p::cuda_version_json("{\"cuda\": {\"version\": ").has_value());
  EXPECT_FALSE(p::cuda_version_json(R"({"cuda": {"version": 12.4}})").has_value());
  EXPECT_FALSE(p::cuda_version_json(R"({"cuda": {"version": "twelve"}})").has_value());
  EXPECT_FALSE(p::cuda_version_json("[1, 2]").has_value());
}

TEST(CudaVersionTxt, ReadsTheFirstVersionLine) {
  EXPECT_EQ(value(p::cuda_version_txt("CUDA Version 11.8.89\n")), "11.8.89");
  EXPECT_EQ(value(p::cuda_version_txt("CUDA Version 10.2.89")), "10.2.89");  // no newline
  EXPECT_EQ(value(p::cuda_version_txt("\r\nCUDA Version 9.0.176\r\n")), "9.0.176");
  EXPECT_EQ(value(p::cuda_version_txt("")), "<none>");
  const auto bad = p::cuda_version_txt("x\nCUDA Version eleven\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().what.find("line 2"), std::string::npos) << bad.error().what;
}

TEST(CudaH, TurnsCudaVersionIntoMajorMinor) {
  // cuda.h of CUDA 13.0, line 263, and of 12.4 and 11.8.
  EXPECT_EQ(value(p::cuda_h_version("#define __cuda_cuda_h__\n#define CUDA_VERSION 13000\n")),
            "13.0");
  EXPECT_EQ(value(p::cuda_h_version("#define CUDA_VERSION 12040\n")), "12.4");
  EXPECT_EQ(value(p::cuda_h_version("#define CUDA_VERSION 11080")), "11.8");
  EXPECT_EQ(value(p::cuda_h_version("#define CUDA_VERSION 12020U\n")), "12.2");
  EXPECT_EQ(value(p::cuda_h_version("#define CUDA_VERSION_MAJOR 13\n")), "<none>");
  const auto bad = p::cuda_h_version("\n\n#define CUDA_VERSION __CUDA_API_VER\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().what.find("line 3"), std::string::npos) << bad.error().what;
  EXPECT_NE(bad.error().what.find("CUDA_VERSION"), std::string::npos);
}

TEST(CudnnH, ReadsMajorMinorPatchFromEitherHeader) {
  // cudnn_version.h (cuDNN >= 8).
  EXPECT_EQ(value(p::cudnn_h_version("#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
                                     "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n"
                                     "#define CUDNN_PATCHLEVEL 0\n\n"
                                     "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR "
                                     "* 100 + CUDNN_PATCHLEVEL)\n")),
            "9.19.0");
  // cudnn.h of cuDNN 7.6, where the version lived before cudnn_version.h existed.
  EXPECT_EQ(value(p::cudnn_h_version("#if !defined(CUDNN_H_)\n#define CUDNN_H_\n\n"
                                     "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n"
                                     "#define CUDNN_PATCHLEVEL 5\n\n"
                                     "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * "
                                     "100 + CUDNN_PATCHLEVEL)\n\n#include \"driver_types.h\"\n")),
            "7.6.5");
  // cudnn.h of cuDNN 8+: includes cudnn_version.h, says nothing itself.
  EXPECT_EQ(value(p::cudnn_h_version("#include \"cudnn_version.h\"\n#include \"cudnn_ops.h\"\n")),
            "<none>");
  EXPECT_FALSE(p::cudnn_h_version("#define CUDNN_MAJOR 9\n").has_value());  // no minor
  EXPECT_FALSE(p::cudnn_h_version("#define CUDNN_MAJOR nine\n#define CUDNN_MINOR 1\n").has_value());
}

TEST(NcclH, ReadsPartsAndSuffix) {
  // nccl.h of NCCL 2.28.9 (CUDA 13.0 wheel), lines 19-24.
  EXPECT_EQ(value(p::nccl_h_version("#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n"
                                    "#define NCCL_PATCH 9\n#define NCCL_SUFFIX \"\"\n\n"
                                    "#define NCCL_VERSION_CODE 22809\n"
                                    "#define NCCL_VERSION(X,Y,Z) ((X) <= 2 && (Y) <= 8) ? (X) * "
                                    "1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))\n")),
            "2.28.9");
  EXPECT_EQ(value(p::nccl_h_version("#define NCCL_MAJOR 2\n#define NCCL_MINOR 19\n"
                                    "#define NCCL_PATCH 3\n#define NCCL_SUFFIX \"a0\"\n")),
            "2.19.3a0");
  // Only the code: both encodings (2.8.4 -> 2804, 2.21.5 -> 22105).
  EXPECT_EQ(value(p::nccl_h_version("#define NCCL_VERSION_CODE 2804\n")), "2.8.4");
  EXPECT_EQ(value(p::nccl_h_version("#define NCCL_VERSION_CODE 22105\n")), "2.21.5");
  EXPECT_EQ(value(p::nccl_h_version("#include <cuda_runtime.h>\n")), "<none>");
  EXPECT_FALSE(p::nccl_h_version("#define NCCL_MAJOR 2\n#define NCCL_MINOR x\n").has_value());
  EXPECT_FALSE(p::nccl_h_version("#define NCCL_MAJOR 2\n").has_value());
}

TEST(LibraryVersion, TakesOnlyDottedNumbersAfterTheStem) {
  EXPECT_EQ(p::library_version("libcudnn.so.8.9.7", "libcudnn"), "8.9.7");
  EXPECT_EQ(p::library_version("libcudnn.so.9.1.0", "libcudnn"), "9.1.0");
  EXPECT_EQ(p::library_version("libcudnn.so.9", "libcudnn"), "9");
  EXPECT_EQ(p::library_version("libcudnn.so", "libcudnn"), "");
  EXPECT_EQ(p::library_version("libnccl.so.2.21.5", "libnccl"), "2.21.5");
  EXPECT_EQ(p::library_version("libmkl_rt.so.2", "libmkl_rt"), "2");
  EXPECT_EQ(p::library_version("libblas.so.3.11.0", "libblas"), "3.11.0");
  EXPECT_EQ(p::library_version("libcudnn_ops.so.9", "libcudnn"), std::nullopt);
  EXPECT_EQ(p::library_version("libnccl_static.a", "libnccl"), std::nullopt);
  EXPECT_EQ(p::library_version("libnccl.so.2.21.5.bak", "libnccl"), std::nullopt);
  EXPECT_EQ(p::library_version("libnccl.so.2..1", "libnccl"), std::nullopt);
  EXPECT_EQ(p::library_version("libnccl.so.", "libnccl"), std::nullopt);
  EXPECT_EQ(p::library_version("libnccl.sox", "libnccl"), std::nullopt);
}

TEST(OpenblasVersion, FindsTheReleaseInBuildNames) {
  EXPECT_EQ(p::openblas_version("libopenblasp-r0.3.21.so"), "0.3.21");  // Debian pthread
  EXPECT_EQ(p::openblas_version("libopenblaso-r0.3.26.so"), "0.3.26");  // OpenMP
  EXPECT_EQ(p::openblas_version("libopenblas64_p-r0.3.21.so"), "0.3.21");
  EXPECT_EQ(p::openblas_version("libopenblas.so.0"), "");
  EXPECT_EQ(p::openblas_version("libopenblas64_p-r0-0cf96a72.3.23.dev.so"), "");  // numpy wheel
  EXPECT_EQ(p::openblas_version("libscipy_openblas64_-99b71e71.so"), "");
  EXPECT_EQ(p::openblas_version("libopenblas.a"), std::nullopt);
  EXPECT_EQ(p::openblas_version("libblas.so.3"), std::nullopt);
}

TEST(CudaFiles, AnOpenblasNameLongerThanAFileNameCanBeIsRefusedBeforeTheRegex) {
  // fuzz_versions: std::regex recursed per character of a 44 KB "name".
  const std::string huge = "libopenblasp-r0.3.21.so" + std::string(50000, '9');
  EXPECT_FALSE(p::openblas_version(huge));
  EXPECT_EQ(p::openblas_version("libopenblasp-r0.3.21.so"), "0.3.21");
}

TEST(VersionPrecision, CountsParts) {
  EXPECT_EQ(p::version_precision(""), 0);
  EXPECT_EQ(p::version_precision("9"), 1);
  EXPECT_EQ(p::version_precision("9.1.0"), 3);
}

}  // namespace cuda_files_test

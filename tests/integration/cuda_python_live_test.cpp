// env's CUDA stack and Python facts on this host, checked against independent reads: the CUDA
// headers parsed here with regular expressions, and torch asked by Python itself. Each test
// skips, saying why, only when the thing is not installed here.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inventory/cuda.hpp"
#include "inventory/host_facts.hpp"
#include "inventory/python.hpp"

namespace cuda_python_live_test {

namespace fs = std::filesystem;
using namespace dltune;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The value of `#define NAME <digits>` in a header, by regex.
std::optional<long> define(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("#define " + name + "\\s+(\\d+)")))
    return std::nullopt;
  return std::stol(m[1].str());
}

struct Live {
  host::Root root;
  inventory::Context ctx{root, env()};
  inventory::PythonFacts python = inventory::collect_python(ctx);
  inventory::CudaFacts cuda = inventory::collect_cuda(ctx, python);

  static std::map<std::string, std::string> env() {
    auto e = inventory::environment_for(host::Root());
    auto& path = e["PATH"];
    if (path.find("/usr/bin") == std::string::npos) path += path.empty() ? "/usr/bin" : ":/usr/bin";
    return e;
  }
  bool has_finding(const std::vector<inventory::VersionFinding>& v, const std::string& version,
                   const std::string& path, const std::string& source) const {
    for (const auto& x : v)
      if (x.version == version && x.path == path && x.source == source) return true;
    return false;
  }
};

const fs::path kCuda = "/usr/local/cuda";

}  // namespace

TEST(CudaPythonLive, ToolkitVersionMatchesItsFiles) {
  if (!fs::exists(kCuda)) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda on this host";
  const auto real = fs::canonical(kCuda).string();
  std::string expected, source;
  if (fs::exists(real + "/version.json")) {
    expected = nlohmann::json::parse(slurp(real + "/version.json"))["cuda"]["version"];
    source = "version.json";
  } else if (fs::exists(real + "/version.txt")) {
    std::smatch m;
    const auto t = slurp(real + "/version.txt");
    ASSERT_TRUE(std::regex_search(t, m, std::regex(R"(CUDA Version (\S+))")));
    expected = m[1].str();
    source = "version.txt";
  } else {
    const auto v = define(slurp(real + "/include/cuda.h"), "CUDA_VERSION");
    ASSERT_TRUE(v) << "no CUDA_VERSION in " << real << "/include/cuda.h";
    expected = std::to_string(*v / 1000) + "." + std::to_string(*v % 1000 / 10);
    source = "cuda.h";
  }
  Live live;
  const inventory::Toolkit* t = nullptr;
  for (const auto& x : live.cuda.toolkits)
    if (x.path == real) t = &x;
  ASSERT_NE(t, nullptr) << "env did not report the toolkit at " << real;
  EXPECT_EQ(t->version, expected);
  EXPECT_EQ(t->version_source, source);
  bool via_link = false;
  for (const auto& v : t->found_via) via_link |= v.path == kCuda.string();
  EXPECT_EQ(via_link, fs::is_symlink(kCuda));
  std::printf("CUDA %s at %s (%s)\n", expected.c_str(), real.c_str(), source.c_str());
}

TEST(CudaPythonLive, CudnnAndNcclMatchTheirHeaders) {
  if (!fs::exists(kCuda)) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda on this host";
  const auto include = fs::canonical(kCuda).string() + "/include";
  const auto cudnn_h = include + "/cudnn_version.h", nccl_h = include + "/nccl.h";
  if (!fs::exists(cudnn_h) && !fs::exists(nccl_h))
    GTEST_SKIP() << "neither cudnn_version.h nor nccl.h in " << include;
  Live live;
  if (fs::exists(cudnn_h)) {
    const auto t = slurp(cudnn_h);
    const auto major = define(t, "CUDNN_MAJOR"), minor = define(t, "CUDNN_MINOR"),
               patch = define(t, "CUDNN_PATCHLEVEL");
    ASSERT_TRUE(major && minor && patch);
    const auto v =
        std::to_string(*major) + "." + std::to_string(*minor) + "." + std::to_string(*patch);
    EXPECT_TRUE(live.has_finding(live.cuda.cudnn, v, cudnn_h, "header")) << "cuDNN " << v;
    std::printf("cuDNN %s (%s)\n", v.c_str(), cudnn_h.c_str());
  }
  if (fs::exists(nccl_h)) {
    const auto t = slurp(nccl_h);
    const auto major = define(t, "NCCL_MAJOR"), minor = define(t, "NCCL_MINOR"),
               patch = define(t, "NCCL_PATCH");
    ASSERT_TRUE(major && minor && patch);
    std::smatch m;
    std::string suffix;
    if (std::regex_search(t, m, std::regex("#define NCCL_SUFFIX \"([^\"]*)\""))) suffix = m[1];
    const auto v = std::to_string(*major) + "." + std::to_string(*minor) + "." +
                   std::to_string(*patch) + suffix;
    EXPECT_TRUE(live.has_finding(live.cuda.nccl, v, nccl_h, "header")) << "NCCL " << v;
    std::printf("NCCL %s (%s)\n", v.c_str(), nccl_h.c_str());
  }
}

TEST(CudaPythonLive, ToolkitWheelsMatchTheDistInfoDirectory) {
  if (!fs::exists(kCuda / "dist-info")) GTEST_SKIP() << "no /usr/local/cuda/dist-info here";
  const auto dir = fs::canonical(kCuda).string() + "/dist-info";
  std::vector<std::string> expected;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".dist-info") expected.push_back(e.path().string());
  std::sort(expected.begin(), expected.end());
  Live live;
  std::vector<std::string> got;
  for (const auto& t : live.cuda.toolkits)
    for (const auto& p : t.packages) got.push_back(p.path);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  // The cuDNN and NCCL wheels are findings too, with the versions in their names.
  const std::regex wheel(R"(nvidia_(cudnn|nccl)_cu\d+-([\d.]+)\.dist-info)");
  for (const auto& p : expected) {
    std::smatch m;
    const auto name = fs::path(p).filename().string();
    if (!std::regex_match(name, m, wheel)) continue;
    const auto& list = m[1] == "cudnn" ? live.cuda.cudnn : live.cuda.nccl;
    EXPECT_TRUE(live.has_finding(list, m[2], p, "dist-info")) << p;
  }
}

TEST(CudaPythonLive, SystemPythonAndTorchMatchWhatPythonSays) {
  const std::string python = "/usr/bin/python3.11";
  if (!fs::exists(python)) GTEST_SKIP() << "no " << python << " on this host";
  // Python itself, and torch imported by it: the slow way env must agree with.
  FILE* pipe = ::popen((python + " -c 'import platform; print(platform.python_version()); "
                                 "import torch; print(torch.__version__); "
                                 "print(torch.version.cuda)' 2>/dev/null")
                           .c_str(),
                       "r");
  ASSERT_NE(pipe, nullptr);
  std::vector<std::string> out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) {
    std::string l(buf);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    out.push_back(l);
  }
  ::pclose(pipe);
  ASSERT_GE(out.size(), 1u) << python << " printed nothing";

  Live live;
  const inventory::Interpreter* i = nullptr;
  for (const auto& x : live.python.interpreters)
    if (x.resolved == python && x.source == "PATH") i = &x;
  ASSERT_NE(i, nullptr) << "env did not report " << python;
  ASSERT_TRUE(i->version);
  if (i->version_source == "patchlevel.h")
    EXPECT_EQ(*i->version, out[0]);
  else
    EXPECT_TRUE(out[0].starts_with(*i->version + ".")) << *i->version << " vs " << out[0];
  std::printf("%s: Python %s (env: %s from %s)\n", python.c_str(), out[0].c_str(),
              i->version->c_str(), i->version_source.value_or("?").c_str());

  if (out.size() < 3) {
    if (!fs::exists("/usr/lib/python3/dist-packages/torch")) {
      EXPECT_FALSE(i->torch) << "env reports a torch that Python cannot import";
    }
    GTEST_SKIP() << "torch is not importable by " << python << " (python3-torch not installed)";
  }
  ASSERT_TRUE(i->torch) << "Python imports torch " << out[1] << " but env found none";
  EXPECT_EQ(i->torch->version, out[1]);
  if (out[2] == "None") {
    EXPECT_EQ(i->torch->cuda, std::nullopt);
    EXPECT_EQ(i->torch->cuda_build, false);
  } else {
    EXPECT_EQ(i->torch->cuda, out[2]);
    EXPECT_EQ(i->torch->cuda_build, true);
  }
  std::printf("torch %s, CUDA %s (env: %s at %s)\n", out[1].c_str(), out[2].c_str(),
              i->torch->version.value_or("?").c_str(), i->torch->location.c_str());
}

}  // namespace cuda_python_live_test

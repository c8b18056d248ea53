// A root that is this very host seen through a mount, as Kubernetes gives a DaemonSet (hostPath
// volumes under /host) and node_exporter's --path.rootfs reads: dltune asks NVML live there (the
// fake libnvidia-ml.so stands for the driver), not a capture file, so serve and the
// node-problem-detector plugin judge the GPUs. Each case runs in a private mount namespace
// (unshare(1)), so that its mounts vanish with it.
#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../unit/gpu/fake_nvml_config.hpp"
#include "../unit/serve/exposition_parser.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace root_mount_live_test {

namespace fs = std::filesystem;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using dltune::testing::run;
using dltune::testing::RunResult;
using ::testing::HasSubstr;

namespace {

// The whole of / at DIR (Kubernetes' hostPath: / is a recursive bind), then dltune's words.
const char* const kWholeHost = R"(mount --rbind / "$1" && shift && exec "$@")";
// The DaemonSet's four volumes: /proc, /sys, /dev and /etc, each at DIR/NAME.
const char* const kDaemonSetVolumes =
    R"(for d in proc sys dev etc; do mkdir -p "$1/$d" && mount --rbind "/$d" "$1/$d" || exit 97;)"
    R"( done; shift; exec "$@")";

class RootMountLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting needs root";
    dir_ = fs::path(::testing::TempDir()) / ("dltune_host_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const auto probe = run({"unshare", "--mount", "--propagation", "private", "true"});
    if (probe.exit_code != 0) GTEST_SKIP() << "unshare --mount does not work here: " << probe.err;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);  // empty: the mounts went with the namespace
  }
  // `words` (dltune's arguments, with ROOT for the mount) run with the mount made by `script`.
  RunResult in_mount(const char* script, std::vector<std::string> words,
                     std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {"unshare",     "--mount",    "--propagation", "private",
                                     "sh",          "-c",         script,          "sh",
                                     dir_.string(), DLTUNE_BINARY};
    for (auto& w : words) argv.push_back(w == "ROOT" ? dir_.string() : w);
    env["DLTUNE_NVML_LIBRARY"] = DLTUNE_FAKE_NVML;
    return run(argv, env, 120);
  }
  fs::path dir_;
};

nlohmann::json gpu_with_ecc_errors() {
  auto config = fake_hgx(1);
  config["gpus"][0]["ecc_errors"]["volatile_uncorrected"] = 2;
  return config;
}

}  // namespace

TEST_F(RootMountLive, ServeOnTheWholeHostMountedJudgesTheGpusThroughNvml) {
  FakeNvmlConfig fake(gpu_with_ecc_errors());
  const auto r = in_mount(kWholeHost, {"serve", "--once", "--interval", "200ms", "--root", "ROOT"},
                          {{"NODE_NAME", "gpu-node-a"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = dltune::serve::testing::parse_exposition(r.out);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  // The GPU NVML gave, labelled with the node's name from the downward API.
  const auto info = e.all("dltune_gpu_info");
  ASSERT_EQ(info.size(), 1u) << r.out;
  EXPECT_EQ(info[0]->labels.at("Hostname"), "gpu-node-a");
  const auto build = e.all("dltune_build_info");
  ASSERT_EQ(build.size(), 1u);
  EXPECT_EQ(build[0]->labels.at("Hostname"), "gpu-node-a");
  // The check judged its ECC from NVML: critical, and not unknown.
  EXPECT_EQ(e.all("dltune_check_finding", {{"id", "gpu.ecc"}, {"severity", "critical"}}).size(), 1u)
      << r.out;
  EXPECT_TRUE(e.all("dltune_check_unknown", {{"id", "gpu.ecc"}}).empty()) << r.out;
}

TEST_F(RootMountLive, TheDaemonSetsVolumesAreEnoughForTheNpdPlugin) {
  FakeNvmlConfig fake(gpu_with_ecc_errors());
  auto r = in_mount(kDaemonSetVolumes, {"check", "--npd", "--root", "ROOT", "--only", "gpu.ecc"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("dltune: gpu.ecc: GPU 0 (0000:18:00.0): uncorrectable ECC"));
  // env says where NVML's answer came from: asked live, not a capture.
  r = in_mount(kDaemonSetVolumes, {"env", "--json", "--root", "ROOT"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"]["nvml"]["loaded"], true) << j["gpu"].dump();
  EXPECT_EQ(j["gpu"]["nvml_source"], "live") << j["gpu"].dump();
}

// A host tree that is files (a capture, the 8-GPU fixture) is not this host: its GPUs are not
// this machine's, so NVML is not asked for it, though it loads here, and they cannot be judged.
TEST_F(RootMountLive, AHostTreeOfFilesIsNotAskedThisMachinesNvml) {
  FakeNvmlConfig fake(gpu_with_ecc_errors());
  const auto r = run({DLTUNE_BINARY, "check", "--npd", "--root",
                      std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2", "--only", "gpu.ecc"},
                     {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("cannot judge: gpu.ecc"));
  EXPECT_THAT(r.out, HasSubstr("not recorded in this host tree"));
}

}  // namespace root_mount_live_test

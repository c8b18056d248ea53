// gpu.health, the GPU failure matrix (docs/gpu-failures.md): each way a GPU host fails by not
// answering, on the 8-GPU fixture with its facts changed as that failure changes them (the
// nvidia module gone, a GPU bound elsewhere, the fake NVML failing to initialise, listing fewer
// GPUs, or losing one), and what gpu.health says. The tree rows (the module not loaded, read from
// a copy of the fixture tree) run the program itself.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/check.hpp"
#include "core/json.hpp"
#include "gpu_hosts.hpp"
#include "inventory/capture_files.hpp"
#include "inventory/context.hpp"
#include "inventory/gpu.hpp"
#include "inventory/host_facts.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "support/temp_tree.hpp"

namespace gpu_health_test {

using namespace dltune::audit;
using dltune::inventory::HostFacts;
using dltune::testing::entry;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using dltune::testing::fixture_host;
using dltune::testing::has_note;
using dltune::testing::run;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

constexpr const char* kGpu8 = "gpu8-numa2-cgv2";

// The fixture's facts with NVML's answer from the fake described by `config` (loaded or not), or
// from a library that is not there.
HostFacts with_nvml_answer(const nlohmann::json& config, const char* library = DLTUNE_FAKE_NVML) {
  const auto& h = fixture_host(kGpu8);
  HostFacts f = h.facts;
  FakeNvmlConfig fake(config);
  dltune::inventory::Context ctx(*h.root, {});
  f.gpu = dltune::inventory::collect_gpus(ctx, dltune::gpu::NvmlBackend(library).query());
  return f;
}

std::vector<Finding> health(const HostFacts& facts, bool in_container = false) {
  return run(gpu_health, facts, *fixture_host(kGpu8).root, entry("gpu.health", "true", "critical"),
             in_container);
}

// The one finding, critical, of gpu.health.
Finding critical_one(const std::vector<Finding>& out) {
  EXPECT_EQ(out.size(), 1u);
  if (out.empty()) return {};
  EXPECT_EQ(out[0].id, "gpu.health");
  EXPECT_EQ(out[0].severity, Severity::kCritical) << out[0].summary;
  EXPECT_FALSE(out[0].unknown);
  EXPECT_TRUE(out[0].fix) << out[0].summary;
  return out[0];
}

// The facts of a host whose nvidia module is not loaded (a kernel update), with what its
// /lib/modules holds.
HostFacts module_not_loaded(std::optional<bool> for_running, std::vector<std::string> others) {
  HostFacts f = fixture_host(kGpu8).facts;
  for (auto* m : {"nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset"}) f.gpu.modules[m] = false;
  f.gpu.driver.kernel_module_version.reset();
  for (auto& d : f.gpu.devices)
    if (d.vendor == "nvidia") d.driver.reset();
  dltune::inventory::NvidiaModuleBuilds b;
  b.running_kernel = "6.1.0-18-amd64";
  b.for_running_kernel = for_running;
  if (for_running == true) b.path = "updates/dkms/nvidia.ko.xz";
  b.other_kernels = std::move(others);
  f.gpu.module_builds = b;
  f.gpu.nvml = {};
  f.gpu.nvml.backend = "nvml";
  f.gpu.nvml.error = "nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded";
  return f;
}

}  // namespace

TEST(GpuHealth, EveryGpuBoundAndAnsweringIsOk) {
  const auto out = health(with_nvml_answer(fake_hgx()));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kOk) << out[0].summary;
  EXPECT_FALSE(out[0].unknown);
  EXPECT_EQ(out[0].summary, "8 NVIDIA GPUs on PCI, all bound to nvidia and answering NVML");
}

TEST(GpuHealth, TheModuleNotLoadedAfterAKernelUpdateNamesTheKernelsItWasBuiltFor) {
  const auto f = critical_one(health(module_not_loaded(false, {"6.1.0-17-amd64"})));
  EXPECT_THAT(f.summary, HasSubstr("the nvidia kernel module is not loaded: 8 NVIDIA GPUs"));
  EXPECT_THAT(f.summary, HasSubstr("0000:18:00.0"));
  EXPECT_THAT(f.summary,
              HasSubstr("built for 6.1.0-17-amd64 but not for the running kernel 6.1.0-18-amd64"));
  EXPECT_THAT(f.fix->command, HasSubstr("dkms autoinstall"));
  EXPECT_THAT(f.fix->command, HasSubstr("linux-headers-$(uname -r)"));
}

TEST(GpuHealth, TheModuleBuiltForThisKernelButNotLoadedIsModprobed) {
  const auto f = critical_one(health(module_not_loaded(true, {})));
  EXPECT_EQ(f.fix->command, "modprobe nvidia && nvidia-smi");
  EXPECT_TRUE(has_note(f, "Secure Boot")) << f.notes.front();
  bool dep = false;
  for (const auto& e : f.evidence)
    dep = dep || (e.path == "/lib/modules/6.1.0-18-amd64/modules.dep" &&
                  e.value == "updates/dkms/nvidia.ko.xz");
  EXPECT_TRUE(dep);
}

TEST(GpuHealth, NoModuleForAnyKernelIsTheDriverToInstall) {
  const auto f = critical_one(health(module_not_loaded(false, {})));
  EXPECT_THAT(f.summary, HasSubstr("no nvidia module is built for any kernel here"));
  EXPECT_THAT(f.fix->command, HasSubstr("nvidia-driver"));
}

TEST(GpuHealth, InAContainerTheModuleIsTheHostsToLoad) {
  const auto out = health(module_not_loaded(false, {"6.1.0-17-amd64"}), true);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(has_note(out[0], "Run the fix on the host"));
  EXPECT_FALSE(out[0].fix->by_dltune);
}

TEST(GpuHealth, AGpuBoundToVfioOrToNoDriverIsNamedByItsBusId) {
  // Two of eight GPUs taken from the driver: NVML lists the six it still has.
  auto config = fake_hgx();
  config["gpus"].erase(config["gpus"].begin() + 5);  // 0000:ab:00.0
  config["gpus"].erase(config["gpus"].begin() + 4);  // 0000:9a:00.0
  auto facts = with_nvml_answer(config);
  for (auto& d : facts.gpu.devices) {
    if (d.address == "0000:9a:00.0") d.driver = "vfio-pci";
    if (d.address == "0000:ab:00.0") d.driver.reset();
  }
  const auto out = health(facts);
  ASSERT_EQ(out.size(), 2u);  // not "missing from NVML" as well: they are not the driver's
  EXPECT_EQ(out[0].severity, Severity::kCritical);
  EXPECT_THAT(out[0].summary, HasSubstr("(0000:9a:00.0) is bound to vfio-pci"));
  EXPECT_THAT(out[0].fix->command, HasSubstr("/sys/bus/pci/drivers/vfio-pci/unbind"));
  EXPECT_EQ(out[1].severity, Severity::kCritical);
  EXPECT_THAT(out[1].summary, HasSubstr("(0000:ab:00.0) has no driver"));
  EXPECT_THAT(out[1].fix->command, HasSubstr("dmesg"));
}

TEST(GpuHealth, NvmlFailingToInitialiseSaysWhyForEachCause) {
  const struct {
    int code;
    const char* says;
    const char* fix;
  } kRows[] = {
      {9, "NVML says the driver is not loaded although the nvidia module is", "nvidia-modprobe"},
      // The fixture's module is 535.161.07 and its libnvidia-ml 550.54.15: both are named.
      {18, "version mismatch (kernel module 535.161.07, user library 550.54.15)", "reboot"},
      {4, "NVML is refused access to the GPUs", "ls -l /dev/nvidia*"},
      {999, "NVML fails: nvmlInit_v2 failed: NVML_ERROR_UNKNOWN (999)", "nvidia-smi"},
  };
  for (const auto& row : kRows) {
    const auto facts = with_nvml_answer({{"init_error", row.code}});
    ASSERT_FALSE(facts.gpu.nvml.loaded) << row.code;
    const auto f = critical_one(health(facts));
    EXPECT_THAT(f.summary, HasSubstr(row.says)) << row.code;
    EXPECT_THAT(f.summary, HasSubstr("8 NVIDIA GPUs on PCI")) << row.code;
    EXPECT_THAT(f.fix->command, HasSubstr(row.fix)) << row.code;
  }
}

TEST(GpuHealth, NvmlMissingWhereTheModuleIsLoadedIsTheDriversUserSpace) {
  const auto facts = with_nvml_answer(fake_hgx(), "/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(facts.gpu.nvml.loaded);
  const auto f = critical_one(health(facts));
  EXPECT_THAT(f.summary, HasSubstr("NVML (libnvidia-ml.so.1) is missing"));
  EXPECT_THAT(f.fix->command, HasSubstr("535.161.07"));
}

TEST(GpuHealth, FewerGpusInNvmlThanOnPciNamesEachMissingBusId) {
  auto config = fake_hgx();
  config["gpus"].erase(config["gpus"].begin() + 4);  // 0000:9a:00.0 fell off the bus
  const auto f = critical_one(health(with_nvml_answer(config)));
  EXPECT_THAT(f.summary, HasSubstr("GPU 0000:9a:00.0 is missing from NVML: 8 bound to nvidia on "
                                   "PCI, 7 in NVML"));
  EXPECT_THAT(f.fix->command, HasSubstr("0000:9a:00.0"));
}

TEST(GpuHealth, AGpuLostOnItsHandleOrFailingItsCallsIsNamed) {
  auto config = fake_hgx();
  config["gpus"][3]["fail"] = {{"nvmlDeviceGetMemoryInfo", 15}};   // NVML_ERROR_GPU_IS_LOST
  config["gpus"][6]["fail"] = {{"nvmlDeviceGetTemperature", 16}};  // NVML_ERROR_RESET_REQUIRED
  const auto out = health(with_nvml_answer(config));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].severity, Severity::kCritical);
  EXPECT_EQ(out[0].summary, "GPU 3 (0000:5d:00.0) is lost: NVML says it fell off the bus");
  EXPECT_EQ(out[1].severity, Severity::kCritical);
  EXPECT_THAT(out[1].summary, HasSubstr("GPU 6 (0000:ba:00.0) fails NVML's calls"));
  EXPECT_THAT(out[1].summary, HasSubstr("NVML_ERROR_RESET_REQUIRED"));
}

TEST(GpuHealth, ALostGpuIsUnknownToTheRulesThatReadIt) {
  // GPU 3 lost on one call, GPU 6's clock reasons failing: each rule says unknown for the GPU
  // whose facts it could not read, and judges the others.
  auto config = fake_hgx();
  config["gpus"][3]["fail"] = {{"nvmlDeviceGetMemoryInfo", 15}};
  config["gpus"][6]["fail"] = {{"nvmlDeviceGetCurrentClocksEventReasons", 999}};
  const auto facts = with_nvml_answer(config);
  const auto& root = *fixture_host(kGpu8).root;
  const auto ecc = run(gpu_ecc, facts, root, entry("gpu.ecc", "true", "critical"));
  ASSERT_EQ(ecc.size(), 8u);
  for (std::size_t i = 0; i < ecc.size(); ++i) EXPECT_EQ(ecc[i].unknown, i == 3) << i;
  EXPECT_EQ(ecc[3].severity, Severity::kInfo);
  EXPECT_THAT(ecc[3].summary, HasSubstr("GPU 3 (0000:5d:00.0): its ECC state cannot be read"));
  EXPECT_THAT(ecc[3].summary, HasSubstr("NVML_ERROR_GPU_IS_LOST"));
  const auto throttle = run(gpu_throttle, facts, root, entry("gpu.throttle", "true", "warn"));
  ASSERT_EQ(throttle.size(), 8u);
  for (std::size_t i = 0; i < throttle.size(); ++i)
    EXPECT_EQ(throttle[i].unknown, i == 3 || i == 6) << i;
  EXPECT_THAT(throttle[6].summary, HasSubstr("its clock event reasons cannot be read"));
}

TEST(GpuHealth, AContainerGivenNoGpuIsToldTheRuntimesFlag) {
  auto facts = with_nvml_answer(fake_hgx(), "/nonexistent/libnvidia-ml.so.1");
  facts.gpu.dev_nodes = std::vector<std::string>{};
  const auto out = health(facts, true);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kWarn);
  EXPECT_THAT(out[0].summary, HasSubstr("this container was given no GPU"));
  EXPECT_THAT(out[0].fix->command, HasSubstr("--gpus all"));
  EXPECT_TRUE(has_note(out[0], "nvidia.com/gpu"));
}

TEST(GpuHealth, AContainerWithFewerGpusThanItsDeviceFilesIsCritical) {
  // A container given four GPUs sees its host's eight on PCI: only its device files count.
  auto config = fake_hgx(3);
  auto facts = with_nvml_answer(config);
  facts.gpu.dev_nodes = std::vector<std::string>{"nvidia-uvm", "nvidia0", "nvidia1",
                                                 "nvidia2",    "nvidia3", "nvidiactl"};
  const auto out = health(facts, true);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kCritical);
  EXPECT_EQ(out[0].summary, "NVML lists 3 GPUs, but this container has 4 GPU device files");
  // Four device files, four GPUs: healthy, the host's other four are not this container's.
  auto all = with_nvml_answer(fake_hgx(4));
  all.gpu.dev_nodes = facts.gpu.dev_nodes;
  const auto ok = health(all, true);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].severity, Severity::kOk) << ok[0].summary;
}

TEST(GpuHealth, AHostTreeWithoutNvmlsAnswerIsUnknownNotHealthy) {
  const auto out = health(fixture_host(kGpu8).facts);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].severity, Severity::kInfo);
  EXPECT_TRUE(out[0].unknown);
  EXPECT_THAT(out[0].summary, HasSubstr("not recorded in this host tree"));
}

// The rows that are trees: the program run on a copy of the fixture as the failure leaves it.
class GpuHealthTree : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(fs::path(DLTUNE_FIXTURES) / "roots" / kGpu8, tree_.dir(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks |
                 fs::copy_options::overwrite_existing);
  }
  // The nvidia modules out of /proc/modules and no /proc/driver/nvidia: a boot where the module
  // did not load.
  void unload_nvidia() {
    const auto modules = tree_.dir() / "proc/modules";
    std::ifstream in(modules);
    std::string line, kept;
    while (std::getline(in, line))
      if (!line.starts_with("nvidia")) kept += line + "\n";
    in.close();
    tree_.write("proc/modules", kept);
    fs::remove_all(tree_.dir() / "proc/driver/nvidia");
  }
  std::string release() const {
    std::ifstream in(tree_.dir() / "proc/sys/kernel/osrelease");
    std::string r;
    std::getline(in, r);
    return r;
  }
  dltune::testing::TempTree tree_;
};

TEST_F(GpuHealthTree, CheckExitsTwoWhenTheModuleIsNotLoadedAndSaysForWhichKernelItIsBuilt) {
  unload_nvidia();
  tree_.write("lib/modules/" + release() + "/modules.dep",
              "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz\n");
  tree_.write(
      "lib/modules/6.1.0-17-amd64/modules.dep",
      "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz\n"
      "updates/dkms/nvidia.ko.xz:\nupdates/dkms/nvidia-uvm.ko.xz: updates/dkms/nvidia.ko.xz\n");
  const auto r = dltune::testing::run(
      {DLTUNE_BINARY, "check", "--root", tree_.dir().string(), "--json", "--only", "gpu.health"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["findings"].size(), 1u) << r.out;
  const auto& f = j["findings"][0];
  EXPECT_EQ(f["severity"], "critical");
  EXPECT_EQ(f["unknown"], false);
  EXPECT_THAT(f["summary"].get<std::string>(),
              HasSubstr("built for 6.1.0-17-amd64 but not for the running kernel " + release()));
  // And env reads what /lib/modules holds.
  const auto env =
      dltune::testing::run({DLTUNE_BINARY, "env", "--root", tree_.dir().string(), "--json"});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  const auto b = nlohmann::json::parse(env.out)["gpu"]["module_builds"];
  EXPECT_EQ(b["running_kernel"], release());
  EXPECT_EQ(b["for_running_kernel"], false);
  EXPECT_EQ(b["other_kernels"], nlohmann::json::array({"6.1.0-17-amd64"}));
}

TEST_F(GpuHealthTree, NpdCallsAHostWhoseGpusCannotBeJudgedUnknownNotOk) {
  // The fixture holds no NVML answer: gpu.health and the NVML rules are unknown. Everything else
  // that is critical is left out, so that only the unknown remains.
  const auto r = dltune::testing::run({DLTUNE_BINARY, "check", "--root", tree_.dir().string(),
                                       "--npd", "--only", "gpu.health,gpu.ecc"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("dltune: cannot judge: gpu.health"));
  EXPECT_THAT(r.out, HasSubstr("gpu.ecc"));
  // The text says unknown, not info.
  const auto text = dltune::testing::run(
      {DLTUNE_BINARY, "check", "--root", tree_.dir().string(), "--only", "gpu.health,gpu.ecc"});
  EXPECT_THAT(text.out, HasSubstr("unknown   "));
  EXPECT_THAT(text.out, HasSubstr("2 unknown (not judged)"));
}

}  // namespace gpu_health_test

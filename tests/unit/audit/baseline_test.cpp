// The hardware baseline (audit/baseline.hpp): written from a host tree, read back, and every
// drift judged. The 8-GPU fixture tree (gpu8-numa2-cgv2) stands for the host; its copy, changed
// as a failure leaves it, for the host later. The program itself is run for `baseline`,
// `check --baseline` and `check --npd --baseline`.
#include <filesystem>
#include <fstream>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit/baseline.hpp"
#include "audit/check.hpp"
#include "core/json.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "support/temp_tree.hpp"

namespace baseline_test {

namespace fs = std::filesystem;
using dltune::audit::Baseline;
using dltune::audit::Finding;
using dltune::audit::Severity;
using ::testing::HasSubstr;

namespace {

const fs::path kGpu8 = fs::path(DLTUNE_FIXTURES) / "roots" / "gpu8-numa2-cgv2";

dltune::inventory::HostFacts facts_of(const fs::path& dir) {
  return dltune::inventory::collect(*dltune::host::Root::at(dir.string()), {});
}

std::vector<Finding> drifts(const std::vector<Finding>& all) {
  std::vector<Finding> out;
  for (const auto& f : all)
    if (f.severity != Severity::kOk) out.push_back(f);
  return out;
}

std::vector<std::string> summaries(const std::vector<Finding>& all) {
  std::vector<std::string> out;
  for (const auto& f : all) out.push_back(f.id + ": " + f.summary);
  return out;
}

class BaselineTree : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(kGpu8, tree_.dir(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks |
                 fs::copy_options::overwrite_existing);
    baseline_ = dltune::audit::baseline_of(facts_of(kGpu8));
  }
  std::vector<Finding> judge() {
    return dltune::audit::judge_baseline(baseline_, facts_of(tree_.dir()));
  }
  // The baseline as `dltune baseline` writes it, in a file.
  std::string baseline_file() {
    const auto path =
        (tree_.dir().parent_path() / ("baseline-" + std::to_string(::getpid()) + ".toml")).string();
    const auto r = dltune::testing::run(
        {DLTUNE_BINARY, "baseline", "--root", kGpu8.string(), "-o", path, "--force"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    files_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& f : files_) fs::remove(f);
  }
  dltune::testing::TempTree tree_;
  Baseline baseline_;
  std::vector<std::string> files_;
};

}  // namespace

TEST(Baseline, OfTheEightGpuTree) {
  const auto b = dltune::audit::baseline_of(facts_of(kGpu8));
  EXPECT_EQ(b.host, "hgx-h100-07");
  EXPECT_EQ(b.cpus, 32);
  EXPECT_EQ(b.sockets, 2);
  ASSERT_TRUE(b.memory_gib);
  EXPECT_NEAR(*b.memory_gib, 1007.5, 0.05);
  ASSERT_TRUE(b.gpus);
  ASSERT_EQ(b.gpus->size(), 8u);
  EXPECT_EQ(b.gpu_count, 8);
  EXPECT_EQ((*b.gpus)[0].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ((*b.gpus)[0].pci_id, "10de:2330");
  EXPECT_EQ((*b.gpus)[0].pcie_generation, 5);
  // The GPU whose link trained at x8 is expected at its x16: a fault to find, not the norm.
  EXPECT_EQ((*b.gpus)[5].pci_bus_id, "0000:ab:00.0");
  EXPECT_EQ((*b.gpus)[5].pcie_width, 16);
  ASSERT_TRUE(b.rdma);
  EXPECT_EQ(b.rdma_count, 5);
  ASSERT_EQ(b.rdma->size(), 5u);
  EXPECT_EQ((*b.rdma)[1].device, "mlx5_1");
  EXPECT_EQ((*b.rdma)[1].rate_gbps, 400);
  EXPECT_EQ((*b.rdma)[1].link_layer, "InfiniBand");
  ASSERT_TRUE(b.nics);
  ASSERT_FALSE(b.nics->empty());
  EXPECT_EQ(b.nics->front().name, "eth0");
  EXPECT_EQ(b.nics->front().speed_gbps, 25);
  const auto notes = dltune::audit::baseline_notes(facts_of(kGpu8));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("GPU 0000:ab:00.0 runs at PCIe x8 of its x16"));
}

TEST(Baseline, TomlReadsBackAsWritten) {
  auto b = dltune::audit::baseline_of(facts_of(kGpu8));
  (*b.gpus)[0].memory_gib = 79.6;
  (*b.gpus)[0].model = "NVIDIA \"H100\" \\ 80GB\nHBM3";  // what a hostile name would be
  const auto text = dltune::audit::to_toml(b, "2026-12-06");
  const auto back = dltune::audit::parse_baseline(text, "b.toml");
  ASSERT_TRUE(back) << back.error().message() << "\n" << text;
  EXPECT_EQ(back->origin, "b.toml");
  EXPECT_EQ(back->host, b.host);
  EXPECT_EQ(back->cpus, b.cpus);
  EXPECT_EQ(back->sockets, b.sockets);
  EXPECT_EQ(back->memory_gib, b.memory_gib);
  EXPECT_EQ(back->gpu_count, b.gpu_count);
  ASSERT_EQ(back->gpus->size(), b.gpus->size());
  for (std::size_t i = 0; i < b.gpus->size(); ++i) {
    const auto &x = (*back->gpus)[i], &y = (*b.gpus)[i];
    EXPECT_EQ(x.pci_bus_id, y.pci_bus_id);
    EXPECT_EQ(x.pci_id, y.pci_id);
    EXPECT_EQ(x.model, y.model);
    EXPECT_EQ(x.memory_gib, y.memory_gib);
    EXPECT_EQ(x.pcie_width, y.pcie_width);
    EXPECT_EQ(x.pcie_generation, y.pcie_generation);
  }
  ASSERT_EQ(back->rdma->size(), b.rdma->size());
  EXPECT_EQ((*back->rdma)[2].rate_gbps, (*b.rdma)[2].rate_gbps);
  EXPECT_EQ((*back->rdma)[2].link_layer, "Ethernet");
  EXPECT_EQ(back->rdma_count, b.rdma_count);
  ASSERT_EQ(back->nics->size(), b.nics->size());
  EXPECT_EQ((*back->nics)[0].speed_gbps, (*b.nics)[0].speed_gbps);
  // JSON has the same parts.
  const auto j = dltune::audit::to_json(b);
  EXPECT_EQ(j["schema"], "dltune.baseline/1");
  EXPECT_EQ(j["gpus"]["device"].size(), 8u);
  EXPECT_EQ(j["gpus"]["count"], 8);
  EXPECT_EQ(j["rdma"]["port"][1]["rate_gbps"], 400);
}

TEST(Baseline, WrittenAsTomlOrJsonAndAnExistingFileOnlyWithForce) {
  const auto facts = facts_of(kGpu8);
  const fs::path dir = fs::path(::testing::TempDir()) / "dltune_write_baseline";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto toml = (dir / "b.toml").string();
  auto written = dltune::audit::write_baseline(facts, toml, false, false);
  ASSERT_TRUE(written) << written.error().message();
  auto back = dltune::audit::load_baseline(toml);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->gpus->size(), written->gpus->size());
  EXPECT_THAT(dltune::audit::written_text(*written, toml),
              HasSubstr(fmt::format("wrote {}: {} GPUs", toml, written->gpus->size())));
  auto again = dltune::audit::write_baseline(facts, toml, false, true);
  ASSERT_FALSE(again) << "an existing file is kept without --force";
  ASSERT_TRUE(dltune::audit::write_baseline(facts, toml, true, true));
  std::ifstream in(toml);
  const std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(json, HasSubstr("\"schema\": \"dltune.baseline/1\""));
  fs::remove_all(dir);
}

TEST(Baseline, RefusesWhatItDoesNotKnowNamingTheFileAndLine) {
  const std::string head = "schema = \"dltune.baseline/1\"\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "has no schema"},
      {"schema = \"dltune.baseline/9\"\n", "is not one this dltune reads"},
      {head + "gpu_count = 8\n", "unknown key \"gpu_count\""},
      {head + "[gpus]\ncount = -1\n", "b.toml:3: count in [gpus] must be a whole number"},
      {head + "[gpus]\ncount = 8\n[[gpus.device]]\npci_bus_id = \"GPU 0\"\n",
       "pci_bus_id \"GPU 0\" is not a PCI address"},
      {head + "[[gpus.device]]\npci_bus_id = \"0000:18:00.0\"\npci_id = \"nvidia\"\n",
       "pci_id \"nvidia\" is not vendor:device"},
      {head + "[[gpus.device]]\npci_id = \"10de:2330\"\n", "[[gpus.device]] #1 has no pci_bus_id"},
      {head + "[memory]\ntotal_gib = \"lots\"\n",
       "b.toml:3: total_gib in [memory] must be a positive"},
      {head + "[memory]\ntotal_gib = nan\n", "must be a positive number"},
      {head + "cpu = 4\n", "b.toml:2: cpu must be a table"},
      {head + "[rdma]\nport = 1\n", "rdma.port must be tables"},
      {head + "[[rdma.port]]\ndevice = \"mlx5_0\"\nspeed = 400\n", "unknown key \"speed\""},
      {head + "[cpu\n", "b.toml"},
  };
  for (const auto& [text, want] : bad) {
    const auto r = dltune::audit::parse_baseline(text, "b.toml");
    ASSERT_FALSE(r) << text;
    EXPECT_THAT(r.error().message(), HasSubstr(want)) << text;
    EXPECT_THAT(r.error().message(), HasSubstr("b.toml")) << text;
  }
  const auto missing = dltune::audit::load_baseline("/nonexistent/baseline.toml");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(),
              HasSubstr("cannot read the baseline /nonexistent/baseline.toml: No such file"));
}

TEST_F(BaselineTree, TheSameHostDriftsOnlyWhereItsLinkIsDegraded) {
  const auto all = judge();
  const auto d = drifts(all);
  ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(summaries(all));
  EXPECT_EQ(d[0].id, "baseline.gpu");
  EXPECT_EQ(d[0].severity, Severity::kCritical);
  EXPECT_EQ(d[0].summary, "GPU 0000:ab:00.0 at PCIe x8, x16 expected");
  // An ok finding for each part.
  std::set<std::string> ok;
  for (const auto& f : all)
    if (f.severity == Severity::kOk) ok.insert(f.id);
  EXPECT_EQ(ok, (std::set<std::string>{"baseline.rdma", "baseline.nic", "baseline.cpu",
                                       "baseline.memory"}));
}

// A file written by an earlier dltune (tests/fixtures/baselines) reads and judges the same: the
// format is a contract with the files admins keep.
TEST_F(BaselineTree, AFileWrittenEarlierStillReads) {
  auto kept =
      dltune::audit::load_baseline(std::string(DLTUNE_FIXTURES) + "/baselines/hgx-h100-07.toml");
  ASSERT_TRUE(kept) << kept.error().message();
  EXPECT_EQ(kept->gpus->size(), 8u);
  baseline_ = *kept;
  const auto d = drifts(judge());
  ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(summaries(d));
  EXPECT_EQ(d[0].summary, "GPU 0000:ab:00.0 at PCIe x8, x16 expected");
  EXPECT_EQ(d[0].origin, std::string(DLTUNE_FIXTURES) + "/baselines/hgx-h100-07.toml");
}

TEST_F(BaselineTree, AGpuThatLeftPciIsMissingByItsAddress) {
  (*baseline_.gpus)[5].pcie_width = 8;  // reviewed: that slot is x8
  fs::remove(tree_.dir() / "sys/bus/pci/devices/0000:9a:00.0");
  const auto d = drifts(judge());
  ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(summaries(d));
  EXPECT_EQ(d[0].summary, "GPU 0000:9a:00.0 missing: 8 expected, 7 seen");
  EXPECT_EQ(d[0].severity, Severity::kCritical);
  EXPECT_EQ(d[0].stakes, Severity::kCritical);
  ASSERT_FALSE(d[0].evidence.empty());
  EXPECT_EQ(d[0].evidence[0].path, "/sys/bus/pci/devices/0000:9a:00.0");

  // With the count alone (no device list), the count is compared.
  baseline_.gpus.reset();
  const auto c = drifts(judge());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].summary, "7 GPUs on PCI: 8 expected, 7 seen");
}

TEST_F(BaselineTree, ASlowerPortAMissingDeviceAndADownInterface) {
  (*baseline_.gpus)[5].pcie_width = 8;
  tree_.write("sys/class/infiniband/mlx5_1/ports/1/rate", "100 Gb/sec (4X EDR)\n");
  tree_.write("sys/class/infiniband/mlx5_3/ports/1/state", "1: DOWN\n");
  fs::remove_all(tree_.dir() / "sys/class/infiniband/mlx5_4");
  tree_.write("sys/class/net/ib1/operstate", "down\n");
  const auto s = summaries(drifts(judge()));
  EXPECT_THAT(s, ::testing::UnorderedElementsAre(
                     "baseline.rdma: mlx5_1 at 100 Gb/s, 400 expected",
                     "baseline.rdma: mlx5_3 port 1 is DOWN, ACTIVE expected",
                     "baseline.rdma: mlx5_4 missing: 5 RDMA devices expected, 4 seen",
                     "baseline.nic: ib1 is down, up expected"));
}

TEST_F(BaselineTree, LessMemoryAndFewerCpusAreCriticalMoreIsAWarning) {
  (*baseline_.gpus)[5].pcie_width = 8;
  auto facts = facts_of(tree_.dir());
  facts.memory.total_bytes = *facts.memory.total_bytes / 2;  // a NUMA node's memory gone
  facts.cpu.online.resize(16);
  auto d = drifts(dltune::audit::judge_baseline(baseline_, facts));
  EXPECT_THAT(summaries(d), ::testing::UnorderedElementsAre(
                                "baseline.cpu: 16 CPUs online, 32 expected",
                                "baseline.memory: memory 503.7 GiB, 1007.5 GiB expected"));
  for (const auto& f : d) EXPECT_EQ(f.severity, Severity::kCritical) << f.summary;
  // 2% less memory is the same memory (firmware reservations move between boots).
  facts = facts_of(tree_.dir());
  facts.memory.total_bytes = *facts.memory.total_bytes / 100 * 98;
  EXPECT_TRUE(drifts(dltune::audit::judge_baseline(baseline_, facts)).empty());
  facts.memory.total_bytes = *facts.memory.total_bytes * 2;
  d = drifts(dltune::audit::judge_baseline(baseline_, facts));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::kWarn);
}

TEST_F(BaselineTree, AProfileNamesItsBaselineAndCheckJudgesIt) {
  const auto file = baseline_file();
  fs::remove(tree_.dir() / "sys/bus/pci/devices/0000:9a:00.0");
  const auto profile_path = file + ".profile.toml";
  files_.push_back(profile_path);
  std::ofstream(profile_path) << "[profile]\ninclude = \"training\"\nbaseline = \"" << file
                              << "\"\n";
  const auto root = tree_.root();
  auto profile = dltune::settings::load_profile(profile_path, root, dltune::settings::validate_key);
  ASSERT_TRUE(profile) << profile.error().message();
  EXPECT_EQ(profile->baseline, file);
  dltune::audit::CheckOptions o;
  o.only = {"baseline.gpu"};
  const auto report = dltune::audit::run_check(facts_of(tree_.dir()), root, *profile, o);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->critical, 2);  // 0000:9a:00.0 missing, 0000:ab:00.0 at x8
  EXPECT_EQ(dltune::audit::exit_code(*report), 2);
  // A relative path is refused: where a profile is read from says nothing of where it is.
  std::ofstream(profile_path) << "[profile]\nbaseline = \"baseline.toml\"\n";
  const auto relative =
      dltune::settings::load_profile(profile_path, root, dltune::settings::validate_key);
  ASSERT_FALSE(relative);
  EXPECT_THAT(relative.error().message(), HasSubstr("baseline must be the absolute path"));
  // An id of the baseline's without a baseline is an unknown id.
  auto training = dltune::settings::load_profile("training", root, dltune::settings::validate_key);
  o.only = {"baseline.gpu"};
  const auto no_baseline = dltune::audit::run_check(facts_of(tree_.dir()), root, *training, o);
  ASSERT_FALSE(no_baseline);
}

TEST_F(BaselineTree, CheckAndNpdWithABaselineFile) {
  const auto file = baseline_file();
  fs::remove(tree_.dir() / "sys/bus/pci/devices/0000:9a:00.0");
  auto r = dltune::testing::run({DLTUNE_BINARY, "check", "--root", tree_.dir().string(),
                                 "--baseline", file, "--only", "baseline.gpu,baseline.rdma"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("GPU 0000:9a:00.0 missing: 8 expected, 7 seen"));
  r = dltune::testing::run({DLTUNE_BINARY, "check", "--root", tree_.dir().string(), "--baseline",
                            file, "--only", "baseline.gpu", "--npd"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("dltune: baseline.gpu: GPU 0000:9a:00.0 missing: 8 expected, 7 seen"));
  r = dltune::testing::run({DLTUNE_BINARY, "check", "--root", tree_.dir().string(), "--baseline",
                            file, "--only", "baseline.gpu", "--json"});
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["findings"].size(), 2u) << r.out;
  EXPECT_EQ(j["findings"][0]["id"], "baseline.gpu");
  EXPECT_EQ(j["findings"][0]["severity"], "critical");
  // A baseline that does not load is bad input, and NPD is told the host cannot be judged.
  r = dltune::testing::run(
      {DLTUNE_BINARY, "check", "--root", tree_.dir().string(), "--baseline", file + ".missing"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot read the baseline " + file + ".missing: No such file"));
  r = dltune::testing::run({DLTUNE_BINARY, "check", "--root", tree_.dir().string(), "--baseline",
                            file + ".missing", "--npd"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("dltune: cannot judge the host: cannot read the baseline"));
}

TEST(BaselineCli, WritesTomlOrJsonAndSaysWhatToReview) {
  const auto r = dltune::testing::run({DLTUNE_BINARY, "baseline", "--root", kGpu8.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("schema = \"dltune.baseline/1\""));
  EXPECT_THAT(r.out, HasSubstr("pci_bus_id = \"0000:9a:00.0\""));
  EXPECT_THAT(r.err, HasSubstr("dltune baseline: GPU 0000:ab:00.0 runs at PCIe x8 of its x16"));
  ASSERT_TRUE(dltune::audit::parse_baseline(r.out, "stdout")) << r.out;
  const auto j =
      dltune::testing::run({DLTUNE_BINARY, "baseline", "--root", kGpu8.string(), "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["gpus"]["count"], 8);
  const auto bad = dltune::testing::run({DLTUNE_BINARY, "baseline", "--root", "/nonexistent"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(bad.out.empty());
}

}  // namespace baseline_test

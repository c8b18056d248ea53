// The plan for gpu.persistence from NVML's facts (the fake libnvidia-ml): one change per GPU
// whose mode differs, named by UUID, and why nothing changes when nothing can.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../gpu/fake_nvml_config.hpp"
#include "audit/rules.hpp"
#include "core/json.hpp"
#include "gpu/nvml_backend.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"
#include "tune/plan.hpp"

namespace plan_gpu_test {

using namespace dltune;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using ::testing::HasSubstr;
using tune::PlanItem;

namespace {

// The facts of a hand-made tree, with NVML's answer from the fake as a live host gets it.
inventory::HostFacts facts_with(const host::Root& root, const nlohmann::json* config) {
  auto facts = inventory::collect(root, {});
  facts.gpu.nvml_from_capture = false;
  if (config != nullptr) {
    FakeNvmlConfig fake(*config);
    facts.gpu.nvml = gpu::NvmlBackend(DLTUNE_FAKE_NVML).query();
  }
  return facts;
}

PlanItem plan_item(const inventory::HostFacts& facts, bool persist = false,
                   const std::string& profile = "training") {
  dltune::testing::TempTree t;
  auto root = t.root();
  auto prof = settings::load_profile(profile, root, settings::validate_key);
  EXPECT_TRUE(prof.has_value());
  auto plan = tune::make_plan(root, facts, *prof, {"gpu.persistence"}, persist);
  EXPECT_TRUE(plan.has_value()) << plan.error().message();
  EXPECT_EQ(plan->items.size(), 1u);
  return plan->items.at(0);
}

}  // namespace

TEST(PlanGpu, OneChangePerGpuThatIsOff) {
  dltune::testing::TempTree t;
  const auto config = fake_hgx(2);  // GPU 0 on, GPU 1 off
  const auto item = plan_item(facts_with(t.root(), &config));
  EXPECT_EQ(item.status, PlanItem::Status::kChange);
  EXPECT_EQ(item.summary, "off -> on on GPU 1 (NVIDIA H100 80GB HBM3)");
  ASSERT_EQ(item.changes.size(), 1u);
  const auto& c = item.changes[0];
  EXPECT_EQ(c.key, "gpu.persistence");
  EXPECT_EQ(c.kind, "nvml");
  EXPECT_EQ(c.target, "nvml:" + config["gpus"][1]["uuid"].get<std::string>() + "/persistence_mode");
  EXPECT_EQ(c.old_value, "off");
  EXPECT_EQ(c.new_value, "on");
  EXPECT_FALSE(c.implied);
  EXPECT_TRUE(item.notes.empty());  // live only: no note on reboots
}

TEST(PlanGpu, EveryGpuOffIsListedAndPersistAddsTheDaemonNote) {
  dltune::testing::TempTree t;
  const auto config = fake_hgx(4);
  const auto item = plan_item(facts_with(t.root(), &config), /*persist=*/true);
  EXPECT_EQ(item.status, PlanItem::Status::kChange);
  EXPECT_EQ(item.summary,
            "off -> on on GPU 1 (NVIDIA H100 80GB HBM3), GPU 3 (NVIDIA H100 80GB HBM3)");
  ASSERT_EQ(item.changes.size(), 2u);
  EXPECT_THAT(item.changes[1].target, HasSubstr(config["gpus"][3]["uuid"].get<std::string>()));
  ASSERT_EQ(item.notes.size(), 1u);
  EXPECT_THAT(item.notes[0], HasSubstr("systemctl enable --now nvidia-persistenced"));
  EXPECT_THAT(item.notes[0], HasSubstr("dltune writes no systemd unit"));
}

TEST(PlanGpu, AlreadyOnEverywhere) {
  dltune::testing::TempTree t;
  auto config = fake_hgx(2);
  config["gpus"][1]["persistence_mode"] = true;
  const auto item = plan_item(facts_with(t.root(), &config));
  EXPECT_EQ(item.status, PlanItem::Status::kAlreadyOk);
  EXPECT_EQ(item.summary, "already on on every GPU");
  EXPECT_TRUE(item.changes.empty());
}

TEST(PlanGpu, AGpuWithoutModeOrUuidIsLeftAloneWithANote) {
  dltune::testing::TempTree t;
  auto config = fake_hgx(3);
  config["gpus"][1].erase("persistence_mode");
  config["gpus"][2].erase("uuid");
  auto item = plan_item(facts_with(t.root(), &config));
  EXPECT_EQ(item.status, PlanItem::Status::kAlreadyOk);  // GPU 0 is on
  ASSERT_EQ(item.notes.size(), 2u);
  EXPECT_EQ(item.notes[0],
            "GPU 1 (NVIDIA H100 80GB HBM3): NVML reported no persistence mode; "
            "left alone");
  EXPECT_THAT(item.notes[1], HasSubstr("GPU 2 (NVIDIA H100 80GB HBM3): NVML reported no UUID"));
  config["gpus"][0].erase("persistence_mode");
  item = plan_item(facts_with(t.root(), &config));
  EXPECT_EQ(item.status, PlanItem::Status::kNotApplicable);
  EXPECT_EQ(item.summary, "NVML reported the persistence mode of no GPU");
}

TEST(PlanGpu, NotApplicableWithoutGpusNvmlOrOnACapture) {
  dltune::testing::TempTree t;
  auto item = plan_item(facts_with(t.root(), nullptr));
  EXPECT_EQ(item.status, PlanItem::Status::kNotApplicable);
  EXPECT_EQ(item.summary, "no NVIDIA GPU on this host");

  auto facts = facts_with(t.root(), nullptr);
  inventory::PciGpu pci;
  pci.address = "0000:18:00.0";
  pci.vendor = "nvidia";
  facts.gpu.devices.push_back(pci);
  facts.gpu.nvml.loaded = false;
  facts.gpu.nvml.error = "cannot load NVML: libnvidia-ml.so.1: cannot open shared object file";
  item = plan_item(facts);
  EXPECT_EQ(item.status, PlanItem::Status::kNotApplicable);
  EXPECT_EQ(item.summary,
            "NVML did not load: cannot load NVML: libnvidia-ml.so.1: cannot open shared object "
            "file");

  const auto none = nlohmann::json{{"gpus", nlohmann::json::array()}};
  facts.gpu.nvml = facts_with(t.root(), &none).gpu.nvml;
  item = plan_item(facts);
  EXPECT_EQ(item.status, PlanItem::Status::kNotApplicable);
  EXPECT_THAT(item.summary, HasSubstr("NVML lists no GPU"));

  const auto config = fake_hgx(2);
  facts = facts_with(t.root(), &config);
  facts.gpu.nvml_from_capture = true;
  item = plan_item(facts);
  EXPECT_EQ(item.status, PlanItem::Status::kNotApplicable);
  EXPECT_THAT(item.summary, HasSubstr("capture (--root)"));
  EXPECT_TRUE(item.changes.empty());
}

TEST(PlanGpu, AProfileThatWantsItOffTurnsItOff) {
  dltune::testing::TempTree t;
  t.write("etc/dltune/profiles/off.toml",
          "[profile]\nname = \"off\"\n[settings.\"gpu.persistence\"]\nvalue = false\n"
          "reason = \"r\"\nsource = \"s\"\n");
  const auto config = fake_hgx(2);
  auto prof = settings::load_profile("off", t.root(), settings::validate_key);
  ASSERT_TRUE(prof) << prof.error().message();
  auto plan = tune::make_plan(t.root(), facts_with(t.root(), &config), *prof, {}, true);
  ASSERT_TRUE(plan);
  const auto& item = plan->items.at(0);
  EXPECT_EQ(item.status, PlanItem::Status::kChange);
  EXPECT_EQ(item.summary, "on -> off on GPU 0 (NVIDIA H100 80GB HBM3)");
  EXPECT_EQ(item.changes.at(0).new_value, "off");
  EXPECT_TRUE(item.notes.empty());  // off is what a reboot gives anyway
}

}  // namespace plan_gpu_test

// A tune transaction that sets GPU persistence mode through the fake libnvidia-ml beside a
// sysctl in a hand-made tree: apply, rollback, a failure half-way, a verify failure and drift,
// every value read back through the fake (FAKE_NVML_STATE carries it from one init to the next).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../gpu/fake_nvml_config.hpp"
#include "audit/rules.hpp"
#include "core/json.hpp"
#include "gpu/nvml_backend.hpp"
#include "gpu/persistence_setting.hpp"
#include "inventory/host_facts.hpp"
#include "settings/catalog.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"
#include "tune/plan.hpp"
#include "tune/transaction.hpp"

namespace transaction_nvml_test {

using namespace dltune;
using dltune::testing::fake_hgx;
using dltune::testing::FakeNvmlConfig;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  nlohmann::json config;
  FakeNvmlConfig fake;
  dltune::testing::TempTree tree;
  fs::path state = fs::path(::testing::TempDir()) /
                   ("tx_nvml_state_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());

  explicit Fixture(nlohmann::json c) : config(std::move(c)), fake(config) {
    ::setenv("DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML, 1);
    fs::remove_all(state);
    tree.write("proc/sys/vm/swappiness", "60\n");
  }
  ~Fixture() {
    ::unsetenv("DLTUNE_NVML_LIBRARY");
    fs::remove_all(state);
  }

  std::string uuid(int gpu) const { return config["gpus"][gpu]["uuid"].get<std::string>(); }
  std::string target(int gpu) const { return "nvml:" + uuid(gpu) + "/persistence_mode"; }
  // The mode now, asked through a fresh nvmlInit as another process would.
  std::string mode(int gpu) const {
    auto r = dltune::gpu::read_nvml_setting(target(gpu));
    if (!r) return "error: " + r.error().message();
    return r->value_or("(absent)");
  }
  std::string swappiness() const { return **tree.root().read("/proc/sys/vm/swappiness"); }

  tune::Plan plan() {
    auto root = tree.root();
    auto profile = settings::load_profile("training", root, settings::validate_key);
    auto facts = inventory::collect(root, {});
    facts.gpu.nvml = gpu::NvmlBackend(DLTUNE_FAKE_NVML).query();  // as on a live host
    facts.gpu.nvml_from_capture = false;
    auto p = tune::make_plan(root, facts, *profile, {"vm.swappiness", "gpu.persistence"}, false);
    EXPECT_TRUE(p.has_value());
    return *p;
  }
};

}  // namespace

TEST(TransactionNvml, AppliesAndRollsBackThroughNvml) {
  Fixture f(fake_hgx(4));  // GPUs 1 and 3 off
  auto root = f.tree.root();
  auto journal = tune::Journal::open(f.state.string());
  ASSERT_TRUE(journal) << journal.error().message();
  const auto plan = f.plan();
  ASSERT_EQ(plan.changes().size(), 3u);  // swappiness, GPU 1, GPU 3
  auto applied = tune::apply_plan(root, **journal, plan, "test");
  ASSERT_TRUE(applied) << applied.error().message();
  EXPECT_EQ(applied->changed, 3);
  EXPECT_EQ(f.swappiness(), "10\n");
  for (int gpu = 0; gpu < 4; ++gpu) EXPECT_EQ(f.mode(gpu), "on") << gpu;
  auto tx = (*journal)->transaction(applied->tx);
  ASSERT_TRUE(tx && *tx);
  ASSERT_EQ((*tx)->changes.size(), 3u);
  EXPECT_EQ((*tx)->changes[1].kind, "nvml");
  EXPECT_EQ((*tx)->changes[1].target, f.target(1));
  EXPECT_EQ((*tx)->changes[1].old_value, "off");
  EXPECT_EQ((*tx)->changes[1].state, tune::ChangeState::kVerified);
  EXPECT_TRUE(tune::find_drift(root, *(*journal)->history()).empty());

  auto rb = tune::rollback_tx(root, **journal, applied->tx);
  ASSERT_TRUE(rb) << rb.error().message();
  EXPECT_TRUE(rb->problems.empty());
  EXPECT_EQ(rb->restored, 3);
  EXPECT_EQ(f.swappiness(), "60\n");
  for (int gpu = 0; gpu < 4; ++gpu) EXPECT_EQ(f.mode(gpu), gpu % 2 == 0 ? "on" : "off") << gpu;
  EXPECT_EQ((*(*journal)->transaction(applied->tx))->state, tune::TxState::kRolledBack);
}

TEST(TransactionNvml, ASetWithoutPermissionRollsBackWhatWasDone) {
  auto config = fake_hgx(4);
  config["gpus"][3]["fail"]["nvmlDeviceSetPersistenceMode"] = 4;  // NVML_ERROR_NO_PERMISSION
  Fixture f(config);
  auto root = f.tree.root();
  auto journal = tune::Journal::open(f.state.string());
  ASSERT_TRUE(journal);
  auto applied = tune::apply_plan(root, **journal, f.plan(), "test");
  ASSERT_FALSE(applied);
  const auto msg = applied.error().message();
  EXPECT_THAT(msg, HasSubstr("rolled back"));
  EXPECT_THAT(msg, HasSubstr("gpu.persistence: cannot set 'on' on " + f.target(3)));
  EXPECT_THAT(msg, HasSubstr("nvmlDeviceSetPersistenceMode failed on GPU " + f.uuid(3) +
                             ": NVML_ERROR_NO_PERMISSION (4)"));
  // GPU 3 was never changed: rollback leaves it alone rather than fail to set it again.
  EXPECT_THAT(msg, Not(HasSubstr("could not restore")));
  // The sysctl and GPU 1, changed before GPU 3 failed, are back.
  EXPECT_EQ(f.swappiness(), "60\n");
  EXPECT_EQ(f.mode(1), "off");
  EXPECT_EQ(f.mode(3), "off");
  auto history = (*journal)->history();
  ASSERT_TRUE(history && !history->empty());
  EXPECT_EQ(history->front().state, tune::TxState::kFailed);
}

TEST(TransactionNvml, AGpuThatDoesNotTakeTheModeFailsVerification) {
  auto config = fake_hgx(4);
  config["gpus"][3]["persistence_mode_sticky"] = true;  // says success, stays off
  Fixture f(config);
  auto root = f.tree.root();
  auto journal = tune::Journal::open(f.state.string());
  ASSERT_TRUE(journal);
  auto applied = tune::apply_plan(root, **journal, f.plan(), "test");
  ASSERT_FALSE(applied);
  EXPECT_THAT(
      applied.error().message(),
      HasSubstr("gpu.persistence: wrote 'on' but it reads back as 'off' in " + f.target(3)));
  EXPECT_EQ(f.swappiness(), "60\n");
  EXPECT_EQ(f.mode(1), "off");
}

TEST(TransactionNvml, AModeChangedBehindTunesBackIsDrift) {
  Fixture f(fake_hgx(2));
  auto root = f.tree.root();
  auto journal = tune::Journal::open(f.state.string());
  ASSERT_TRUE(journal);
  auto applied = tune::apply_plan(root, **journal, f.plan(), "test");
  ASSERT_TRUE(applied) << applied.error().message();
  EXPECT_TRUE(tune::find_drift(root, *(*journal)->history()).empty());
  f.fake.set_persistence(f.uuid(1), false);  // nvidia-smi -i 1 -pm 0, say
  const auto drift = tune::find_drift(root, *(*journal)->history());
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_EQ(drift[0].key, "gpu.persistence");
  EXPECT_EQ(drift[0].target, f.target(1));
  EXPECT_EQ(drift[0].expected, "on");
  EXPECT_EQ(drift[0].actual, "off");
  EXPECT_EQ(drift[0].tx, applied->tx);
}

}  // namespace transaction_nvml_test

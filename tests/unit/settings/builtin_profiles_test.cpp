// The built-in profiles (profiles/*.toml compiled in): they load, every key is one the rule table
// knows, every entry says why and where from, and `training` holds every key a training host needs,
// with its expected value and severity.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "support/build_paths.hpp"
#include "support/temp_tree.hpp"

namespace builtin_profiles_test {

using dltune::settings::builtin_profile_text;
using dltune::settings::builtin_profiles;
using dltune::settings::Expected;
using dltune::settings::load_profile;
using dltune::settings::Profile;

namespace {

const dltune::settings::KeyValidator kValidate = [](const std::string& key) {
  return dltune::settings::validate_key(key);
};

Profile load(const std::string& name) {
  dltune::testing::TempTree tree;  // an empty host: no /etc/dltune/profiles
  auto p = load_profile(name, tree.root(), kValidate);
  EXPECT_TRUE(p.has_value()) << name << ": " << (p ? "" : p.error().message());
  return p ? *p : Profile{};
}

}  // namespace

TEST(BuiltinProfiles, AreTheThreeFilesUnderProfiles) {
  EXPECT_EQ(builtin_profiles(), (std::vector<std::string>{"defaults", "distributed", "training"}));
  EXPECT_FALSE(builtin_profile_text("nosuch").has_value());
  // The embedded text is the file's text, byte for byte.
  for (const auto& name : builtin_profiles()) {
    std::ifstream in(std::filesystem::path(DLTUNE_SOURCE_DIR) / "profiles" / (name + ".toml"));
    std::stringstream file;
    file << in.rdbuf();
    ASSERT_TRUE(builtin_profile_text(name).has_value()) << name;
    EXPECT_EQ(*builtin_profile_text(name), file.str()) << name;
  }
}

TEST(BuiltinProfiles, LoadAndValidateWithEveryEntryExplained) {
  for (const auto& name : builtin_profiles()) {
    const auto p = load(name);
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.description.empty()) << name;
    EXPECT_FALSE(p.entries.empty()) << name;
    for (const auto& e : p.entries) {
      EXPECT_TRUE(dltune::settings::validate_key(e.key).has_value()) << name << ": " << e.key;
      EXPECT_NE(dltune::audit::rule_for(e.key), nullptr) << e.key;
      EXPECT_GE(e.reason.size(), 30u) << name << ": " << e.key;
      EXPECT_FALSE(e.source.empty()) << name << ": " << e.key;
      EXPECT_FALSE(e.expected.text().empty()) << name << ": " << e.key;
      // One paragraph: no blank lines, no stray line breaks from the TOML layout.
      EXPECT_EQ(e.reason.find('\n'), std::string::npos) << name << ": " << e.key;
      EXPECT_EQ(e.reason.find("  "), std::string::npos) << name << ": " << e.key;
    }
  }
}

TEST(BuiltinProfiles, TrainingHoldsEveryKeyATrainingHostNeeds) {
  struct Want {
    const char* key;
    const char* expected;  // Expected::text()
    const char* severity;
  };
  const Want wants[] = {
      {"vm.swappiness", "10", "info"},
      {"vm.overcommit_memory", "1", "warn"},
      {"vm.dirty_ratio", "10", "info"},
      {"vm.dirty_background_ratio", "5", "info"},
      {"net.core.rmem_max", ">= 16777216", "warn"},
      {"net.core.wmem_max", ">= 16777216", "warn"},
      {"net.ipv4.tcp_rmem", ">= 16777216", "warn"},
      {"net.ipv4.tcp_wmem", ">= 16777216", "warn"},
      {"net.ipv4.tcp_fastopen", "3", "info"},
      {"thp.enabled", "one of always, madvise", "warn"},
      {"thp.defrag", "defer+madvise", "warn"},
      {"cpu.governor", "performance", "warn"},
      {"cpu.epp", "performance", "info"},
      {"irq.affinity", "auto", "info"},
      {"limits.nofile", ">= 65536", "warn"},
      {"shm.size", ">= 1073741824", "warn"},
      {"mount.noatime", "true", "info"},
      {"block.read_ahead_kb", ">= 128", "info"},
      {"block.scheduler", "auto", "info"},
      {"block.nr_requests", ">= 256", "info"},
      {"storage.data_device", "true", "info"},
      {"storage.trim", "true", "info"},
      {"build.toolchain", "true", "info"},
      {"blas.library", "true", "info"},
      {"swap.consistency", "true", "warn"},
      {"gpu.health", "true", "critical"},
      {"gpu.persistence", "true", "warn"},
      {"gpu.nouveau", "false", "critical"},
      {"gpu.driver_match", "true", "critical"},
      {"gpu.driver_cuda", "true", "critical"},
      {"gpu.pcie_link", "true", "warn"},
      {"gpu.ecc", "true", "critical"},
      {"gpu.throttle", "true", "warn"},
      {"gpu.power_limit", "true", "warn"},
      {"gpu.mig", "false", "warn"},
      {"gpu.nvlink", "true", "warn"},
      {"gpu.numa_placement", "true", "warn"},
      {"env.training", "true", "critical"},
  };
  const auto p = load("training");
  EXPECT_EQ(p.chain, std::vector<std::string>{"training"});
  EXPECT_EQ(p.entries.size(), std::size(wants));
  for (const auto& w : wants) {
    const auto* e = p.find(w.key);
    ASSERT_NE(e, nullptr) << w.key;
    EXPECT_EQ(e->expected.text(), w.expected) << w.key;
    EXPECT_EQ(e->severity, w.severity) << w.key;
    EXPECT_EQ(e->origin, "training") << w.key;
    EXPECT_FALSE(e->reason.empty()) << w.key;
    EXPECT_FALSE(e->source.empty()) << w.key;
  }
  EXPECT_EQ(p.find("net.ipv4.tcp_rmem")->field, 3);
  EXPECT_EQ(p.find("net.ipv4.tcp_wmem")->field, 3);
  ASSERT_TRUE(p.find("shm.size")->critical.has_value());
  EXPECT_EQ(p.find("shm.size")->critical->text(), ">= 268435456");
  // Docker's 64 MiB default is critical, 512 MiB a warning, 1 GiB fine.
  EXPECT_FALSE(p.find("shm.size")->critical->matches("67108864"));
  EXPECT_TRUE(p.find("shm.size")->critical->matches("536870912"));
  EXPECT_FALSE(p.find("shm.size")->expected.matches("536870912"));
  EXPECT_TRUE(p.find("shm.size")->expected.matches("1073741824"));
  EXPECT_FALSE(p.find("thp.enabled")->expected.matches("never"));

  // What was measured on the development VM is said in the reasons.
  for (const char* key : {"vm.swappiness", "vm.dirty_ratio", "vm.dirty_background_ratio",
                          "thp.enabled", "swap.consistency"})
    EXPECT_NE(p.find(key)->source.find("docs/measurements.md"), std::string::npos) << key;
  const auto& thp = p.find("thp.enabled")->reason;
  EXPECT_NE(thp.find("glibc"), std::string::npos);
  EXPECT_NE(thp.find("tuned allocator"), std::string::npos);
}

TEST(BuiltinProfiles, DistributedAddsToTraining) {
  const auto training = load("training");
  const auto p = load("distributed");
  EXPECT_EQ(p.chain, (std::vector<std::string>{"training", "distributed"}));
  EXPECT_EQ(p.includes, std::vector<std::string>{"training"});
  // Every training setting is there; the ones distributed sets again (overrides) are its own.
  const std::vector<std::string> overrides = {"irq.affinity"};
  for (const auto& e : training.entries) {
    ASSERT_NE(p.find(e.key), nullptr) << e.key;
    const bool own = std::find(overrides.begin(), overrides.end(), e.key) != overrides.end();
    EXPECT_EQ(p.find(e.key)->origin, own ? "distributed" : "training") << e.key;
  }
  struct Want {
    const char* key;
    const char* expected;
    const char* severity;
  };
  const Want wants[] = {
      {"limits.memlock", "unlimited", "critical"},
      {"kernel.numa_balancing", "0", "warn"},
      {"iommu.mode", "one of pt, off", "warn"},
      {"pci.acs", "disabled", "warn"},
      {"rdma.ports", "ACTIVE", "warn"},
      {"pci.gpu_nic", "true", "warn"},
      {"nic.settings", "true", "warn"},
      {"irq.affinity", "auto", "warn"},  // info in training: a NIC's IRQs carry the collectives
  };
  for (const auto& w : wants) {
    const auto* e = p.find(w.key);
    ASSERT_NE(e, nullptr) << w.key;
    EXPECT_EQ(e->expected.text(), w.expected) << w.key;
    EXPECT_EQ(e->severity, w.severity) << w.key;
    EXPECT_EQ(e->origin, "distributed") << w.key;
  }
  EXPECT_EQ(p.entries.size(), training.entries.size() + std::size(wants) - overrides.size());
  EXPECT_TRUE(p.find("limits.memlock")->expected.matches("unlimited"));
  EXPECT_FALSE(p.find("limits.memlock")->expected.matches("65536"));
}

TEST(BuiltinProfiles, DefaultsAreTheKernelsStockValuesAsNotes) {
  const auto p = load("defaults");
  const std::pair<const char*, const char*> wants[] = {
      {"vm.swappiness", "60"},
      {"vm.overcommit_memory", "0"},
      {"vm.dirty_ratio", "20"},
      {"vm.dirty_background_ratio", "10"},
      {"net.core.rmem_max", "212992"},
      {"net.core.wmem_max", "212992"},
      {"net.ipv4.tcp_fastopen", "1"},
      {"kernel.numa_balancing", "1"},
      {"thp.enabled", "one of always, madvise"},
      {"thp.defrag", "madvise"},
  };
  EXPECT_EQ(p.entries.size(), std::size(wants));
  for (const auto& [key, expected] : wants) {
    const auto* e = p.find(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->expected.text(), expected) << key;
  }
  for (const auto& e : p.entries) EXPECT_EQ(e.severity, "info") << e.key;
}

}  // namespace builtin_profiles_test

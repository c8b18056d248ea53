#pragma once
// Hosts for the GPU rule tests: the fixture roots' facts (collected once each), the same facts
// with the fake NVML's answer in place of "not recorded", and profile entries built by hand.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../gpu/fake_nvml_config.hpp"
#include "audit/rules.hpp"
#include "gpu/nvml_backend.hpp"
#include "inventory/host_facts.hpp"
#include "support/build_paths.hpp"

namespace dltune::testing {

struct Host {
  std::optional<host::Root> root;
  inventory::HostFacts facts;
};

// The facts of tests/fixtures/roots/<name>, collected on first use.
inline const Host& fixture_host(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Host>> cache;
  auto& slot = cache[name];
  if (!slot) {
    slot = std::make_unique<Host>();
    auto root = host::Root::at(std::string(DLTUNE_FIXTURES) + "/roots/" + name);
    EXPECT_TRUE(root.has_value()) << root.error().message();
    slot->root = *root;
    slot->facts = inventory::collect(*slot->root, inventory::CollectOptions{});
  }
  return *slot;
}

// The fixture's facts with the GPU facts collected again, NVML answering as `config` describes.
inline inventory::HostFacts with_nvml(const std::string& name, const nlohmann::json& config) {
  const auto& h = fixture_host(name);
  inventory::HostFacts f = h.facts;
  FakeNvmlConfig fake(config);
  inventory::Context ctx(*h.root, {});
  f.gpu = inventory::collect_gpus(ctx, gpu::NvmlBackend(DLTUNE_FAKE_NVML).query());
  EXPECT_TRUE(f.gpu.nvml.loaded) << f.gpu.nvml.error.value_or("");
  return f;
}

inline settings::ProfileEntry entry(const std::string& key, const std::string& value,
                                    const std::string& severity) {
  settings::ProfileEntry e;
  e.key = key;
  e.expected.kind = settings::Expected::Kind::kExact;
  e.expected.values = {value};
  e.severity = severity;
  e.reason = "why " + key;
  e.source = "where " + key + " comes from";
  e.origin = "test";
  return e;
}

inline std::vector<audit::Finding> run(audit::RuleFn rule, const inventory::HostFacts& facts,
                                       const host::Root& root, const settings::ProfileEntry& e,
                                       bool in_container = false) {
  const audit::AuditInput in{facts, root, in_container, {}};
  return rule(in, e);
}

inline bool has_note(const audit::Finding& f, const std::string& text) {
  for (const auto& n : f.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace dltune::testing

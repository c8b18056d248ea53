// The JSON of env, check, tune plan and doctor on the fixture roots, byte for byte as committed
// under tests/golden/: a change of structure inside dltune must not change what a script reads.
// A deliberate change of output rewrites the files: DLTUNE_UPDATE_GOLDEN=1 ctest -R GoldenJson,
// and the diff is reviewed with the change.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace golden_json_test {

namespace fs = std::filesystem;

namespace {

struct Case {
  const char* name;  // the golden file's name under tests/golden/<root>/
  std::vector<std::string> args;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"env", {"env", "--json"}},
      {"check-training", {"check", "--json"}},
      {"check-distributed", {"check", "-p", "distributed", "--json"}},
      {"check-defaults", {"check", "-p", "defaults", "--json"}},
      {"tune-plan", {"tune", "plan", "--json"}},
      {"tune-plan-persist", {"tune", "plan", "--persist", "--cgroups", "--json"}},
      {"doctor", {"doctor", "--boot", "--json"}},
  };
  return kCases;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The moment a command ran is the one field that differs from run to run.
std::string without_run_time(const std::string& json) {
  static const std::regex kRunTime(R"re("(collected_at|checked_at)": [0-9]+)re");
  return std::regex_replace(json, kRunTime, "\"$1\": 0");
}

// The fixture tree's own path, wherever the repository is cloned: "ROOT".
std::string without_root_path(std::string json, const std::string& root) {
  for (auto at = json.find(root); at != std::string::npos; at = json.find(root, at + 4))
    json.replace(at, root.size(), "ROOT");
  return json;
}

// Runs every case on `root` and compares with (or, with DLTUNE_UPDATE_GOLDEN, writes)
// tests/golden/<golden>/<case>.json.
void compare(const std::string& root, const std::string& golden, const std::vector<Case>& all) {
  const fs::path dir = fs::path(DLTUNE_SOURCE_DIR) / "tests/golden" / golden;
  const bool update = std::getenv("DLTUNE_UPDATE_GOLDEN") != nullptr;
  if (update) fs::create_directories(dir);
  for (const auto& c : all) {
    std::vector<std::string> argv = {DLTUNE_BINARY};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.insert(argv.end(), {"--root", root});
    // No NVML but the captured answer in the tree, local time in UTC, hwloc from the tree alone
    // (not this CPU's caches): the same bytes on any machine.
    const auto r =
        dltune::testing::run(argv, {{"DLTUNE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
                                    {"TZ", "UTC"},
                                    {"HWLOC_COMPONENTS", "-x86,-pci"}});
    const std::string got = "exit " + std::to_string(r.exit_code) + "\n" +
                            without_root_path(without_run_time(r.out), root);
    const fs::path file = dir / (std::string(c.name) + ".json");
    if (update) {
      std::ofstream(file, std::ios::binary) << got;
      continue;
    }
    ASSERT_TRUE(fs::exists(file)) << file << " is missing: DLTUNE_UPDATE_GOLDEN=1 writes it";
    EXPECT_EQ(got, read_file(file)) << c.name << " on " << golden << ": stderr " << r.err;
  }
}

class GoldenJson : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenJson, IsByteIdentical) {
  compare(std::string(DLTUNE_FIXTURES) + "/roots/" + GetParam(), GetParam(), cases());
}

// A kernel log with one event of each kind doctor explains most often.
TEST(GoldenJsonDoctor, OnAKernLogIsByteIdentical) {
  compare(std::string(DLTUNE_FIXTURES) + "/logs/training-node", "doctor-training-node",
          {{"doctor", {"doctor", "--boot", "--json"}}});
}

INSTANTIATE_TEST_SUITE_P(FixtureRoots, GoldenJson,
                         ::testing::Values("gpu8-numa2-cgv2", "container-cgv2", "this-vm",
                                           "amd-mi210x4"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace

}  // namespace golden_json_test

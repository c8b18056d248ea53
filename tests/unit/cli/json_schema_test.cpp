// docs/json.md documents every key that `env --json` prints: each object key, at any depth,
// must appear in backquotes in its section of the document (maps whose keys are data, such as
// sysctl names, are exempt below their own key).
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace json_schema_test {

using nlohmann::json;

namespace {

std::map<std::string, std::set<std::string>> documented_keys() {
  std::ifstream in(std::string(DLTUNE_SOURCE_DIR) + "/docs/json.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  std::map<std::string, std::set<std::string>> out;
  std::string section = "top";
  std::istringstream lines(doc);
  std::string line;
  const std::regex tick("`([a-z_0-9]+)`");
  while (std::getline(lines, line)) {
    if (line.rfind("### ", 0) == 0)
      section = line.substr(4);
    else if (line.rfind("## ", 0) == 0)
      section = line.substr(3);
    for (std::sregex_iterator it(line.begin(), line.end(), tick), end; it != end; ++it)
      out[section].insert((*it)[1].str());
  }
  return out;
}

// Objects whose keys are data (a sysctl, a governor or preference, a module, a limit, a mount
// point or a NIC's offload).
const std::set<std::string> kDataMaps = {
    "governors",       "energy_performance_preferences", "sysctls", "limits", "modules", "offloads",
    "energy_perf_bias"};

void check(const json& j, const std::set<std::string>& docs, const std::string& where,
           std::vector<std::string>& missing) {
  if (j.is_array()) {
    for (const auto& x : j) check(x, docs, where + "[]", missing);
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [k, v] : j.items()) {
    if (!docs.count(k)) missing.push_back(where + "." + k);
    if (!kDataMaps.count(k)) check(v, docs, where + "." + k, missing);
  }
}

void check_document(const json& doc) {
  const auto docs = documented_keys();
  ASSERT_FALSE(docs.empty());
  std::vector<std::string> missing;
  for (const auto& [k, v] : doc.items()) {
    if (!docs.at("`dltune env --json` — schema `dltune.env/1`").count(k) && !docs.count(k))
      missing.push_back(k);
    if (v.is_object() && docs.count(k)) check(v, docs.at(k), k, missing);
  }
  EXPECT_TRUE(missing.empty()) << "undocumented keys: " << ::testing::PrintToString(missing);
  EXPECT_EQ(doc["schema"], "dltune.env/1");
}

json env_json(const std::vector<std::string>& extra, std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv = {DLTUNE_BINARY, "env", "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto r = dltune::testing::run(argv, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

}  // namespace

TEST(EnvJsonSchema, EveryKeyIsDocumentedOnTheGpuHost) {
  check_document(env_json({"--root", std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2"}));
}

TEST(EnvJsonSchema, EveryKeyIsDocumentedOnTheContainer) {
  check_document(env_json({"--root", std::string(DLTUNE_FIXTURES) + "/roots/container-cgv2"}));
}

TEST(EnvJsonSchema, EveryKeyIsDocumentedWithNvmlLoaded) {
  // The fake NVML with its default description (tests/fakes/nvml/README.md).
  check_document(env_json({}, {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}}));
}

TEST(CheckJsonSchema, EveryKeyIsDocumented) {
  for (const char* host : {"gpu8-numa2-cgv2", "container-cgv2"}) {
    const auto r =
        dltune::testing::run({DLTUNE_BINARY, "check", "--json", "-p", "distributed", "--root",
                              std::string(DLTUNE_FIXTURES) + "/roots/" + host});
    ASSERT_GE(r.exit_code, 0) << r.err;
    ASSERT_LE(r.exit_code, 2) << r.err;
    const auto doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], "dltune.check/1");
    const auto docs = documented_keys();
    std::vector<std::string> missing;
    const auto& top = docs.at("`dltune check --json` — schema `dltune.check/1`");
    for (const auto& [k, v] : doc.items()) {
      if (!top.count(k)) missing.push_back(k);
      if (k == "summary") check(v, top, k, missing);
    }
    for (const auto& f : doc["findings"]) check(f, docs.at("findings"), "findings[]", missing);
    EXPECT_TRUE(missing.empty()) << host << ": " << ::testing::PrintToString(missing);
    EXPECT_FALSE(doc["findings"].empty());
  }
}

TEST(TunePlanJsonSchema, EveryKeyIsDocumented) {
  const auto r = dltune::testing::run({DLTUNE_BINARY, "tune", "--root",
                                       std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2",
                                       "plan", "--persist", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = json::parse(r.out);
  EXPECT_EQ(doc["schema"], "dltune.tune.plan/1");
  const auto docs = documented_keys();
  const auto& section = docs.at("`dltune tune plan --json` — schema `dltune.tune.plan/1`");
  std::vector<std::string> missing;
  check(doc, section, "plan", missing);
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
  bool has_file_change = false;
  for (const auto& i : doc["items"])
    for (const auto& c : i["changes"]) has_file_change = has_file_change || c["kind"] == "file";
  EXPECT_TRUE(has_file_change);
}

TEST(EnvJsonSchema, TheCheckCatchesAnUndocumentedKey) {
  const auto docs = documented_keys();
  std::vector<std::string> missing;
  check(json{{"total_bytes", 1}, {"surely_not_documented", 2}}, docs.at("memory"), "memory",
        missing);
  EXPECT_EQ(missing, std::vector<std::string>{"memory.surely_not_documented"});
}

}  // namespace json_schema_test

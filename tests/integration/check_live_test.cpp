// `dltune check` on this machine: a sysctl changed for real shows up as a finding with its
// evidence and fix, and goes away when the value is restored.
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace check_live_test {

using dltune::testing::run;
using nlohmann::json;

namespace {

const char* kSwappiness = "/proc/sys/vm/swappiness";

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::string v;
  std::getline(in, v);
  return v;
}

bool write_file(const char* path, const std::string& v) {
  std::ofstream out(path);
  out << v << "\n";
  out.close();
  return out.good() && read_file(path) == v;
}

// Restores the value whatever the test does.
class SwappinessGuard {
 public:
  SwappinessGuard() : saved_(read_file(kSwappiness)) {}
  ~SwappinessGuard() { write_file(kSwappiness, saved_); }
  const std::string& saved() const { return saved_; }

 private:
  std::string saved_;
};

json check_swappiness() {
  const auto r = run({DLTUNE_BINARY, "check", "--only", "vm.swappiness", "--json"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  return json::parse(r.out);
}

}  // namespace

TEST(CheckLive, ChangedSwappinessAppearsWithEvidenceAndFixThenGoes) {
  if (::access(kSwappiness, W_OK) != 0)
    GTEST_SKIP() << kSwappiness << " is not writable (needs root)";
  SwappinessGuard guard;
  ASSERT_TRUE(write_file(kSwappiness, "61"));
  auto bad = check_swappiness();
  ASSERT_EQ(bad["findings"].size(), 1u);
  const auto& f = bad["findings"][0];
  EXPECT_EQ(f["id"], "vm.swappiness");
  EXPECT_EQ(f["actual"], "61");
  EXPECT_EQ(f["expected"], "10");
  EXPECT_NE(f["severity"], "ok");
  EXPECT_EQ(f["evidence"][0]["path"], kSwappiness);
  EXPECT_EQ(f["evidence"][0]["value"], "61");
  EXPECT_EQ(f["fix"]["command"], "dltune tune apply -p training --only vm.swappiness");
  EXPECT_FALSE(f["reason"].get<std::string>().empty());

  ASSERT_TRUE(write_file(kSwappiness, "10"));
  auto good = check_swappiness();
  EXPECT_EQ(good["findings"][0]["severity"], "ok");
  EXPECT_EQ(good["findings"][0]["actual"], "10");
  EXPECT_FALSE(good["findings"][0].contains("fix"));
  EXPECT_EQ(good["exit_code"], 0);

  ASSERT_TRUE(write_file(kSwappiness, guard.saved()));
}

TEST(CheckLive, TheWholeCheckRunsAndItsExitCodeMatchesItsSummary) {
  const auto r = run({DLTUNE_BINARY, "check", "--json"});
  ASSERT_GE(r.exit_code, 0) << r.err;
  const auto doc = json::parse(r.out);
  const auto& s = doc["summary"];
  const int expected = s["critical"].get<int>() > 0 ? 2 : s["warn"].get<int>() > 0 ? 1 : 0;
  EXPECT_EQ(r.exit_code, expected);
  EXPECT_EQ(doc["exit_code"], expected);
  EXPECT_EQ(doc["profile"], "training");
  int counted = 0;
  for (const char* k : {"ok", "info", "warn", "critical", "not_applicable"})
    counted += s[k].get<int>();
  EXPECT_EQ(counted, static_cast<int>(doc["findings"].size()));
  // This VM has no GPU: GPU rules say so rather than fail.
  for (const auto& f : doc["findings"]) {
    if (f["id"].get<std::string>().starts_with("gpu.")) {
      EXPECT_EQ(f["applicable"], false) << f.dump();
    }
  }
}

}  // namespace check_live_test

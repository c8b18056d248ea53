// `dltune capture` then `dltune env --root` on the unpacked capture gives the live facts.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace capture_test {

using dltune::testing::run;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Counters that move between two runs a second apart.
void drop_volatile(json& j) {
  j.erase("root");
  j.erase("collected_at");
  j["os"].erase("uptime_seconds");
  j["memory"].erase("available_bytes");
  j["memory"].erase("swap_free_bytes");
  if (j["memory"].contains("shm")) j["memory"]["shm"].erase("used_bytes");
  for (auto& f : j["storage"]["file_systems"]) f.erase("free_bytes");
  j["gpu"].erase("nvml_source");  // "live" or "capture": where the NVML answer came from
  if (j.contains("gpu") && j["gpu"].contains("nvml"))
    for (auto& d : j["gpu"]["nvml"].value("devices", json::array())) d.erase("memory_used_bytes");
}

}  // namespace

TEST(Capture, UnpackedCaptureGivesTheSameFacts) {
  const auto dir = fs::path(::testing::TempDir()) / ("capture_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tree");
  const auto tarball = (dir / "host.tar.gz").string();

  const auto cap = run({DLTUNE_BINARY, "capture", "-o", tarball, "--json"});
  ASSERT_EQ(cap.exit_code, 0) << cap.err;
  const auto stats = json::parse(cap.out);
  EXPECT_GT(stats["files"].get<int>(), 20);
  ASSERT_TRUE(fs::exists(tarball));
  // Unpacked by GNU tar, as a user would.
  const auto untar = run({"tar", "xzf", tarball, "-C", (dir / "tree").string()});
  ASSERT_EQ(untar.exit_code, 0) << untar.err;
  // Nothing beyond what env read: no process environment, no home directories' data.
  EXPECT_FALSE(fs::exists(dir / "tree/proc/self/environ"));
  EXPECT_TRUE(fs::exists(dir / "tree/run/dltune/capture/environ.json"));

  const auto live = run({DLTUNE_BINARY, "env", "--json"});
  const auto offline = run({DLTUNE_BINARY, "env", "--json", "--root", (dir / "tree").string()});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  auto a = json::parse(live.out);
  auto b = json::parse(offline.out);
  EXPECT_EQ(b["root"], (dir / "tree").string());
  drop_volatile(a);
  drop_volatile(b);
  for (const auto& [key, value] : a.items()) EXPECT_EQ(value, b[key]) << "section " << key;
  EXPECT_EQ(a, b);
  fs::remove_all(dir);
}

TEST(Capture, UnwritableOutputIsAClearErrorAndLeavesNothing) {
  const auto r = run({DLTUNE_BINARY, "capture", "-o", "/nonexistent-dir/host.tar.gz"});
  EXPECT_EQ(r.exit_code, 2);  // bad input, found before anything is read
  EXPECT_NE(r.err.find("there is no directory /nonexistent-dir"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent-dir/host.tar.gz"), std::string::npos);
  EXPECT_FALSE(fs::exists("/nonexistent-dir"));
}

}  // namespace capture_test

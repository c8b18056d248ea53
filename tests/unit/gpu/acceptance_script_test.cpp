// tests/gpu/acceptance.py, the real-GPU acceptance run, on what this machine can give it: its
// comparison logic on the saved H100 outputs (tests/gpu/fixtures/h100), with eight values
// changed one at a time (--self-test), and its skip (exit 77) on a host without nvidia-smi.
#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace acceptance_script_test {

namespace {

const std::string kScript = std::string(DLTUNE_SOURCE_DIR) + "/tests/gpu/acceptance.py";

}  // namespace

TEST(GpuAcceptanceScript, MatchesTheSavedOutputsAndCatchesEachChangedValue) {
  const auto fixture =
      dltune::testing::run({"/usr/bin/python3", kScript, "--fixture",
                            std::string(DLTUNE_SOURCE_DIR) + "/tests/gpu/fixtures/h100"});
  EXPECT_EQ(fixture.exit_code, 0) << fixture.out << fixture.err;
  EXPECT_NE(fixture.out.find("0 MISMATCH"), std::string::npos) << fixture.out;
  const auto self = dltune::testing::run({"/usr/bin/python3", kScript, "--self-test"});
  EXPECT_EQ(self.exit_code, 0) << self.out << self.err;
  EXPECT_NE(self.out.find("8 edits caught"), std::string::npos) << self.out;
}

TEST(GpuAcceptanceScript, WithoutNvidiaSmiItSkipsWithTheReason) {
  const auto r = dltune::testing::run({"/usr/bin/python3", kScript, "--dltune", DLTUNE_BINARY},
                                      {{"PATH", "/nonexistent"}});
  EXPECT_EQ(r.exit_code, 77) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("no nvidia-smi"), std::string::npos) << r.out << r.err;
}

}  // namespace acceptance_script_test

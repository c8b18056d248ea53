// tools/check-layering on a copy of the sources: clean as they are; an include of a module the
// graph does not list for it, a listed module that nothing includes, and a module used before
// it is listed are each named, and fail it.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace check_layering_test {

namespace fs = std::filesystem;
using dltune::testing::run;
using ::testing::HasSubstr;

namespace {

struct Copy {
  fs::path dir = fs::path(::testing::TempDir()) / ("layering_" + std::to_string(::getpid()));
  Copy() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path src(DLTUNE_SOURCE_DIR);
    fs::copy_file(src / "CMakeLists.txt", dir / "CMakeLists.txt");
    fs::copy(src / "src", dir / "src", fs::copy_options::recursive);
  }
  ~Copy() { fs::remove_all(dir); }
  void replace(const std::string& rel, const std::string& from, const std::string& to) {
    std::ifstream in(dir / rel);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << rel << ": " << from;
    text.replace(at, from.size(), to);
    std::ofstream(dir / rel) << text;
  }
  dltune::testing::RunResult check() {
    return run({(fs::path(DLTUNE_SOURCE_DIR) / "tools/check-layering").string(), dir.string()});
  }
};

}  // namespace

TEST(CheckLayering, TheSourcesFollowTheGraphAndEachBreakIsNamed) {
  Copy c;
  const auto clean = c.check();
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;

  // monitor includes tune, which the graph does not give it.
  std::ofstream(c.dir / "src/monitor/layering_probe.cpp") << "#include \"tune/plan.hpp\"\n";
  auto r = c.check();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("src/monitor/layering_probe.cpp:1: monitor includes tune/, "
                               "which it does not list"));
  fs::remove(c.dir / "src/monitor/layering_probe.cpp");

  // report lists bench, which comes after it and which it does not include.
  c.replace("CMakeLists.txt", "\"report:core monitor store diagnose\"",
            "\"report:core monitor store diagnose bench\"");
  r = c.check();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("report uses bench, which is not listed before it"));
  EXPECT_THAT(r.out, HasSubstr("report lists bench, which none of its files includes"));
}

}  // namespace check_layering_test

// tools/check-hardening against ELF files this test builds with this build's compiler: one with
// the flags CMakeLists.txt gives every build but the sanitized ones (DLTUNE_HARDENING_*) has every
// property, one built without them is refused naming each property it lacks. `make run`,
// `make release` and `make deb` run the same tool on the dltune they built.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/text.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace hardening_test {

using dltune::testing::run;
using ::testing::HasSubstr;

namespace {

// Something each protection acts on: a stack buffer (the stack protector), a copy into it whose
// destination size the compiler knows (strcpy -> __strcpy_chk), and calls through the PLT.
constexpr const char* kProgram = R"(#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  char buf[64];
  std::strcpy(buf, argc > 1 ? argv[1] : "x");
  std::puts(buf);
  return static_cast<int>(std::strlen(buf)) == 0;
}
)";

std::string compile(const dltune::testing::TempDir& dir, const std::string& name,
                    const std::vector<std::string>& flags) {
  const auto source = dir.file("p.cpp");
  std::ofstream(source) << kProgram;
  const auto out = dir.file(name);
  std::vector<std::string> argv{DLTUNE_CXX_COMPILER, "-O2", source, "-o", out};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const auto r = run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

}  // namespace

TEST(Hardening, TheBuildsFlagsGiveEveryPropertyAndTheCheckerNamesEachOneMissing) {
  if (::access("/usr/bin/readelf", X_OK) != 0) GTEST_SKIP() << "no readelf (binutils) here";
  dltune::testing::TempDir dir;
  std::vector<std::string> flags;
  for (const auto f : dltune::text::fields(DLTUNE_HARDENING_FLAGS)) flags.emplace_back(f);
  ASSERT_THAT(flags, ::testing::Contains("-Wl,-z,now"));
  const auto hardened = compile(dir, "hardened", flags);
  const auto checker = std::string(DLTUNE_SOURCE_DIR) + "/tools/check-hardening";
  const auto good = run({checker, hardened});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_THAT(good.out, HasSubstr("PIE, RELRO, BIND_NOW"));

  const auto bare = compile(dir, "bare",
                            {"-no-pie", "-fno-stack-protector", "-U_FORTIFY_SOURCE", "-Wl,-z,lazy",
                             "-Wl,-z,norelro", "-fcf-protection=none"});
  const auto bad = run({checker, bare});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(bare + ": not hardened: no PIE, no RELRO, no BIND_NOW, no stack "
                                        "protector, no fortify"));
  const auto missing = run({checker, dir.file("nothing")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("cannot read it with readelf"));
}

}  // namespace hardening_test

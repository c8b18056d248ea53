// Installing dltune as a user does: `cmake --install` of the build tree the tests run from into a
// temporary prefix (every file in its standard place, the systemd unit naming the installed
// program), and the Debian package cpack builds from the same tree, installed into an empty
// dpkg database with `dpkg --root`, run, and removed again.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace install_test {

namespace fs = std::filesystem;
using dltune::testing::run;
using ::testing::HasSubstr;

namespace {

const fs::path kBuildDir = fs::path(DLTUNE_BINARY).parent_path();

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "dltune-install-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The files every installation has, relative to the prefix.
const std::vector<std::string> kInstalled = {
    "bin/dltune",
    "lib/dltune/slurm/dltune-task-prolog",
    "lib/dltune/slurm/dltune-healthcheck",
    "lib/dltune/slurm/dltune-prolog",
    "lib/dltune/slurm/dltune-epilog",
    "share/doc/dltune/examples/slurm/slurm.conf.example",
    "lib/dltune/dltune-serve-http.so",
    "lib/systemd/system/dltune-serve.service",
    "share/man/man1/dltune.1",
    "share/man/man1/dltune-check.1",
    "share/man/man1/dltune-tune.1",
    "share/man/man1/dltune-task-prolog.1",
    "share/bash-completion/completions/dltune",
    "share/zsh/vendor-completions/_dltune",
    "share/fish/vendor_completions.d/dltune.fish",
    "share/doc/dltune/README.md",
    "share/doc/dltune/docs/metrics.md",
    "share/doc/dltune/profiles/training.toml",
    "share/doc/dltune/knowledge/xid.toml",
    "share/doc/dltune/examples/prometheus/dltune-alerts.yml",
    "share/doc/dltune/examples/slurm/dltune-prolog",
};

}  // namespace

TEST(Install, CmakeInstallPutsEveryFileInItsPlace) {
  TempDir prefix;
  const auto r =
      run({"cmake", "--install", kBuildDir.string(), "--prefix", prefix.path.string()}, {}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& f : kInstalled) EXPECT_TRUE(fs::exists(prefix.path / f)) << f;
  // The programs are executable and run from there.
  const auto version = run({(prefix.path / "bin/dltune").string(), "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, HasSubstr("dltune "));
  // The installed serve finds its HTTP module in ../lib/dltune (serve/http_module.hpp): the web
  // config is read by the module, whose error names the file rather than the module.
  const auto web = run({(prefix.path / "bin/dltune").string(), "serve", "--no-gpus", "--no-check",
                        "--web-config", (prefix.path / "no-such-web.yml").string()});
  EXPECT_EQ(web.exit_code, 2) << web.err;
  EXPECT_THAT(web.err, HasSubstr("no-such-web.yml"));
  EXPECT_THAT(web.err, ::testing::Not(HasSubstr("HTTP module")));
  // Without its module beside it or in ../lib/dltune, serve says where it looked.
  fs::remove(prefix.path / "lib/dltune/dltune-serve-http.so");
  const auto lost = run({(prefix.path / "bin/dltune").string(), "serve", "--no-gpus", "--no-check",
                         "--web-config", (prefix.path / "no-such-web.yml").string()});
  EXPECT_EQ(lost.exit_code, 1) << lost.err;
  EXPECT_THAT(lost.err, HasSubstr("cannot find serve's HTTP module (dltune-serve-http.so)"));
  EXPECT_THAT(lost.err, HasSubstr("lib/dltune/dltune-serve-http.so: not there"));
  // The deploy scripts keep their mode.
  struct stat st {};
  ASSERT_EQ(::stat((prefix.path / "share/doc/dltune/examples/slurm/dltune-prolog").c_str(), &st),
            0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  // The unit names the program where the configured prefix puts it (the build's prefix, which
  // --prefix does not change: a package is configured for /usr).
  const auto unit = read(prefix.path / "lib/systemd/system/dltune-serve.service");
  EXPECT_THAT(unit, HasSubstr("ExecStart=/"));
  EXPECT_THAT(unit, HasSubstr("/bin/dltune serve"));
}

TEST(Install, TheDebianPackageInstallsRunsAndRemoves) {
  if (run({"dpkg-deb", "--version"}).exit_code != 0) GTEST_SKIP() << "no dpkg-deb on this host";
  TempDir out;
  // Uncompressed: the test's build is an instrumented one of several hundred MB.
  const auto pack =
      run({"cpack", "-G", "DEB", "--config", (kBuildDir / "CPackConfig.cmake").string(), "-B",
           out.path.string(), "-D", "CPACK_DEBIAN_COMPRESSION_TYPE=none"},
          {}, 900);
  ASSERT_EQ(pack.exit_code, 0) << pack.out << pack.err;
  fs::path deb;
  for (const auto& e : fs::directory_iterator(out.path))
    if (e.path().extension() == ".deb") deb = e.path();
  ASSERT_FALSE(deb.empty()) << pack.out;
  EXPECT_THAT(deb.filename().string(), ::testing::StartsWith("dltune_"));

  // Its dependencies were computed from the shared libraries (dpkg-shlibdeps), not listed.
  const auto info = run({"dpkg-deb", "--field", deb.string(), "Depends", "Version", "Package"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("libc6"));
  EXPECT_THAT(info.out, HasSubstr("libsqlite3"));
  EXPECT_THAT(info.out, HasSubstr("libhwloc"));
  EXPECT_THAT(info.out, ::testing::Not(HasSubstr("-dev")));

  // An empty dpkg database in a directory: install (its libraries are this host's, so
  // dependencies are not checked there), run, remove.
  TempDir root;
  fs::create_directories(root.path / "var/lib/dpkg/info");
  fs::create_directories(root.path / "var/lib/dpkg/updates");
  std::ofstream(root.path / "var/lib/dpkg/status");
  const auto install = run({"dpkg", "--root=" + root.path.string(), "--force-depends",
                            "--force-not-root", "--log=/dev/null", "-i", deb.string()},
                           {}, 300);
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  const auto listed = run({"dpkg", "--root=" + root.path.string(), "-L", "dltune"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  fs::path program;
  for (const char* where : {"usr/local/bin/dltune", "usr/bin/dltune"})
    if (fs::exists(root.path / where)) program = root.path / where;
  ASSERT_FALSE(program.empty()) << listed.out;
  const auto version = run({program.string(), "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, HasSubstr("dltune "));
  // PREFIX/bin/dltune -> PREFIX/lib/dltune/slurm/dltune-task-prolog, where the Slurm example
  // names it.
  const fs::path task_prolog =
      program.parent_path().parent_path() / "lib/dltune/slurm/dltune-task-prolog";
  EXPECT_TRUE(fs::exists(task_prolog)) << listed.out;
  const auto remove = run({"dpkg", "--root=" + root.path.string(), "--force-not-root",
                           "--log=/dev/null", "-r", "dltune"},
                          {}, 300);
  ASSERT_EQ(remove.exit_code, 0) << remove.out << remove.err;
  EXPECT_FALSE(fs::exists(program));
  EXPECT_FALSE(fs::exists(task_prolog));
}

// What the installed slurm.conf.example names is there and runs: an admin who copies its lines
// gets a health check, prologs and a task prolog that exist, and scripts that run the installed
// dltune. Its paths are the configured prefix's (the build's CMAKE_INSTALL_PREFIX), which
// `cmake --install --prefix` moves: each is looked for under the test's prefix.
TEST(Install, EveryProgramTheSlurmExampleNamesIsInstalledAndExecutable) {
  std::string configured;
  {
    std::ifstream cache(kBuildDir / "CMakeCache.txt");
    for (std::string line; std::getline(cache, line);)
      if (line.starts_with("CMAKE_INSTALL_PREFIX:PATH=")) configured = line.substr(26);
  }
  ASSERT_FALSE(configured.empty());
  TempDir prefix;
  const auto r =
      run({"cmake", "--install", kBuildDir.string(), "--prefix", prefix.path.string()}, {}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto example = read(prefix.path / "share/doc/dltune/examples/slurm/slurm.conf.example");
  ASSERT_FALSE(example.empty());
  std::istringstream lines(example);
  int named = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos || line.compare(eq + 1, 1, "/") != 0) continue;
    const std::string path = line.substr(eq + 1);
    ASSERT_TRUE(path.starts_with(configured + "/")) << line << " (prefix " << configured << ")";
    const fs::path installed = prefix.path / path.substr(configured.size() + 1);
    EXPECT_TRUE(fs::exists(installed)) << line;
    EXPECT_EQ(::access(installed.c_str(), X_OK), 0) << line;
    ++named;
    // A script runs the installed program, not another one.
    if (installed.filename() != "dltune-task-prolog")
      EXPECT_THAT(read(installed), HasSubstr(configured + "/bin/dltune slurm ")) << installed;
  }
  EXPECT_EQ(named, 4) << example;  // HealthCheckProgram, TaskProlog, Prolog, Epilog
}

}  // namespace install_test

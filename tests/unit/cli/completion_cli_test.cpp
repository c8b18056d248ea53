// `dltune completion bash|zsh|fish`: each script is the one the build installs, loads in its
// shell and completes there: commands, subcommands, options, the words of a closed set, setting
// ids (one of a comma-separated list too), profile names, GPU indexes and recordings. bash is
// driven through its completion function with COMP_WORDS/COMP_CWORD, fish through `complete -C`,
// zsh in a pseudo-terminal (tests/support/zsh_complete.zsh). A shell that is not installed is
// skipped, saying so.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace completion_cli_test {

namespace {

namespace fs = std::filesystem;
using dltune::testing::run;
using dltune::testing::TempDir;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using Words = std::set<std::string>;

bool on_path(const std::string& program) {
  std::stringstream path(std::getenv("PATH") != nullptr ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of `text` (a description after a tab dropped), as a set.
Words lines_of(const std::string& text) {
  Words out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.insert(line.substr(0, line.find('\t')));
  return out;
}

// File names without their directory or a directory's trailing "/".
Words base_names(const Words& paths) {
  Words out;
  for (auto p : paths) {
    while (!p.empty() && p.back() == '/') p.pop_back();
    out.insert(fs::path(p).filename().string());
  }
  return out;
}

class Completion : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto* shell : {"bash", "zsh", "fish"}) {
      const auto r = run({DLTUNE_BINARY, "completion", shell});
      ASSERT_EQ(r.exit_code, 0) << shell << ": " << r.err;
      EXPECT_TRUE(r.err.empty()) << r.err;
      fs::create_directories(dir_.file(shell));
      std::ofstream(script(shell)) << r.out;
    }
    // GPUs: those the NVIDIA driver lists here, else a stand-in nvidia-smi's two.
    fs::create_directories(dir_.file("bin"));
    std::ofstream(dir_.file("bin/nvidia-smi"))
        << "#!/bin/sh\necho 'GPU 0: NVIDIA H100 (UUID: GPU-0)'\n"
           "echo 'GPU 1: NVIDIA H100 (UUID: GPU-1)'\n";
    fs::permissions(dir_.file("bin/nvidia-smi"), fs::perms::owner_all);
    std::error_code ec;
    std::size_t gpus = 0;
    for (const auto& e : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
      (void)e;
      ++gpus;
    }
    if (gpus == 0) gpus = 2;
    for (std::size_t i = 0; i < gpus; ++i) gpus_.insert(std::to_string(i));
    // Recordings beside other files.
    fs::create_directories(dir_.file("runs/old"));
    std::ofstream(dir_.file("runs/a.db")) << "";
    std::ofstream(dir_.file("runs/notes.txt")) << "";
  }

  [[nodiscard]] std::string script(const std::string& shell) const {
    return dir_.file(shell + (shell == "zsh" ? "/_dltune" : "/dltune." + shell));
  }
  [[nodiscard]] std::map<std::string, std::string> environment() const {
    return {{"PATH", dir_.file("bin") + ":" + std::getenv("PATH")},
            {"XDG_CONFIG_HOME", dir_.file("config")},
            {"XDG_DATA_HOME", dir_.file("data")}};
  }

  // What bash's completion function answers for `words` (the last one is completed).
  Words bash(std::vector<std::string> words) const {
    std::vector<std::string> argv{
        "bash",
        "--norc",
        "--noprofile",
        "-c",
        "source \"$1\" || exit 3; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
        "COMPREPLY=(); _dltune; printf '%s\\n' \"${COMPREPLY[@]}\"",
        "bash",
        script("bash")};
    argv.insert(argv.end(), words.begin(), words.end());
    const auto r = run(argv, environment());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return lines_of(r.out);
  }
  Words fish(const std::string& line) const {
    const auto r = run({"fish", "--no-config", "-c", "source $argv[1]; and complete -C $argv[2]",
                        script("fish"), line},
                       environment());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return lines_of(r.out);
  }
  Words zsh(const std::string& line, bool sourced = false) const {
    std::vector<std::string> argv{
        "zsh", "-f", std::string(DLTUNE_SOURCE_DIR) + "/tests/support/zsh_complete.zsh",
        script("zsh"), line};
    if (sourced) argv.push_back("source");
    const auto r = run(argv, environment(), 30);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return lines_of(r.out);
  }

  TempDir dir_;
  Words gpus_;
};

const Words kTune{"plan", "apply", "rollback", "status", "history"};
const Words kColors{"auto", "always", "never"};
const Words kShells{"bash", "zsh", "fish"};
const Words kProfiles{"defaults", "distributed", "training"};

TEST_F(Completion, EachScriptIsTheOneTheBuildWritesAndAnUnknownShellIsRefused) {
  const auto docs = dir_.file("docs");
  ASSERT_EQ(run({DLTUNE_BINARY, "__generate-docs", docs}).exit_code, 0);
  EXPECT_EQ(read_file(script("bash")), read_file(docs + "/completions/dltune.bash"));
  EXPECT_EQ(read_file(script("zsh")), read_file(docs + "/completions/_dltune"));
  EXPECT_EQ(read_file(script("fish")), read_file(docs + "/completions/dltune.fish"));
  const auto r = run({DLTUNE_BINARY, "completion", "tcsh"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("dltune completion: shell tcsh: expected bash, zsh or fish"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_THAT(run({DLTUNE_BINARY, "--help"}).out, HasSubstr("completion"));
}

TEST_F(Completion, BashCompletesCommandsOptionsAndTheirValues) {
  // Loaded as a user loads it: `source <(dltune completion bash)`.
  const auto loaded =
      run({"bash", "--norc", "--noprofile", "-c",
           "source <(\"$1\" completion bash) && complete -p dltune", "bash", DLTUNE_BINARY});
  EXPECT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_EQ(loaded.out, "complete -F _dltune dltune\n");

  EXPECT_EQ(bash({"dltune", "ch"}), Words{"check"});
  EXPECT_EQ(bash({"dltune", "tune", "apply", "--only", "vm.sw"}), Words{"vm.swappiness"});
  EXPECT_EQ(bash({"dltune", "tune", "apply", "--only", "vm.swappiness,vm.dirty_r"}),
            Words{"vm.swappiness,vm.dirty_ratio"});
  EXPECT_EQ(bash({"dltune", "tune", ""}), kTune);
  EXPECT_EQ(bash({"dltune", "tune", "--state-dir", "/tmp", "apply", "--p"}),
            (Words{"--profile", "--persist"}));
  EXPECT_EQ(bash({"dltune", "check", "--color", ""}), kColors);
  // "--color=al" arrives in three words: COMP_WORDBREAKS holds "=".
  EXPECT_EQ(bash({"dltune", "check", "--color", "=", "al"}), Words{"always"});
  EXPECT_EQ(bash({"dltune", "completion", ""}), kShells);
  EXPECT_THAT(bash({"dltune", "check", "-p", ""}), IsSupersetOf(kProfiles));
  EXPECT_EQ(bash({"dltune", "run", "--gpus", ""}), gpus_);
  EXPECT_EQ(base_names(bash({"dltune", "report", dir_.file("runs/")})), (Words{"a.db", "old"}));
  EXPECT_EQ(bash({"dltune", "help", "tu"}), Words{"tune"});
  EXPECT_THAT(bash({"dltune", "run", "--memory", "4G", "--", "bas"}), Contains("bash"));
}

TEST_F(Completion, ZshCompletesCommandsOptionsAndTheirValues) {
  if (!on_path("zsh")) GTEST_SKIP() << "zsh is not installed (apt-get install zsh)";
  const auto syntax = run({"zsh", "-n", script("zsh")});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  EXPECT_EQ(zsh("dltune ch"), Words{"check"});
  EXPECT_EQ(zsh("dltune tune apply --only vm.sw"), Words{"vm.swappiness"});
  // Sourced after compinit, as `source <(dltune completion zsh)`.
  EXPECT_EQ(zsh("dltune tune apply --only vm.sw", true), Words{"vm.swappiness"});
  EXPECT_EQ(zsh("dltune tune apply --only vm.swappiness,vm.dirty_r"),
            Words{"vm.swappiness,vm.dirty_ratio"});
  EXPECT_EQ(zsh("dltune tune "), kTune);
  EXPECT_EQ(zsh("dltune check --color "), kColors);
  EXPECT_EQ(zsh("dltune completion "), kShells);
  EXPECT_THAT(zsh("dltune check -p "), IsSupersetOf(kProfiles));
  EXPECT_EQ(zsh("dltune run --gpus "), gpus_);
  EXPECT_EQ(base_names(zsh("dltune report " + dir_.file("runs/"))), (Words{"a.db", "old"}));
}

TEST_F(Completion, FishCompletesCommandsOptionsAndTheirValues) {
  if (!on_path("fish")) GTEST_SKIP() << "fish is not installed (apt-get install fish)";
  const auto syntax = run({"fish", "--no-config", "-n", script("fish")});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  EXPECT_EQ(fish("dltune ch"), Words{"check"});
  EXPECT_EQ(fish("dltune tune apply --only vm.sw"), Words{"vm.swappiness"});
  EXPECT_EQ(fish("dltune tune apply --only vm.swappiness,vm.dirty_r"),
            Words{"vm.swappiness,vm.dirty_ratio"});
  EXPECT_EQ(fish("dltune tune "), kTune);
  EXPECT_EQ(fish("dltune tune --state-dir /tmp apply --p"), (Words{"--profile", "--persist"}));
  EXPECT_EQ(fish("dltune check --color "), kColors);
  EXPECT_EQ(fish("dltune check --color=al"), Words{"--color=always"});
  EXPECT_EQ(fish("dltune completion "), kShells);
  EXPECT_THAT(fish("dltune check -p "), IsSupersetOf(kProfiles));
  EXPECT_EQ(fish("dltune run --gpus "), gpus_);
  EXPECT_EQ(base_names(fish("dltune report " + dir_.file("runs/"))), (Words{"a.db", "old"}));
  EXPECT_THAT(fish("dltune run --memory 4G -- bas"), Contains("bash"));
}

}  // namespace

}  // namespace completion_cli_test

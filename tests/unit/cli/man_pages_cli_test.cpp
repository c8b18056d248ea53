// The man pages that the build writes (`dltune __generate-docs DIR`, CMakeLists.txt): one for
// dltune and one per command, made from the command definitions, each rendered by man-db's man
// without a warning from groff, with every option of its command and the sections a user looks
// for.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "options/command_text.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace man_pages_cli_test {

namespace {

namespace fs = std::filesystem;
using dltune::testing::run;
using dltune::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

bool on_path(const std::string& program) {
  std::stringstream path(std::getenv("PATH") != nullptr ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& f : dltune::options::embedded_commands()) names.emplace_back(f.name);
  return names;
}

class ManPages : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = run({DLTUNE_BINARY, "__generate-docs", dir_.file("docs")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
  [[nodiscard]] std::string page(const std::string& name) const {
    return dir_.file("docs/man/man1/" + name + ".1");
  }
  // The page as man shows it on an 80-column terminal, and groff's warnings.
  [[nodiscard]] dltune::testing::RunResult rendered(const std::string& name) const {
    return run({"man", "--warnings", "-l", page(name)},
               {{"MANWIDTH", "80"}, {"MANPAGER", "cat"}, {"PAGER", "cat"}, {"LC_ALL", "C.UTF-8"}});
  }
  TempDir dir_;
};

TEST_F(ManPages, OnePerCommandAndTheCompletionScriptsAreWritten) {
  EXPECT_TRUE(fs::is_regular_file(page("dltune")));
  std::size_t pages = 0;
  for (const auto& entry : fs::directory_iterator(dir_.file("docs/man/man1"))) {
    EXPECT_EQ(entry.path().extension(), ".1") << entry.path();
    ++pages;
  }
  EXPECT_EQ(pages, command_names().size() + 1);
  for (const auto& name : command_names())
    EXPECT_TRUE(fs::is_regular_file(page("dltune-" + name))) << name;
  for (const auto* script : {"dltune.bash", "_dltune", "dltune.fish"})
    EXPECT_GT(fs::file_size(dir_.file(std::string("docs/completions/") + script)), 1000u) << script;
}

TEST_F(ManPages, EveryPageRendersWithoutAWarningFromGroff) {
  if (!on_path("man")) GTEST_SKIP() << "man (Debian's man-db) is not installed";
  std::vector<std::string> names{"dltune"};
  for (const auto& n : command_names()) names.push_back("dltune-" + n);
  for (const auto& name : names) {
    const auto r = rendered(name);
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    EXPECT_EQ(r.err, "") << name << ": groff warned";
    for (const auto* section :
         {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"})
      EXPECT_THAT(r.out, HasSubstr(std::string("\n") + section + "\n")) << name;
    EXPECT_THAT(r.out, HasSubstr("\n       " + name + " - ")) << name << ": the NAME line";
    // Nothing of the roff is left over (an unknown macro or a stray escape shows as text).
    for (const auto* escape : {"\\f", "\\(", "\\-", "\\&", "\\e"})
      EXPECT_THAT(r.out, Not(HasSubstr(escape))) << name;
    EXPECT_THAT(r.out, Not(HasSubstr("\n."))) << name;
  }
  // The man database reads each page's NAME line as "name - summary".
  if (on_path("lexgrog")) {
    const auto r = run({"lexgrog", page("dltune-check")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"dltune-check - Audit the host against a training profile\""));
  }
}

TEST_F(ManPages, EachCommandsPageHasEveryOptionItsCommandLineTakes) {
  if (!on_path("man")) GTEST_SKIP() << "man (Debian's man-db) is not installed";
  CLI::App app{"dltune"};
  dltune::cli::GlobalOptions global;
  const auto commands = dltune::cli::make_commands(app, global);
  for (const auto* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    const auto name = command->get_name();
    const auto r = rendered("dltune-" + name);
    std::vector<const CLI::App*> apps{command};
    for (const auto* s : command->get_subcommands([](const CLI::App*) { return true; })) {
      apps.push_back(s);
      EXPECT_THAT(r.out, HasSubstr("dltune " + name + " " + s->get_name())) << name;
    }
    for (const auto* a : apps)
      for (const auto* o : a->get_options()) {
        for (const auto& l : o->get_lnames()) EXPECT_THAT(r.out, HasSubstr("--" + l)) << name;
        for (const auto& s : o->get_snames())
          EXPECT_THAT(r.out, HasSubstr("\n       -" + s)) << name;
        if (o->get_positional()) EXPECT_THAT(r.out, HasSubstr(o->get_type_name())) << name;
      }
    const auto text = dltune::options::command_text(name);
    ASSERT_TRUE(text) << text.error().message();
    if (text->examples) EXPECT_THAT(r.out, HasSubstr("\nEXAMPLES\n")) << name;
    if (text->environment) EXPECT_THAT(r.out, HasSubstr("\nENVIRONMENT\n")) << name;
    EXPECT_THAT(r.out, HasSubstr("dltune(1)")) << name << ": SEE ALSO";
  }
}

TEST_F(ManPages, TheProgramsPageListsTheCommandsFilesAndEnvironment) {
  if (!on_path("man")) GTEST_SKIP() << "man (Debian's man-db) is not installed";
  const auto r = rendered("dltune");
  for (const auto& name : command_names()) {
    EXPECT_THAT(r.out, HasSubstr("\n       " + name)) << name << " in COMMANDS";
    EXPECT_THAT(r.out, HasSubstr("dltune-" + name + "(1)")) << name << " in SEE ALSO";
  }
  for (const auto* text :
       {"\nFILES\n", "/var/lib/dltune/state.db", "/etc/dltune/profiles/NAME.toml",
        "/run/dltune/capture", "\nENVIRONMENT\n", "NO_COLOR", "DLTUNE_NVML_LIBRARY", "SLURM_CONF",
        "\nEXIT STATUS\n", "2 bad input", "tune plan|apply|rollback|status|history"})
    EXPECT_THAT(r.out, HasSubstr(text));
  // Where a command's page lists a file or variable of its own.
  EXPECT_THAT(rendered("dltune-check").out, HasSubstr("NO_COLOR"));
  EXPECT_THAT(rendered("dltune-check").out, HasSubstr("/etc/dltune/profiles/NAME.toml"));
  EXPECT_THAT(rendered("dltune-tune").out, HasSubstr("/var/lib/dltune/state.db"));
  EXPECT_THAT(rendered("dltune-env").out, HasSubstr("DLTUNE_NVML_LIBRARY"));
  EXPECT_THAT(rendered("dltune-slurm").out, HasSubstr("SLURMD_NODENAME"));
}

TEST_F(ManPages, TheGeneratorIsHiddenAndNeedsItsDirectory) {
  const auto help = run({DLTUNE_BINARY, "--help"});
  EXPECT_THAT(help.out + help.err, Not(HasSubstr("generate")));
  const auto bare = run({DLTUNE_BINARY, "__generate-docs"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_THAT(bare.err, HasSubstr("unknown command __generate-docs"));
  // A directory that cannot be made: exit 1, naming it.
  std::ofstream(dir_.file("file")) << "x";
  const auto r = run({DLTUNE_BINARY, "__generate-docs", dir_.file("file") + "/docs"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(dir_.file("file") + "/docs"));
}

TEST_F(ManPages, TheBuildWritesThemBesideTheProgram) {
  // CMakeLists.txt runs the generator each time dltune is linked, into the build tree's doc/,
  // where the install rules take them from.
  const auto built = fs::path(DLTUNE_BINARY).parent_path() / "doc";
  ASSERT_TRUE(fs::is_directory(built / "man" / "man1")) << built;
  for (const auto* file :
       {"man/man1/dltune.1", "man/man1/dltune-check.1", "completions/dltune.bash",
        "completions/_dltune", "completions/dltune.fish"})
    EXPECT_EQ(read_file(built / file), read_file(dir_.file(std::string("docs/") + file))) << file;
}

}  // namespace

}  // namespace man_pages_cli_test

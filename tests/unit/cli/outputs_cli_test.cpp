// Every command that writes a local file refuses, before doing anything, a target that is not a
// regular file (a device, FIFO, directory), with or without --force: exit 2, the target named,
// the target unchanged and nothing left beside it.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/dir_listing.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace outputs_cli_test {

namespace {

namespace fs = std::filesystem;
using dltune::testing::kind_of;
using dltune::testing::names_in;
using dltune::testing::run;
using dltune::testing::TempDir;
using dltune::testing::write_recording;
using ::testing::HasSubstr;

// Each command line with OUT where its output file goes.
std::vector<std::vector<std::string>> writers(const std::string& rec) {
  return {
      {"report", rec, "-o", "OUT"},
      {"report", rec, "-o", "OUT", "--force"},
      {"compare", rec, rec, "--html", "OUT", "--force"},
      {"capture", "-o", "OUT"},
      {"capture", "-o", "OUT", "--force"},
      {"baseline", "-o", "OUT"},
      {"baseline", "-o", "OUT", "--force"},
      {"record", "-o", "OUT", "--force", "--duration", "1s"},
      {"run", "--json", "OUT", "--force", "--", "true"},
      {"run", "--record", "OUT", "--", "true"},
      {"profile", "--record", "OUT", "--", "true"},
  };
}

TEST(OutputsCli, NoCommandWritesOverADeviceAFifoOrADirectory) {
  TempDir dir;
  const auto rec = dir.file("run.db");
  write_recording(rec, 6);
  std::vector<std::pair<std::string, std::string>> targets = {{dir.file("fifo"), "a FIFO"},
                                                              {dir.file("sub"), "a directory"}};
  ASSERT_EQ(::mkfifo(targets[0].first.c_str(), 0644), 0);
  fs::create_directory(targets[1].first);
  if (::mknod(dir.file("full").c_str(), S_IFCHR | 0666, ::makedev(1, 7)) == 0)
    targets.emplace_back(dir.file("full"), "a character device");
  else
    std::cout << "[ skipped part ] no device node: mknod needs root\n";
  auto commands = writers(rec);
  // bench refuses to start without root before it looks at its options.
  if (::geteuid() == 0)
    commands.push_back(
        {"bench", "--html", "OUT", "--force", "--run-b=--cpu-quota=0.5", "--", "true"});
  else
    std::cout << "[ skipped part ] bench: needs root\n";
  const auto before = names_in(dir.file(""));
  for (const auto& [target, kind] : targets)
    for (auto argv : commands) {
      for (auto& a : argv)
        if (a == "OUT") a = target;
      const mode_t was = kind_of(target);
      argv.insert(argv.begin(), DLTUNE_BINARY);
      const auto r = run(argv);
      const auto line = argv[1] + " to " + kind;
      EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.err;
      EXPECT_THAT(r.err, HasSubstr(target + " is " + kind + ", not a regular file")) << line;
      EXPECT_THAT(r.err, HasSubstr("dltune " + argv[1] + ":")) << line;
      EXPECT_EQ(kind_of(target), was) << line;
      EXPECT_EQ(names_in(dir.file("")), before) << line;
    }
}

// A directory the command cannot write in (here a read-only file system: root writes in any
// directory otherwise) is refused before the job or the sampling starts: exit 2, the directory
// named, nothing run.
TEST(OutputsCli, ADirectoryThatCannotBeWrittenInIsRefusedFirst) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: mounts a read-only tmpfs";
  TempDir dir;
  const auto rec = dir.file("run.db");
  write_recording(rec, 6);
  const auto ro = dir.file("ro");
  fs::create_directory(ro);
  ASSERT_EQ(::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=64k"), 0);
  struct Unmount {
    std::string at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{ro};
  const auto marker = dir.file("ran");
  for (auto argv : writers(rec)) {
    for (auto& a : argv)
      if (a == "OUT") a = ro + "/out";
    // A job that would leave a trace if it ran.
    if (argv.back() == "true") argv.back() = "touch", argv.push_back(marker);
    argv.insert(argv.begin(), DLTUNE_BINARY);
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << argv[1] << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("its directory " + ro + " is not writable: Read-only file system"))
        << argv[1];
    EXPECT_FALSE(fs::exists(marker)) << argv[1] << " ran the job";
  }
}

TEST(OutputsCli, AnExistingFileIsReplacedOnlyWithForceTheSameForEveryCommand) {
  TempDir dir;
  const auto rec = dir.file("run.db");
  write_recording(rec, 6);
  const auto target = dir.file("existing");
  for (auto argv :
       std::vector<std::vector<std::string>>{{"report", rec, "-o", "OUT"},
                                             {"capture", "-o", "OUT"},
                                             {"record", "-o", "OUT", "--duration", "1s"},
                                             {"run", "--json", "OUT", "--", "true"},
                                             {"compare", rec, rec, "--html", "OUT"}}) {
    std::ofstream(target) << "mine";
    for (auto& a : argv)
      if (a == "OUT") a = target;
    argv.insert(argv.begin(), DLTUNE_BINARY);
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << argv[1] << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(target + " exists; use --force to replace it")) << argv[1];
    std::ifstream in(target);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "mine") << argv[1];
  }
}

// An output that is one of the inputs is refused, --force or not, also through a link: the
// recording stays a recording.
TEST(OutputsCli, TheOutputIsNeverOneOfTheInputs) {
  TempDir dir;
  const auto rec = dir.file("run.db");
  write_recording(rec, 6);
  const auto link = dir.file("alias.db");
  std::filesystem::create_symlink(rec, link);
  const auto before = std::filesystem::file_size(rec);
  for (auto argv : std::vector<std::vector<std::string>>{
           {"report", rec, "-o", rec, "--force"},
           {"report", rec, "-o", link, "--force"},
           {"report", rec, "-o", rec, "--format", "json"},
           {"compare", rec, rec, "--html", rec, "--force"},
           {"compare", "-a", rec, "-a", rec, "-b", rec, "--html", link, "--force"}}) {
    argv.insert(argv.begin(), DLTUNE_BINARY);
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(argv) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is also an input")) << r.err;
    EXPECT_EQ(std::filesystem::file_size(rec), before);
  }
  EXPECT_EQ(run({DLTUNE_BINARY, "report", rec, "-o", dir.file("r.html")}).exit_code, 0);
}

// A FIFO (a named pipe, `<(...)`) or a device given as an input file is refused at once,
// naming what it is, instead of waiting forever for a writer.
TEST(OutputsCli, AFifoOrADeviceAsAnInputIsRefusedAtOnce) {
  TempDir dir;
  const auto fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto out = dir.file("out.html");
  for (auto argv : std::vector<std::vector<std::string>>{
           {"report", fifo, "-o", out},
           {"record", "--replay", fifo, "--once"},
           {"profile", fifo},
           {"compare", fifo, fifo},
           {"doctor", "--recording", fifo},
           {"check", "--baseline", fifo},
           {"check", "--baseline", "/dev/zero"},
           {"serve", "--once", "--no-gpus", "--no-check", "--web-config", fifo}}) {
    argv.insert(argv.begin(), DLTUNE_BINARY);
    const auto r = run(argv, {}, 20);
    const std::string what = ::testing::PrintToString(argv);
    EXPECT_NE(r.term_signal, SIGKILL) << what << " waited for a writer";
    EXPECT_NE(r.exit_code, 0) << what << r.err;
    EXPECT_THAT(r.err, ::testing::AnyOf(HasSubstr("FIFO"), HasSubstr("character device"),
                                        HasSubstr("not a regular file")))
        << what << r.err;
  }
}

// Standard output that cannot be written (a full disk: /dev/full): every command that prints
// exits 1 saying so, never aborts (134) and never exits 0 with its output lost.
TEST(OutputsCli, StandardOutputThatCannotBeWrittenIsAFailureNamedOnce) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  const std::string fixture = std::string(DLTUNE_FIXTURES) + "/roots/gpu8-numa2-cgv2";
  const std::vector<std::vector<std::string>> commands = {
      {"env", "--json", "--root", fixture},
      {"env", "--root", fixture},
      {"check", "--json", "--root", fixture},
      {"profiles"},
      {"profiles", "show", "training"},
      {"completion", "bash"},
      {"baseline", "--root", fixture},
      {"serve", "--once", "--no-gpus", "--no-check", "--interval", "100ms"},
      {"--help"},
  };
  for (const auto& words : commands) {
    // A shell with a fixed script: the words are its arguments, never its text.
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" > /dev/full", "sh",
                                     DLTUNE_BINARY};
    argv.insert(argv.end(), words.begin(), words.end());
    const auto r = run(argv);
    const std::string what = ::testing::PrintToString(words);
    if (words.front() == "--help") {  // CLI11's own printing: at least no abort
      EXPECT_NE(r.exit_code, 134) << what << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 1) << what << r.err;
    EXPECT_THAT(r.err, HasSubstr("dltune: cannot write the output: No space left on device"))
        << what;
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << what << r.err;
  }
}

TEST(OutputsCli, CaptureStreamsToStandardOutputWithTheDash) {
  const auto r = run({DLTUNE_BINARY, "capture", "-o", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(r.out.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(r.out[0]), 0x1f);  // gzip's magic number
  EXPECT_EQ(static_cast<unsigned char>(r.out[1]), 0x8b);
  EXPECT_THAT(r.err, HasSubstr("wrote -:"));
}

TEST(OutputsCli, ARecordingOfACgroupThatIsNotThereLeavesNoFile) {
  TempDir dir;
  const auto out = dir.file("x.db");
  const auto r =
      run({DLTUNE_BINARY, "record", "-o", out, "--cgroup", "/no/such/group", "--duration", "1s"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--cgroup /no/such/group"));
  EXPECT_TRUE(names_in(dir.file("")).empty());
}

}  // namespace

}  // namespace outputs_cli_test

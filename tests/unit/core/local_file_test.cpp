// core/local_file: every output file dltune writes lands whole, as a regular file, and never
// replaces what is not one (a device, FIFO, socket, directory), with or without --force.
#include "core/local_file.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/private_files.hpp"
#include "support/dir_listing.hpp"
#include "support/in_child.hpp"
#include "unit/report/report_samples.hpp"

namespace local_file_test {

namespace {

namespace fs = std::filesystem;
using dltune::local_file::output_target;
using dltune::local_file::PendingFile;
using dltune::testing::kind_of;
using dltune::testing::names_in;
using dltune::testing::TempDir;
using ::testing::HasSubstr;

dltune::Result<void> write_new(const std::string& path, bool replace) {
  return dltune::local_file::write(path, replace, [](std::ostream& o) { o << "new"; });
}

TEST(LocalFile, ANewFileIsWrittenWholeAndAnExistingOneOnlyWhenReplacing) {
  TempDir dir;
  const auto path = dir.file("out.html");
  ASSERT_TRUE(write_new(path, false));
  EXPECT_EQ(dltune::testing::slurp_file(path), "new");
  std::ofstream(path) << "old";
  const auto refused = write_new(path, false);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr(path + " exists; use --force"));
  EXPECT_EQ(dltune::testing::slurp_file(path), "old");
  ASSERT_TRUE(write_new(path, true));
  EXPECT_EQ(dltune::testing::slurp_file(path), "new");
  EXPECT_EQ(names_in(dir.file("")), std::set<std::string>{"out.html"});
}

TEST(LocalFile, AMissingDirectoryIsNamed) {
  TempDir dir;
  const auto r = output_target(dir.file("no/such/out.html"), true);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("there is no directory " + dir.file("no/such")));
}

TEST(LocalFile, NothingButARegularFileIsEverReplacedEvenWithForce) {
  TempDir dir;
  const auto fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto sub = dir.file("sub");
  fs::create_directory(sub);
  const auto sock = dir.file("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  sock.copy(addr.sun_path, sock.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::vector<std::pair<std::string, std::string>> cases = {
      {fifo, "a FIFO"}, {sub, "a directory"}, {sock, "a socket"}};
  // A character device of our own (the same numbers as /dev/full): needs root for mknod.
  const auto dev = dir.file("full");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, ::makedev(1, 7)) == 0)
    cases.emplace_back(dev, "a character device");
  else
    std::cout << "[ skipped part ] no device node: mknod needs root\n";
  const auto before = names_in(dir.file(""));
  for (const auto& [path, kind] : cases)
    for (const bool replace : {false, true}) {
      const mode_t was = kind_of(path);
      const auto r = write_new(path, replace);
      ASSERT_FALSE(r) << path;
      EXPECT_THAT(r.error().message(), HasSubstr(path + " is " + kind + ", not a regular file"));
      EXPECT_EQ(kind_of(path), was) << path;
      EXPECT_EQ(names_in(dir.file("")), before) << "a temporary file was left behind";
    }
  ::close(fd);
}

TEST(LocalFile, ASymlinkIsReplacedOnlyWithForceAndThenAsItsRegularTarget) {
  TempDir dir;
  const auto real = dir.file("real.html");
  std::ofstream(real) << "old";
  const auto link = dir.file("link.html");
  fs::create_symlink(real, link);
  const auto refused = write_new(link, false);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("is a symbolic link; use --force"));
  EXPECT_EQ(dltune::testing::slurp_file(real), "old");
  ASSERT_TRUE(write_new(link, true));
  EXPECT_EQ(kind_of(link), S_IFLNK);  // the link stays, its target is the new file
  EXPECT_EQ(dltune::testing::slurp_file(real), "new");

  const auto fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto to_fifo = dir.file("to-fifo");
  fs::create_symlink(fifo, to_fifo);
  const auto r = write_new(to_fifo, true);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("(a symbolic link) is a FIFO"));
  EXPECT_EQ(kind_of(fifo), S_IFIFO);

  const auto dangling = dir.file("dangling");
  fs::create_symlink(dir.file("nothing"), dangling);
  const auto d = write_new(dangling, true);
  ASSERT_FALSE(d);
  EXPECT_THAT(d.error().message(), HasSubstr("a symbolic link to nothing"));
  EXPECT_FALSE(fs::exists(dir.file("nothing")));
}

// Root writing through a link that another user made (in /tmp, in a job's directory) would
// replace whatever that user points it at: refused, --force or not, the target untouched.
TEST(LocalFile, AnotherUsersSymlinkIsNeverWrittenThrough) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give a link to another user";
  TempDir dir;
  const auto real = dir.file("shadow");
  std::ofstream(real) << "precious";
  const auto link = dir.file("report.html");
  fs::create_symlink(real, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  const auto r = write_new(link, true);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("is a symbolic link of uid 65534, not of this user"));
  EXPECT_EQ(dltune::testing::slurp_file(real), "precious");
  EXPECT_EQ(kind_of(link), S_IFLNK);
  // The user's own link is followed, as before.
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  ASSERT_TRUE(write_new(link, true));
  EXPECT_EQ(dltune::testing::slurp_file(real), "new");
}

// A state directory (tune's journal and backups, the Slurm watcher's records) is trusted only
// when it is this user's; one open to others is closed, saying so.
TEST(PrivateFiles, AnExistingStateDirectoryMustBeThisUsersAndPrivate) {
  TempDir dir;
  const auto state = dir.file("state");
  ASSERT_EQ(::mkdir(state.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(state.c_str(), 0755), 0);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(dltune::private_files::make_private_dir(state));
  const auto said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, HasSubstr(state + " was mode 0755, open to other users: set to 0700"));
  struct stat st {};
  ASSERT_EQ(::stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(dltune::private_files::make_private_dir(state));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "private already: nothing to say";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give a directory to another user";
  ASSERT_EQ(::chown(state.c_str(), 65534, 65534), 0);
  const auto r = dltune::private_files::make_private_dir(state);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("belongs to uid 65534, not to this user"));
  // A link of another user's to a directory of this user's is refused too.
  ASSERT_EQ(::chown(state.c_str(), 0, 0), 0);
  const auto link = dir.file("state-link");
  fs::create_symlink(state, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  const auto l = dltune::private_files::make_private_dir(link);
  ASSERT_FALSE(l);
  EXPECT_THAT(l.error().message(), HasSubstr("is a symbolic link of uid 65534"));
}

TEST(LocalFile, TheRenameRefusesATargetThatBecameAFifoMeanwhile) {
  TempDir dir;
  const auto path = dir.file("out.json");
  auto pending = PendingFile::beside(path);
  ASSERT_TRUE(pending);
  std::ofstream(pending->temp_path()) << "new";
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  const auto r = pending->commit(true);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("is a FIFO"));
  EXPECT_EQ(kind_of(path), S_IFIFO);
  EXPECT_EQ(names_in(dir.file("")), std::set<std::string>{"out.json"});
}

TEST(LocalFile, StandardOutputIsTheDash) {
  const auto r = output_target("-", false);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "-");
  EXPECT_FALSE(output_target("", true));
}

}  // namespace

TEST(TempDirectory, PrivateAndGoneWithWhatItHolds) {
  std::string path;
  {
    auto d = dltune::local_file::TempDirectory::make("dltune-test");
    ASSERT_TRUE(d) << d.error().message();
    path = d->path();
    EXPECT_EQ(path.rfind("/tmp/dltune-test-", 0), 0u) << path;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    std::ofstream(path + "/job.db") << "x";
    std::filesystem::create_directory(path + "/sub");
    auto moved = std::move(*d);  // the moved-from one removes nothing
    EXPECT_TRUE(std::filesystem::exists(path + "/job.db"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  auto bad = dltune::local_file::TempDirectory::make("no/such/dir/x");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("cannot make a temporary directory"), std::string::npos);
}

}  // namespace local_file_test

// The ELF symbol reader on a real interpreter and on broken bytes; /proc/PID/maps; the version
// in an interpreter's file name; the interpreter's file as the process sees it (host trees, and
// this kernel's: the file mapped, not what its path names now).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/core.h>

#include "host/root.hpp"
#include "pystack/elf.hpp"
#include "pystack/maps.hpp"
#include "pystack/process.hpp"
#include "support/temp_tree.hpp"

namespace dltune::pystack::elf_maps_test {
namespace {

std::string file_bytes(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ElfSymbols, FindsPyRuntimeInDebiansPython) {
  const auto bytes = file_bytes("/usr/bin/python3.11");
  if (bytes.empty()) GTEST_SKIP() << "no /usr/bin/python3.11";
  const auto elf = read_elf(bytes);
  ASSERT_TRUE(elf) << elf.error().message();
  // Debian links it at a fixed address (ET_EXEC, no load bias); pyenv's is a PIE.
  const auto runtime = find_symbol(bytes, "_PyRuntime");
  ASSERT_TRUE(runtime) << runtime.error().message();
  ASSERT_TRUE(*runtime);
  EXPECT_GT(**runtime, elf->first_load);
  const auto version = find_symbol(bytes, "Py_Version");
  ASSERT_TRUE(version && *version);
  EXPECT_NE(**version, **runtime);
  const auto none = find_symbol(bytes, "no_such_symbol_anywhere");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(ElfSymbols, TruncatedOrCorruptBytesGiveAnErrorOrNothing) {
  auto bytes = file_bytes("/usr/bin/python3.11");
  if (bytes.empty()) bytes = file_bytes("/bin/true");
  ASSERT_FALSE(bytes.empty());
  EXPECT_FALSE(read_elf(""));
  EXPECT_FALSE(read_elf("#!/bin/sh\n"));
  EXPECT_FALSE(find_symbol(std::string("\x7f"
                                       "ELF",
                                       4),
                           "_PyRuntime"));
  for (std::size_t size : {std::size_t{16}, std::size_t{63}, std::size_t{64}, std::size_t{200},
                           std::size_t{4096}, bytes.size() / 2, bytes.size() - 1}) {
    const auto cut = std::string_view(bytes).substr(0, size);
    (void)read_elf(cut);
    const auto s = find_symbol(cut, "_PyRuntime");
    EXPECT_TRUE(!s || !*s) << "a symbol found in the first " << size << " bytes";
  }
  // Section headers pointing past the end.
  auto corrupt = bytes;
  const std::uint64_t far = 1ull << 62;
  std::memcpy(corrupt.data() + 40, &far, 8);
  EXPECT_FALSE(find_symbol(corrupt, "_PyRuntime"));
  // A 32-bit or big-endian file.
  corrupt = bytes;
  corrupt[4] = 1;
  EXPECT_FALSE(read_elf(corrupt));
}

TEST(ProcMaps, ParsesEachKindOfLine) {
  const auto maps = parse_maps(
      "55d4c8a00000-55d4c8a6e000 r--p 00000000 08:01 1835237                    "
      "/usr/bin/python3.11\n"
      "55d4c8a6e000-55d4c8d0d000 r-xp 0006e000 08:01 1835237                    "
      "/usr/bin/python3.11\n"
      "55d4ca1f3000-55d4ca2d0000 rw-p 00000000 00:00 0                          [heap]\n"
      "7f3c1c000000-7f3c1c021000 rw-p 00000000 00:00 0 \n"
      "7f3c20000000-7f3c20001000 r--s 00000000 00:05 99 /dev/shm/a file (deleted)\n");
  ASSERT_TRUE(maps) << maps.error().message();
  ASSERT_EQ(maps->size(), 5u);
  EXPECT_EQ((*maps)[0].start, 0x55d4c8a00000u);
  EXPECT_EQ((*maps)[0].path, "/usr/bin/python3.11");
  EXPECT_TRUE((*maps)[1].executable);
  EXPECT_EQ((*maps)[1].offset, 0x6e000u);
  EXPECT_EQ((*maps)[1].dev_major, 8u);
  EXPECT_EQ((*maps)[1].dev_minor, 1u);
  EXPECT_EQ((*maps)[1].inode, 1835237u);
  EXPECT_EQ((*maps)[2].path, "[heap]");
  EXPECT_TRUE((*maps)[3].path.empty());
  EXPECT_EQ((*maps)[4].path, "/dev/shm/a file (deleted)");
  EXPECT_EQ(load_start(*maps, "/usr/bin/python3.11"), 0x55d4c8a00000u);
  EXPECT_EQ(interpreter_candidates(*maps), std::vector<std::string>{"/usr/bin/python3.11"});
}

TEST(ProcMaps, RefusesLinesThatDoNotParse) {
  EXPECT_FALSE(parse_maps("nonsense\n"));
  EXPECT_FALSE(parse_maps("2000-1000 r--p 0 08:01 1 /x\n"));  // end before start
  EXPECT_FALSE(parse_maps("1000-2000 r--p 0 0801 1 /x\n"));
  EXPECT_FALSE(parse_maps("1000-2000 r--p 0 0g:01 1 /x\n"));  // a device that is not hex
  const auto e = parse_maps("1000-2000 r--p 0 08:01 1 /x\nbad\n");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("line 2"), std::string::npos);
  EXPECT_TRUE(parse_maps(""));
}

TEST(PythonFiles, TheVersionInAnInterpretersName) {
  EXPECT_EQ(version_from_name("python3.11"), (std::pair{3, 11}));
  EXPECT_EQ(version_from_name("libpython3.12.so.1.0"), (std::pair{3, 12}));
  EXPECT_EQ(version_from_name("libpython3.9d.so"), (std::pair{3, 9}));
  EXPECT_FALSE(version_from_name("python3"));
  EXPECT_FALSE(version_from_name("python3.11-config"));
  EXPECT_FALSE(version_from_name("libc.so.6"));
  std::vector<Mapping> maps(3);
  maps[0].path = "/opt/py/bin/python3.11";
  maps[1].path = "/opt/py/lib/libpython3.11.so.1.0";
  maps[2].path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  EXPECT_EQ(
      interpreter_candidates(maps),
      (std::vector<std::string>{"/opt/py/lib/libpython3.11.so.1.0", "/opt/py/bin/python3.11"}));
}

Mapping at(const std::string& path) {
  Mapping m;
  m.path = path;
  return m;
}

TEST(InterpreterFile, IsReadThroughTheProcesssRootFirst) {
  testing::TempTree tree;
  tree.write("opt/py/bin/python3.10", "this host's file")
      .write("proc/77/root/opt/py/bin/python3.10", "the process's own file")
      .write("opt/other/python3.11", "only here");
  const auto root = tree.root();
  const auto own = interpreter_file(root, 77, at("/opt/py/bin/python3.10"));
  ASSERT_TRUE(own) << own.error().message();
  EXPECT_EQ(*own, std::optional<std::string>("the process's own file"));
  // Not in the process's root: the path here.
  const auto here = interpreter_file(root, 77, at("/opt/other/python3.11"));
  ASSERT_TRUE(here) << here.error().message();
  EXPECT_EQ(*here, std::optional<std::string>("only here"));
  // Neither: nothing.
  const auto none = interpreter_file(root, 77, at("/opt/none/python3.12"));
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  // A process whose root is a link to this tree's root (as /proc/PID/root is for a process
  // of this host's mount namespace) reads the same file.
  tree.link("proc/78/root", "/");
  const auto linked = interpreter_file(root, 78, at("/opt/py/bin/python3.10"));
  ASSERT_TRUE(linked) << linked.error().message();
  EXPECT_EQ(*linked, std::optional<std::string>("this host's file"));
}

// On this kernel the file read is the one the process mapped, whatever its path names now: this
// test maps a file of its own, then puts a FIFO, a link to /dev/zero, a sparse file of 400 MiB
// and another file at its path. None blocks, follows the link, or is read; the kernel's own link
// (/proc/PID/map_files, root only) still reads the mapped file.
TEST(InterpreterFileLive, OnlyTheFileMappedIsReadWithoutBlockingOrFollowingLinks) {
  char dir_template[] = "/tmp/dltune-mapped-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, path = dir + "/libpython3.11.so.1.0";
  const std::string content(10000, 'p');
  { std::ofstream(path, std::ios::binary) << content; }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* const mapped = ::mmap(nullptr, content.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(mapped, MAP_FAILED);
  const auto start = reinterpret_cast<std::uint64_t>(mapped);
  const auto maps = parse_maps(file_bytes("/proc/self/maps"));
  ASSERT_TRUE(maps) << maps.error().message();
  const Mapping* found = mapping_of(*maps, path);
  ASSERT_NE(found, nullptr) << "the test's own mapping of " << path;
  const Mapping m = *found;
  EXPECT_EQ(m.start, start);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(m.inode, st.st_ino);
  EXPECT_EQ(m.dev_major, major(st.st_dev));
  EXPECT_EQ(m.dev_minor, minor(st.st_dev));

  const host::Root live;
  const pid_t self = ::getpid();
  // Without the kernel's link (a mapping it does not have): the path alone.
  Mapping by_path = m;
  by_path.start = by_path.end = 0;
  auto read = interpreter_file(live, self, by_path);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, std::optional<std::string>(content));

  const std::string kept = dir + "/kept";
  ASSERT_EQ(::rename(path.c_str(), kept.c_str()), 0);
  const auto refused_with = [&](const Mapping& mapping, const char* says) {
    std::string why;
    const auto r = interpreter_file(live, self, mapping, &why);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(*r) << "read " << (*r)->size() << " bytes of what is at " << path;
    EXPECT_NE(why.find(says), std::string::npos) << why;
  };
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  refused_with(by_path, "is not a regular file");
  // The kernel's link still leads to the file mapped, where this test may read it.
  const bool map_files =
      ::access(fmt::format("/proc/self/map_files/{:x}-{:x}", m.start, m.end).c_str(), F_OK) == 0;
  if (map_files) {
    read = interpreter_file(live, self, m);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(*read, std::optional<std::string>(content));
  }
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
  refused_with(by_path, "Too many levels of symbolic links");
  ASSERT_EQ(::unlink(path.c_str()), 0);
  {
    const int sparse = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(sparse, 0);
    EXPECT_EQ(::ftruncate(sparse, off_t{400} << 20), 0);
    ::close(sparse);
  }
  refused_with(by_path, "is not the file the process mapped");
  // The file mapped, grown past what an interpreter may be: refused by its size, unread.
  ASSERT_EQ(::rename(kept.c_str(), path.c_str()), 0);
  ASSERT_EQ(::truncate(path.c_str(), off_t{300} << 20), 0);
  refused_with(by_path, "over the 256 MiB");
  if (map_files) refused_with(m, "over the 256 MiB");
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(content.size())), 0);
  read = interpreter_file(live, self, by_path);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, std::optional<std::string>(content));
  ::munmap(mapped, content.size());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace dltune::pystack::elf_maps_test

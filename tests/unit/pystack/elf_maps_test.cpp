// The ELF symbol reader on a real interpreter and on broken bytes; /proc/PID/maps; the version
// in an interpreter's file name; the interpreter's file as the process sees it (host trees).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

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

TEST(InterpreterFile, IsReadThroughTheProcesssRootFirst) {
  testing::TempTree tree;
  tree.write("opt/py/bin/python3.10", "this host's file")
      .write("proc/77/root/opt/py/bin/python3.10", "the process's own file")
      .write("opt/other/python3.11", "only here");
  const auto root = tree.root();
  const auto own = interpreter_file(root, 77, "/opt/py/bin/python3.10");
  ASSERT_TRUE(own) << own.error().message();
  EXPECT_EQ(*own, std::optional<std::string>("the process's own file"));
  // Not in the process's root: the path here.
  const auto here = interpreter_file(root, 77, "/opt/other/python3.11");
  ASSERT_TRUE(here) << here.error().message();
  EXPECT_EQ(*here, std::optional<std::string>("only here"));
  // Neither: nothing.
  const auto none = interpreter_file(root, 77, "/opt/none/python3.12");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  // A process whose root is a link to this tree's root (as /proc/PID/root is for a process
  // of this host's mount namespace) reads the same file.
  tree.link("proc/78/root", "/");
  const auto linked = interpreter_file(root, 78, "/opt/py/bin/python3.10");
  ASSERT_TRUE(linked) << linked.error().message();
  EXPECT_EQ(*linked, std::optional<std::string>("this host's file"));
}

}  // namespace
}  // namespace dltune::pystack::elf_maps_test

// The frame walker and the 3.11 line table on memory images (tests/unit/pystack/image.hpp).
#include <gtest/gtest.h>

#include <cstring>

#include "pystack/debug_offsets.hpp"
#include "pystack/layout.hpp"
#include "pystack/walk.hpp"
#include "unit/pystack/image.hpp"

namespace dltune::pystack {
namespace {

using testing::python311_image;
using testing::PythonImage;
using testing::set_at;

PythonLayout layout311() {
  auto l = layout_for(3, 11);
  EXPECT_TRUE(l) << l.error().message();
  return *l;
}

TEST(PythonLineTable, DecodesEachFormOf311) {
  const auto t = testing::inner_line_table();
  const std::vector<std::pair<std::int64_t, std::optional<int>>> want = {
      {-1, 10}, {0, 10}, {1, 10}, {2, 11}, {3, std::nullopt}, {4, 14}, {5, 12}, {6, std::nullopt}};
  for (const auto& [index, line] : want) {
    const auto got = line_of(t, 10, index);
    ASSERT_TRUE(got) << index;
    EXPECT_EQ(*got, line) << "code unit " << index;
  }
}

TEST(PythonLineTable, RefusesMalformedTables) {
  EXPECT_FALSE(line_of(std::string("\x01", 1), 1, 0));      // no first-byte bit
  EXPECT_FALSE(line_of(std::string("\xf0\x46", 2), 1, 0));  // a varint cut short
  EXPECT_FALSE(line_of(std::string("\xd1\x01", 2), 1, 5));  // columns cut short
  EXPECT_TRUE(line_of("", 7, 0));                           // empty: no line
}

TEST(PythonLayouts, TheKnownVersionsParseAndAnUnknownOneIsSaid) {
  for (const int minor : {11, 12, 13}) EXPECT_TRUE(layout_for(3, minor)) << minor;
  const auto none = layout_for(3, 8);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message(), "Python 3.8: no layout known (knowledge/python_layouts.toml)");
  const auto empty = layout_for(std::vector<PythonLayout>{}, 3, 11);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message(),
            "Python 3.11: no layout known (knowledge/python_layouts.toml)");
}

TEST(PythonLayouts, RefusesATableWithoutAField) {
  const auto bad = parse_layouts("[[python]]\nversion = \"3.11\"\nlinetable = \"3.11\"\n", "t");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("frame_owner_cstack"), std::string::npos);
  EXPECT_FALSE(parse_layouts("[[python]]\nversion = \"three\"\n", "t"));
  EXPECT_FALSE(parse_layouts("not toml [", "t"));
}

TEST(PythonFrameWalker, ReadsTheThreadAndItsFramesInnermostFirst) {
  const auto l = layout311();
  auto img = python311_image(l);
  StackReader reader(img.memory, l, PythonImage::kRuntime, PythonImage::kCodeType);
  const auto threads = reader.read();
  ASSERT_TRUE(threads) << threads.error().message();
  ASSERT_EQ(threads->size(), 1u);
  const auto& t = (*threads)[0];
  EXPECT_EQ(t.native_id, 4242u);
  EXPECT_EQ(t.thread_id, 0x7f00u);
  ASSERT_EQ(t.frames.size(), 2u);
  EXPECT_EQ(t.frames[0], (Frame{"inner", "/x/\u00e9.py", 11}));
  EXPECT_EQ(t.frames[1], (Frame{"Model.outer", "/x/\u0444\u0430\u0439\u043b.py", 20}));
  // A second read comes from the cache of code objects and says the same.
  const auto again = reader.read();
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)[0].frames, t.frames);
}

TEST(PythonFrameWalker, AnInstructionWithoutALineIsLineZero) {
  const auto l = layout311();
  auto img = python311_image(l, 3);
  StackReader reader(img.memory, l, PythonImage::kRuntime);
  const auto threads = reader.read();
  ASSERT_TRUE(threads);
  EXPECT_EQ((*threads)[0].frames[0].line, 0);
}

TEST(PythonFrameWalker, InconsistentMemoryFailsTheSample) {
  const auto l = layout311();
  {  // a frame whose previous is itself
    auto img = python311_image(l);
    std::string f;
    set_at<std::uint64_t>(f, l.frame_code, 0x5000);
    set_at<std::uint64_t>(f, l.frame_previous, 0x4000);
    f.resize(96);
    img.memory.add(0x4000, f);
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    const auto r = reader.read();
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("loop"), std::string::npos) << r.error().message();
  }
  {  // a thread list that loops
    auto img = python311_image(l);
    std::string tstate;
    set_at<std::uint64_t>(tstate, l.tstate_next, 0x3000);
    set_at<std::uint64_t>(tstate, l.tstate_cframe.value_or(0), 0);
    tstate.resize(256);
    img.memory.add(0x3000, tstate);
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    EXPECT_FALSE(reader.read());
  }
  {  // a code object that is not one
    auto img = python311_image(l);
    StackReader reader(img.memory, l, PythonImage::kRuntime, 0xbad);
    EXPECT_FALSE(reader.read());
  }
  {  // memory that is not there
    PythonImage img;
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    EXPECT_FALSE(reader.read());
  }
  {  // a string that is not compact
    auto img = python311_image(l);
    std::string s(l.unicode_compact_data, '\0');
    set_at<std::int64_t>(s, l.unicode_length, 3);
    img.memory.add(0x6000, s);
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    EXPECT_FALSE(reader.read());
  }
}

TEST(PythonFrameWalker, ALongStringIsCut) {
  const auto l = layout311();
  auto img = python311_image(l);
  img.memory.add(0x6000, testing::python_str(l, std::u32string(5000, U'x'), 1));
  StackReader reader(img.memory, l, PythonImage::kRuntime);
  const auto r = reader.read();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].frames[0].function.size(), kMaxStringChars);
}

// 3.13's _Py_DebugOffsets as the interpreter writes them, from the layout (offsets in
// Include/internal/pycore_runtime.h, v3.13.0).
std::string debug_offsets(const PythonLayout& l, std::uint64_t free_threaded = 0) {
  std::string b(kDebugOffsetsRead, '\0');
  std::memcpy(b.data(), "xdebugpy", 8);
  set_at<std::uint64_t>(b, 16, free_threaded);
  set_at<std::uint64_t>(b, 40, l.runtime_interpreters_head);
  set_at<std::uint64_t>(b, 64, l.interp_next);
  set_at<std::uint64_t>(b, 72, l.interp_threads_head);
  set_at<std::uint64_t>(b, 168, l.tstate_next);
  set_at<std::uint64_t>(b, 184, l.tstate_current_frame.value_or(0));
  set_at<std::uint64_t>(b, 192, l.tstate_thread_id);
  set_at<std::uint64_t>(b, 200, l.tstate_native_thread_id);
  set_at<std::uint64_t>(b, 232, l.frame_previous);
  set_at<std::uint64_t>(b, 240, l.frame_code);
  set_at<std::uint64_t>(b, 248, l.frame_instr);
  set_at<std::uint64_t>(b, 264, l.frame_owner);
  set_at<std::uint64_t>(b, 280, l.code_filename);
  set_at<std::uint64_t>(b, 288, l.code_name);
  set_at<std::uint64_t>(b, 296, l.code_qualname);
  set_at<std::uint64_t>(b, 304, l.code_linetable);
  set_at<std::uint64_t>(b, 312, l.code_firstlineno);
  set_at<std::uint64_t>(b, 344, l.code_adaptive);
  return b;
}

TEST(PythonDebugOffsets, TheLayoutOf313IsCheckedAgainstTheInterpretersOwn) {
  const auto l = layout_for(3, 13);
  ASSERT_TRUE(l);
  MemoryImage fits;
  fits.add(0x1000, debug_offsets(*l));
  const auto ok = check_debug_offsets(fits, 0x1000, *l);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_TRUE(*ok);

  auto other = debug_offsets(*l);
  set_at<std::uint64_t>(other, 192, l->tstate_thread_id + 8);
  MemoryImage differs;
  differs.add(0x1000, other);
  const auto bad = check_debug_offsets(differs, 0x1000, *l);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("tstate_thread_id"), std::string::npos)
      << bad.error().message();

  MemoryImage threaded;
  threaded.add(0x1000, debug_offsets(*l, 1));
  const auto ft = check_debug_offsets(threaded, 0x1000, *l);
  ASSERT_FALSE(ft);
  EXPECT_NE(ft.error().message().find("free-threaded"), std::string::npos);

  MemoryImage none;
  none.add(0x1000, std::string(kDebugOffsetsRead, '\0'));
  const auto absent = check_debug_offsets(none, 0x1000, *l);
  ASSERT_TRUE(absent);
  EXPECT_FALSE(*absent);
}

}  // namespace
}  // namespace dltune::pystack

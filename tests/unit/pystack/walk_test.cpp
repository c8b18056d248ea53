// The frame walker and the line tables (3.9's co_lnotab, 3.10's PEP 626 table, 3.11's location
// table) on memory images (tests/unit/pystack/image.hpp).
#include <gtest/gtest.h>

#include <cstring>

#include "pystack/debug_offsets.hpp"
#include "pystack/layout.hpp"
#include "pystack/walk.hpp"
#include "unit/pystack/image.hpp"

namespace dltune::pystack::walk_test {
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
  // A no-column entry whose line delta is a varint of 64 bits (found by the fuzzer: it
  // overflowed the addition).
  EXPECT_FALSE(line_of("\xe8" + std::string(10, '\x7f') + "\x3f", 1, 0));
}

TEST(PythonLayouts, TheKnownVersionsParseAndAnUnknownOneIsSaid) {
  for (const int minor : {9, 10, 11, 12, 13}) EXPECT_TRUE(layout_for(3, minor)) << minor;
  const auto none = layout_for(3, 8);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message(), "Python 3.8: no layout known (knowledge/python_layouts.toml)");
  const auto empty = layout_for(std::vector<PythonLayout>{}, 3, 11);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message(),
            "Python 3.11: no layout known (knowledge/python_layouts.toml)");
}

TEST(PythonLineTable, Decodes39Lnotab) {
  const auto t = testing::lnotab39_table();
  const std::vector<std::pair<std::int64_t, int>> want = {{-1, 10}, {0, 10},   {3, 10},   {4, 11},
                                                          {7, 11},  {8, 14},   {9, 14},   {10, 12},
                                                          {15, 12}, {16, 212}, {400, 212}};
  for (const auto& [offset, line] : want) {
    const auto got = line_of_lnotab(t, 10, offset);
    ASSERT_TRUE(got) << offset;
    EXPECT_EQ(*got, std::optional<int>(line)) << "byte " << offset;
  }
  // CPython ignores an odd last byte; an empty table is the first line throughout.
  EXPECT_EQ(*line_of_lnotab(std::string("\x02\x05\x07", 3), 1, 4), std::optional<int>(6));
  EXPECT_EQ(*line_of_lnotab("", 7, 100), std::optional<int>(7));
}

TEST(PythonLineTable, Decodes310Pep626) {
  const auto t = testing::pep626_table();
  const std::vector<std::pair<std::int64_t, std::optional<int>>> want = {
      {-1, 10},          {0, 10}, {3, 10}, {4, 11},  {5, 11},  {6, std::nullopt},
      {7, std::nullopt}, {8, 14}, {9, 14}, {10, 12}, {13, 12}, {14, std::nullopt}};
  for (const auto& [offset, line] : want) {
    const auto got = line_of_pep626(t, 10, offset);
    ASSERT_TRUE(got) << offset;
    EXPECT_EQ(*got, line) << "byte " << offset;
  }
  EXPECT_FALSE(line_of_pep626(std::string("\x02\x01\x02", 3), 1, 0));  // odd length
  const auto empty = line_of_pep626("", 7, 0);
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, std::nullopt);
}

TEST(PythonLayouts, TheOlderLayoutsWalkFrameObjects) {
  const auto l39 = layout_for(3, 9), l310 = layout_for(3, 10), l311 = layout_for(3, 11);
  ASSERT_TRUE(l39 && l310 && l311);
  EXPECT_TRUE(l39->frame_objects());
  EXPECT_TRUE(l310->frame_objects());
  EXPECT_FALSE(l311->frame_objects());
  EXPECT_EQ(l39->linetable, LineTable::lnotab);
  EXPECT_EQ(l310->linetable, LineTable::pep626);
  EXPECT_EQ(l311->linetable, LineTable::locations);
  EXPECT_EQ(l39->frame_lasti_unit, 1u);
  EXPECT_EQ(l310->frame_lasti_unit, 2u);
  EXPECT_EQ(l310->code_qualname, l310->code_name);  // no co_qualname before 3.11
}

TEST(PythonLayouts, RefusesAFrameObjectTableThatMixesTheWalks) {
  const std::string base = R"([[python]]
version = "3.10"
linetable = "3.10"
frame_owner_cstack = -1
runtime_interpreters_head = 32
runtime_main_thread = 72
interp_next = 0
interp_threads_head = 8
tstate_next = 8
tstate_thread_id = 176
tstate_frame = 24
pthread_tid = 720
frame_code = 32
frame_previous = 24
frame_lasti = 96
code_filename = 104
code_name = 112
code_linetable = 120
code_firstlineno = 40
unicode_state = 32
unicode_length = 16
unicode_kind_shift = 2
unicode_compact_shift = 5
unicode_ascii_shift = 6
unicode_ascii_data = 48
unicode_compact_data = 72
bytes_size = 16
bytes_data = 32
)";
  const auto ok = parse_layouts(base + "frame_lasti_unit = 2\n", "t");
  ASSERT_TRUE(ok) << ok.error().message();
  const auto no_unit = parse_layouts(base, "t");
  ASSERT_FALSE(no_unit);
  EXPECT_NE(no_unit.error().message().find("frame_lasti_unit"), std::string::npos);
  const auto bad_unit = parse_layouts(base + "frame_lasti_unit = 3\n", "t");
  EXPECT_FALSE(bad_unit);
  const auto mixed = parse_layouts(base + "frame_lasti_unit = 2\nframe_instr = 56\n", "t");
  ASSERT_FALSE(mixed);
  EXPECT_NE(mixed.error().message().find("frame_instr"), std::string::npos);
  const auto two_ways =
      parse_layouts(base + "frame_lasti_unit = 2\ntstate_current_frame = 72\n", "t");
  EXPECT_FALSE(two_ways);
  std::string new_format = base + "frame_lasti_unit = 2\n";
  new_format.replace(new_format.find("linetable = \"3.10\""), 18, "linetable = \"3.11\"");
  EXPECT_FALSE(parse_layouts(new_format, "t"));
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

// A target whose 200 code objects share one line table of 1 MiB: the cache keeps at most its
// bytes, not a copy of the table per code object, and every frame still reads.
TEST(PythonFrameWalker, TheCacheOfCodeObjectsIsBoundedInBytes) {
  const auto l = layout311();
  auto img = python311_image(l);
  constexpr std::uint64_t kFrames = 200, kTable = 0x10000000;
  img.memory.add(kTable, testing::python_bytes(l, std::string(kMaxLineTable, '\xf8')));
  for (std::uint64_t i = 0; i < kFrames; ++i) {
    const std::uint64_t code = 0x1000000 + i * 0x1000;
    std::string f;
    set_at<std::uint64_t>(f, l.frame_code, code);
    set_at<std::uint64_t>(f, l.frame_previous, i + 1 < kFrames ? 0x100000 + (i + 1) * 0x100 : 0);
    set_at<std::uint64_t>(f, l.frame_instr, code + l.code_adaptive - 2);  // before its first
    set_at<std::uint8_t>(f, l.frame_owner, 0);
    f.resize(96);
    img.memory.add(i == 0 ? 0x4000 : 0x100000 + i * 0x100, f);
    std::string c;
    set_at<std::uint64_t>(c, 8, PythonImage::kCodeType);
    set_at<std::uint64_t>(c, l.code_qualname, 0x6000);
    set_at<std::uint64_t>(c, l.code_name, 0x6000);
    set_at<std::uint64_t>(c, l.code_filename, 0x6100);
    set_at<std::uint64_t>(c, l.code_linetable, kTable);
    set_at<std::int32_t>(c, l.code_firstlineno, static_cast<std::int32_t>(i + 1));
    c.resize(l.code_adaptive + 32);
    img.memory.add(code, c);
  }
  StackReader reader(img.memory, l, PythonImage::kRuntime, PythonImage::kCodeType);
  for (int sample = 0; sample < 2; ++sample) {
    const auto r = reader.read();
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ((*r)[0].frames.size(), kFrames);
    EXPECT_EQ((*r)[0].frames[0], (Frame{"inner", "/x/\u00e9.py", 1}));
    EXPECT_EQ((*r)[0].frames[kFrames - 1].line, static_cast<int>(kFrames));
    EXPECT_LE(reader.cached_bytes(), kMaxCodeCacheBytes);
    EXPECT_GT(reader.cached_bytes(), 0u);  // 200 MiB of tables without the bound
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

class PythonFrameObjectWalker : public ::testing::TestWithParam<int> {
 protected:
  PythonLayout layout() const {
    auto l = layout_for(3, GetParam());
    EXPECT_TRUE(l) << l.error().message();
    return *l;
  }
};

TEST_P(PythonFrameObjectWalker, ReadsTheThreadAndItsFramesInnermostFirst) {
  const auto l = layout();
  auto img = testing::frame_object_image(l);
  StackReader reader(img.memory, l, PythonImage::kRuntime, PythonImage::kCodeType);
  const auto threads = reader.read();
  ASSERT_TRUE(threads) << threads.error().message();
  ASSERT_EQ(threads->size(), 1u);
  const auto& t = (*threads)[0];
  EXPECT_EQ(t.thread_id, 0x8000u);
  EXPECT_EQ(t.native_id, 4242u);  // from the thread descriptor at pthread_tid
  ASSERT_EQ(t.frames.size(), 2u);
  EXPECT_EQ(t.frames[0], (Frame{"inner", "/x/\u00e9.py", 11}));
  EXPECT_EQ(t.frames[1], (Frame{"outer", "/x/\u0444\u0430\u0439\u043b.py", 20}));
  const auto again = reader.read();
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)[0].frames, t.frames);
}

TEST_P(PythonFrameObjectWalker, TheLineComesFromFLastiInItsUnit) {
  const auto l = layout();
  // Byte 8: line 14 in both tables (f_lasti 8 in 3.9, 4 code units in 3.10).
  auto img = testing::frame_object_image(l, 8);
  StackReader reader(img.memory, l, PythonImage::kRuntime);
  const auto threads = reader.read();
  ASSERT_TRUE(threads) << threads.error().message();
  EXPECT_EQ((*threads)[0].frames[0].line, 14);
  // Byte 6: no line in 3.10's table; 3.9's says 11.
  auto other = testing::frame_object_image(l, 6);
  StackReader reader2(other.memory, l, PythonImage::kRuntime);
  const auto r = reader2.read();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].frames[0].line, l.linetable == LineTable::lnotab ? 11 : 0);
}

TEST_P(PythonFrameObjectWalker, AThreadDescriptorWithoutATidSaysNone) {
  const auto l = layout();
  auto img = testing::frame_object_image(l);
  img.memory.add(0x8000, std::string(l.pthread_tid.value_or(0) + 4, '\0'));  // TID 0
  StackReader reader(img.memory, l, PythonImage::kRuntime);
  auto r = reader.read();
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)[0].native_id, 0u);
  EXPECT_EQ((*r)[0].frames.size(), 2u);

  auto unmapped = testing::frame_object_image(l);
  std::string tstate;
  set_at<std::uint64_t>(tstate, l.tstate_thread_id, 0xdead0000);  // nothing there
  set_at<std::uint64_t>(tstate, l.tstate_frame.value_or(0), 0x4000);
  unmapped.memory.add(0x3000, tstate);
  StackReader reader2(unmapped.memory, l, PythonImage::kRuntime);
  r = reader2.read();
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)[0].native_id, 0u);
  EXPECT_EQ((*r)[0].frames.size(), 2u);
}

TEST_P(PythonFrameObjectWalker, InconsistentMemoryFailsTheSample) {
  const auto l = layout();
  {  // f_back is the frame itself
    auto img = testing::frame_object_image(l);
    std::string f;
    set_at<std::uint64_t>(f, l.frame_code, 0x5000);
    set_at<std::uint64_t>(f, l.frame_previous, 0x4000);
    f.resize(128);
    img.memory.add(0x4000, f);
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    const auto r = reader.read();
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("loop"), std::string::npos) << r.error().message();
  }
  {  // a frame without code
    auto img = testing::frame_object_image(l);
    img.memory.add(0x4100, std::string(128, '\0'));
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    EXPECT_FALSE(reader.read());
  }
  {  // f_back into memory that is not there
    auto img = testing::frame_object_image(l);
    std::string f;
    set_at<std::uint64_t>(f, l.frame_code, 0x5400);
    set_at<std::uint64_t>(f, l.frame_previous, 0xdead0000);
    f.resize(128);
    img.memory.add(0x4100, f);
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    EXPECT_FALSE(reader.read());
  }
  {  // a code object that is not one
    auto img = testing::frame_object_image(l);
    StackReader reader(img.memory, l, PythonImage::kRuntime, 0xbad);
    EXPECT_FALSE(reader.read());
  }
  {  // a 3.10 table of odd length fails; 3.9's co_lnotab ignores the last byte, as CPython does
    auto img = testing::frame_object_image(l);
    img.memory.add(0x7000, testing::python_bytes(l, "\x04\x01\x04"));
    StackReader reader(img.memory, l, PythonImage::kRuntime);
    EXPECT_EQ(static_cast<bool>(reader.read()), l.linetable == LineTable::lnotab);
  }
}

TEST_P(PythonFrameObjectWalker, ADeepStackIsCut) {
  const auto l = layout();
  auto img = testing::frame_object_image(l);
  // 300 frames of `outer` below `inner`.
  for (std::uint64_t i = 0; i < 300; ++i) {
    std::string f;
    set_at<std::uint64_t>(f, l.frame_code, 0x5400);
    set_at<std::uint64_t>(f, l.frame_previous, i + 1 < 300 ? 0x100000 + (i + 1) * 0x100 : 0);
    set_at<std::int32_t>(f, l.frame_lasti, -1);
    f.resize(128);
    img.memory.add(0x100000 + i * 0x100, f);
  }
  std::string inner;
  set_at<std::uint64_t>(inner, l.frame_code, 0x5000);
  set_at<std::uint64_t>(inner, l.frame_previous, 0x100000);
  inner.resize(128);
  img.memory.add(0x4000, inner);
  StackReader reader(img.memory, l, PythonImage::kRuntime);
  const auto r = reader.read();
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)[0].frames.size(), kMaxFrames);
  EXPECT_TRUE((*r)[0].truncated);
}

INSTANTIATE_TEST_SUITE_P(Python39And310, PythonFrameObjectWalker, ::testing::Values(9, 10),
                         [](const auto& info) { return "3_" + std::to_string(info.param); });

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
}  // namespace dltune::pystack::walk_test

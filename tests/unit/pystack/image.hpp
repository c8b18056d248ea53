#pragma once
// A memory image of a small CPython interpreter (one thread, two frames), laid out with the
// layout from knowledge/python_layouts.toml: 3.11+'s _PyInterpreterFrames (python311_image) or
// 3.9/3.10's PyFrameObjects (frame_object_image). What the frame walker's unit tests read, and
// the fuzz target's seeds (tests/fuzz/fuzz_pystack.cpp, which decodes `encoded`).
#include <cstdint>
#include <cstring>
#include <string>

#include "pystack/layout.hpp"
#include "pystack/memory.hpp"

namespace dltune::testing {

struct PythonImage {
  pystack::MemoryImage memory;
  std::string encoded;  // each range as: address (8 bytes), length (2 bytes), the bytes
  static constexpr std::uint64_t kRuntime = 0x1000;
  static constexpr std::uint64_t kCodeType = 0xc0de00;

  void put(std::uint64_t address, const std::string& bytes) {
    memory.add(address, bytes);
    const auto length = static_cast<std::uint16_t>(bytes.size());
    encoded.append(reinterpret_cast<const char*>(&address), 8);
    encoded.append(reinterpret_cast<const char*>(&length), 2);
    encoded += bytes;
  }
};

template <class T>
void set_at(std::string& block, std::uint64_t offset, T value) {
  if (block.size() < offset + sizeof(T)) block.resize(offset + sizeof(T), '\0');
  std::memcpy(block.data() + offset, &value, sizeof(T));
}

// A compact str of `kind` (1, 2, 4) holding `chars` (code points), ASCII when all are < 128.
inline std::string python_str(const pystack::PythonLayout& l, const std::u32string& chars,
                              unsigned kind) {
  bool ascii = kind == 1;
  for (const auto c : chars) ascii = ascii && c < 128;
  std::string s(ascii ? l.unicode_ascii_data : l.unicode_compact_data, '\0');
  set_at<std::int64_t>(s, l.unicode_length, static_cast<std::int64_t>(chars.size()));
  std::uint32_t state = kind << l.unicode_kind_shift | 1u << l.unicode_compact_shift;
  if (ascii) state |= 1u << l.unicode_ascii_shift;
  set_at<std::uint32_t>(s, l.unicode_state, state);
  for (const auto c : chars) {
    if (kind == 1) s += static_cast<char>(c);
    if (kind == 2) s.append(reinterpret_cast<const char*>(&c), 2);  // little-endian
    if (kind == 4) s.append(reinterpret_cast<const char*>(&c), 4);
  }
  return s;
}

inline std::string python_bytes(const pystack::PythonLayout& l, const std::string& data) {
  std::string b(l.bytes_data, '\0');
  set_at<std::int64_t>(b, l.bytes_size, static_cast<std::int64_t>(data.size()));
  return b + data;
}

// The location table of `inner` (first line 10), in 3.11's format (Objects/locations.md):
// code units 0-1 line 10 (one-line form, delta 0), 2 line 11 (one-line form, delta 1),
// 3 none (code 15), 4 line 14 (long form, delta +3), 5 line 12 (no-column form, delta -2).
inline std::string inner_line_table() {
  return std::string(
      "\xd1\x01\x02"          // code 10, 2 units
      "\xd8\x01\x02"          // code 11, 1 unit
      "\xf8"                  // code 15, 1 unit
      "\xf0\x06\x00\x01\x02"  // code 14, 1 unit: +3, end 0, columns
      "\xe8\x05",             // code 13, 1 unit: -2
      14);
}

// runtime -> interpreter -> thread (tid 4242) -> cframe -> frame `inner` at code unit
// `inner_index` -> frame `outer` before its first instruction.
inline PythonImage python311_image(const pystack::PythonLayout& l, std::int64_t inner_index = 2) {
  PythonImage img;
  std::string runtime;
  set_at<std::uint64_t>(runtime, l.runtime_interpreters_head, 0x2000);
  img.put(PythonImage::kRuntime, runtime);
  std::string interp;
  set_at<std::uint64_t>(interp, l.interp_next, 0);
  set_at<std::uint64_t>(interp, l.interp_threads_head, 0x3000);
  img.put(0x2000, interp);
  std::string tstate;
  set_at<std::uint64_t>(tstate, l.tstate_next, 0);
  set_at<std::uint64_t>(tstate, l.tstate_thread_id, 0x7f00);
  set_at<std::uint64_t>(tstate, l.tstate_native_thread_id, 4242);
  if (l.tstate_current_frame) {
    set_at<std::uint64_t>(tstate, *l.tstate_current_frame, 0x4000);
  } else {
    set_at<std::uint64_t>(tstate, l.tstate_cframe.value_or(0), 0x3800);
    std::string cframe;
    set_at<std::uint64_t>(cframe, l.cframe_current_frame.value_or(0), 0x4000);
    cframe.resize(64);
    img.put(0x3800, cframe);
  }
  img.put(0x3000, tstate);
  const auto frame = [&](std::uint64_t code, std::uint64_t previous, std::int64_t index) {
    std::string f;
    set_at<std::uint64_t>(f, l.frame_code, code);
    set_at<std::uint64_t>(f, l.frame_previous, previous);
    set_at<std::uint64_t>(f, l.frame_instr,
                          code + l.code_adaptive + static_cast<std::uint64_t>(index * 2));
    set_at<std::uint8_t>(f, l.frame_owner, 0);
    f.resize(96);
    return f;
  };
  img.put(0x4000, frame(0x5000, 0x4100, inner_index));
  img.put(0x4100, frame(0x5400, 0, -1));
  const auto code = [&](std::uint64_t name, std::uint64_t file, std::uint64_t table, int first) {
    std::string c;
    set_at<std::uint64_t>(c, 8, PythonImage::kCodeType);
    set_at<std::uint64_t>(c, l.code_qualname, name);
    set_at<std::uint64_t>(c, l.code_name, name);
    set_at<std::uint64_t>(c, l.code_filename, file);
    set_at<std::uint64_t>(c, l.code_linetable, table);
    set_at<std::int32_t>(c, l.code_firstlineno, first);
    c.resize(l.code_adaptive + 32);
    return c;
  };
  img.put(0x5000, code(0x6000, 0x6100, 0x7000, 10));
  img.put(0x5400, code(0x6200, 0x6300, 0x7100, 20));
  img.put(0x6000, python_str(l, U"inner", 1));
  img.put(0x6100, python_str(l, U"/x/\u00e9.py", 1));
  img.put(0x6200, python_str(l, U"Model.outer", 1));
  img.put(0x6300, python_str(l, U"/x/\u0444\u0430\u0439\u043b.py", 2));
  img.put(0x7000, python_bytes(l, inner_line_table()));
  img.put(0x7100, python_bytes(l, ""));
  return img;
}

// `inner`'s line table in 3.9's co_lnotab format (CPython 3.9's Objects/lnotab_notes.txt), first
// line 10: (byte offset increment, line increment) pairs. Bytes 0-3 line 10, 4-7 line 11, 8-9
// line 14, 10-15 line 12 (a negative increment), from 16 on line 212 (+200 split as 127 + 73,
// the second pair adding no bytes).
inline std::string lnotab39_table() {
  return std::string("\x04\x01\x04\x03\x02\xfe\x06\x7f\x00\x49", 10);
}

// `inner`'s line table in 3.10's format (PEP 626; CPython 3.10's Objects/lnotab_notes.txt), first
// line 10: (byte range length, line delta) pairs, -128 (0x80) for no line. Bytes 0-3 line 10,
// 4-5 line 11, 6-7 none, a range of length 0 that moves the line by 2, 8-9 line 14, 10-13
// line 12; from 14 on none (past the table).
inline std::string pep626_table() {
  return std::string("\x04\x00\x02\x01\x02\x80\x00\x02\x02\x01\x04\xfe", 12);
}

// The same interpreter for 3.9/3.10 (l.frame_objects()): runtime (main_thread 0x7e00) ->
// interpreter -> thread (pthread_t 0x8000, whose descriptor holds TID 4242) -> PyFrameObject
// `inner` at byte `inner_offset` of its code -> `outer` before its first instruction
// (f_lasti -1). co_name is the function: there is no co_qualname.
inline PythonImage frame_object_image(const pystack::PythonLayout& l,
                                      std::int64_t inner_offset = 4) {
  PythonImage img;
  std::string runtime;
  set_at<std::uint64_t>(runtime, l.runtime_interpreters_head, 0x2000);
  set_at<std::uint64_t>(runtime, l.runtime_main_thread.value_or(0), 0x7e00);
  img.put(PythonImage::kRuntime, runtime);
  std::string interp;
  set_at<std::uint64_t>(interp, l.interp_next, 0);
  set_at<std::uint64_t>(interp, l.interp_threads_head, 0x3000);
  img.put(0x2000, interp);
  std::string tstate;
  set_at<std::uint64_t>(tstate, l.tstate_next, 0);
  set_at<std::uint64_t>(tstate, l.tstate_thread_id, 0x8000);
  set_at<std::uint64_t>(tstate, l.tstate_frame.value_or(0), 0x4000);
  img.put(0x3000, tstate);
  std::string descriptor;
  set_at<std::int32_t>(descriptor, l.pthread_tid.value_or(0), 4242);
  img.put(0x8000, descriptor);
  const auto frame = [&](std::uint64_t code, std::uint64_t previous, std::int32_t lasti) {
    std::string f;
    set_at<std::uint64_t>(f, l.frame_code, code);
    set_at<std::uint64_t>(f, l.frame_previous, previous);
    set_at<std::int32_t>(f, l.frame_lasti, lasti);
    f.resize(128);
    return f;
  };
  const auto unit = static_cast<std::int64_t>(l.frame_lasti_unit == 0 ? 1 : l.frame_lasti_unit);
  img.put(0x4000, frame(0x5000, 0x4100, static_cast<std::int32_t>(inner_offset / unit)));
  img.put(0x4100, frame(0x5400, 0, -1));
  const auto code = [&](std::uint64_t name, std::uint64_t file, std::uint64_t table, int first) {
    std::string c;
    set_at<std::uint64_t>(c, 8, PythonImage::kCodeType);
    set_at<std::uint64_t>(c, l.code_name, name);
    set_at<std::uint64_t>(c, l.code_filename, file);
    set_at<std::uint64_t>(c, l.code_linetable, table);
    set_at<std::int32_t>(c, l.code_firstlineno, first);
    c.resize(192);
    return c;
  };
  img.put(0x5000, code(0x6000, 0x6100, 0x7000, 10));
  img.put(0x5400, code(0x6200, 0x6300, 0x7100, 20));
  img.put(0x6000, python_str(l, U"inner", 1));
  img.put(0x6100, python_str(l, U"/x/\u00e9.py", 1));
  img.put(0x6200, python_str(l, U"outer", 1));
  img.put(0x6300, python_str(l, U"/x/\u0444\u0430\u0439\u043b.py", 2));
  img.put(0x7000, python_bytes(l, l.linetable == pystack::LineTable::lnotab ? lnotab39_table()
                                                                            : pep626_table()));
  img.put(0x7100, python_bytes(l, ""));
  return img;
}

}  // namespace dltune::testing

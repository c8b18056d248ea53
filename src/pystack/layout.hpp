#pragma once
// The layout of one CPython version's structures, as data (knowledge/python_layouts.toml).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::pystack {

// The format of a code object's line table (CPython's Objects/lnotab_notes.txt of 3.9 and 3.10,
// Objects/locations.md of 3.11+).
enum class LineTable {
  lnotab,     // 3.9 co_lnotab: (byte offset delta, line delta) pairs
  pep626,     // 3.10 co_linetable: (byte offset delta, line delta or -128 for none) pairs
  locations,  // 3.11+ co_linetable: the location table
};

// Byte offsets into CPython's structures (the TOML file says which field each one is).
struct PythonLayout {
  int major = 3, minor = 0;
  LineTable linetable = LineTable::locations;
  std::uint64_t runtime_interpreters_head = 0;
  std::uint64_t interp_next = 0, interp_threads_head = 0;
  std::uint64_t tstate_next = 0, tstate_thread_id = 0, tstate_native_thread_id = 0;
  std::optional<std::uint64_t> tstate_cframe, cframe_current_frame, tstate_current_frame;
  // 3.9 and 3.10: PyThreadState.frame, the current PyFrameObject (frame_previous is its f_back;
  // frame_instr, frame_owner and code_adaptive are not used). Its f_lasti counts
  // frame_lasti_unit bytes; pthread_tid is where glibc's thread descriptor, at thread_id, keeps
  // the kernel's TID (PyThreadState has no native_thread_id before 3.11); runtime_main_thread
  // is _PyRuntimeState.main_thread (the main thread's pthread_t).
  std::optional<std::uint64_t> tstate_frame;
  std::uint64_t frame_lasti = 0;
  unsigned frame_lasti_unit = 0;
  std::optional<std::uint64_t> pthread_tid, runtime_main_thread;
  std::uint64_t frame_code = 0, frame_previous = 0, frame_instr = 0, frame_owner = 0;
  int frame_owner_cstack = -1;
  // code_qualname: co_qualname; before 3.11 (none), the offset of co_name.
  std::uint64_t code_filename = 0, code_name = 0, code_qualname = 0, code_linetable = 0;
  std::uint64_t code_firstlineno = 0, code_adaptive = 0;
  std::uint64_t unicode_state = 0, unicode_length = 0;
  unsigned unicode_kind_shift = 0, unicode_compact_shift = 0, unicode_ascii_shift = 0;
  std::uint64_t unicode_ascii_data = 0, unicode_compact_data = 0;
  std::uint64_t bytes_size = 0, bytes_data = 0;

  // Whether frames are PyFrameObjects (3.9, 3.10) rather than _PyInterpreterFrames.
  [[nodiscard]] bool frame_objects() const { return tstate_frame.has_value(); }
};

// Every table of a layouts file; an error names the table and the field that is wrong.
[[nodiscard]] Result<std::vector<PythonLayout>> parse_layouts(std::string_view text,
                                                              const std::string& where);

// The layout of Python major.minor from the compiled-in knowledge/python_layouts.toml, or the
// error "Python 3.X: no layout known (knowledge/python_layouts.toml)".
[[nodiscard]] Result<PythonLayout> layout_for(int major, int minor);
// The same from the layouts given (tests).
[[nodiscard]] Result<PythonLayout> layout_for(const std::vector<PythonLayout>& layouts, int major,
                                              int minor);

}  // namespace dltune::pystack

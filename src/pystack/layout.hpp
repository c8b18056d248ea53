#pragma once
// The layout of one CPython version's structures, as data (knowledge/python_layouts.toml).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::pystack {

// Byte offsets into CPython's structures (the TOML file says which field each one is).
struct PythonLayout {
  int major = 3, minor = 0;
  std::uint64_t runtime_interpreters_head = 0;
  std::uint64_t interp_next = 0, interp_threads_head = 0;
  std::uint64_t tstate_next = 0, tstate_thread_id = 0, tstate_native_thread_id = 0;
  std::optional<std::uint64_t> tstate_cframe, cframe_current_frame, tstate_current_frame;
  std::uint64_t frame_code = 0, frame_previous = 0, frame_instr = 0, frame_owner = 0;
  int frame_owner_cstack = -1;
  std::uint64_t code_filename = 0, code_name = 0, code_qualname = 0, code_linetable = 0;
  std::uint64_t code_firstlineno = 0, code_adaptive = 0;
  std::uint64_t unicode_state = 0, unicode_length = 0;
  unsigned unicode_kind_shift = 0, unicode_compact_shift = 0, unicode_ascii_shift = 0;
  std::uint64_t unicode_ascii_data = 0, unicode_compact_data = 0;
  std::uint64_t bytes_size = 0, bytes_data = 0;
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
